/**
 * The ASCII fast paths of the tokeniser and of the tool-mention filter read text character by character;
 * the general path uses Unicode regular expressions. Both must split any ASCII text the same way: a
 * text is compared with itself plus one non-ASCII word, which sends it down the general path.
 */
import { describe, expect, it } from 'vitest';

import { splitWords } from '../../../search/tokenize.ts';
import { withoutToolMentions } from '../../../search/tool-fields.ts';

/** Deterministic pseudo-random ASCII texts, dense in the characters the word rules treat specially. */
function texts(count: number): string[] {
  const alphabet = "aZb0Y9._-' \n/:(";
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  return Array.from({ length: count }, () => Array.from({ length: 1 + next(14) }, () => alphabet[next(alphabet.length)]).join(''));
}

const SAMPLES = [...texts(20_000), 'getHTTPResponse2 entity_id list-components a.b', "it's x_ _y a..b a.-b 'q' e.g. v1.2.3", ''];
const NON_ASCII = ' é';

/** Each sample whose two answers differ, with both: one assertion over all samples (20,000 `expect`s cost seconds). */
function differing<T>(fast: (text: string) => T, general: (text: string) => T): { text: string; fast: T; general: T }[] {
  const out: { text: string; fast: T; general: T }[] = [];
  for (const text of SAMPLES) {
    const [a, b] = [fast(text), general(text)];
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ text, fast: a, general: b });
  }
  return out;
}

describe('ASCII text', () => {
  it('splits into the same terms as the general (Unicode) path', () => {
    expect(differing(splitWords, (text) => splitWords(text + NON_ASCII).slice(0, -1))).toEqual([]);
  });

  it('loses the same tool mentions as the general path', () => {
    const names = new Set(['a_b', 'aZ', 'b.a', 'Z-b', 'ab', 'a_b_a', 'b0', 'aZb', 'Yb_a', 'baZ9']);
    for (const self of ['a_b', 'none']) {
      expect(
        differing(
          (text) => withoutToolMentions(text, names, self) + NON_ASCII,
          (text) => withoutToolMentions(text + NON_ASCII, names, self),
        ),
        self,
      ).toEqual([]);
    }
  });
});
