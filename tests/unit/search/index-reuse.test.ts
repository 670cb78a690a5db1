/**
 * An index built with `previous` (search/index.ts `BuildOptions`) takes over the tools it already read
 * and ranks exactly as an index built from scratch: same names, same scores, for every shared query,
 * whatever changed in between (a description; a tool added, then removed, whose name other tools'
 * descriptions mention, so that their text loses, then regains, the mention; tools removed; a tool
 * renamed), with the default tuning and with prefix and fuzzy expansion (whose matches depend on the
 * order terms were first met). The async build: index-reuse-async.test.ts.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type TuningOverrides } from '../../../search/index.ts';
import { hasHan } from '../../../search/analysis/gloss.ts';
import { answers, base, MENTIONED, versions } from './index-reuse-catalog.ts';

describe('building an index from the previous one', () => {
  it('has tools whose descriptions mention the name of the tool added later, and tools described in Chinese', () => {
    expect(base.filter((t) => (t.description ?? '').includes(MENTIONED)).length).toBeGreaterThan(1);
    expect(base.filter((t) => hasHan(t.description ?? '')).length).toBeGreaterThan(50);
  });

  for (const [label, tuning] of [
    ['default tuning', {}],
    ['prefix and fuzzy expansion', { prefixMinLength: 4, fuzzy: 0.2, fuzzyMaxTerms: 6 }],
  ] as [string, TuningOverrides][]) {
    // Several builds per case (and the semantic arm in each): slow on a busy machine.
    it(`ranks as a build from scratch after each change (${label})`, { timeout: 120_000 }, () => {
      let previous = buildToolIndex(base, tuning);
      for (const [change, tools] of versions()) {
        const reused = buildToolIndex(tools, tuning, { previous });
        expect(answers(reused), change).toEqual(answers(buildToolIndex(tools, tuning)));
        previous = reused;
      }
    });
  }

  it('reads every tool again when the tuning differs from the previous build', () => {
    const previous = buildToolIndex(base, { stem: false });
    const tools = versions()[0][1];
    expect(answers(buildToolIndex(tools, {}, { previous }))).toEqual(answers(buildToolIndex(tools)));
  });
});
