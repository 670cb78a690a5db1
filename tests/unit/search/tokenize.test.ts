/**
 * The ASCII fast paths of the tokeniser and of the tool-mention filter read text character by character;
 * the general path uses Unicode regular expressions. Both must split any ASCII text the same way: a
 * text is compared with itself plus one non-ASCII word, which sends it down the general path. The word
 * scanner both paths use is held to the Unicode regular expressions it stands for.
 */
import { describe, expect, it } from 'vitest';

import { splitWords, wordSpans } from '../../../search/analysis/tokenize.ts';
import { withoutToolMentions } from '../../../search/analysis/tool-fields.ts';
import { TermIndexBuilder } from '../../../search/engine/term-index-builder.ts';

/** Deterministic pseudo-random ASCII texts, dense in the characters the word rules treat specially. */
function texts(count: number): string[] {
  const alphabet = "aZb0Y9._-'& \n/:(";
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  return Array.from({ length: count }, () => Array.from({ length: 1 + next(14) }, () => alphabet[next(alphabet.length)]).join(''));
}

const SAMPLES = [...texts(20_000), 'getHTTPResponse2 entity_id list-components a.b', "it's x_ _y a..b a.-b 'q' e.g. v1.2.3", 'P&L S&P 500 a=1&b=2 x&&y &z', ''];
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

/** Pseudo-random texts over letters of several scripts and cases, an astral capital, combining marks,
 *  non-Latin digits, an emoji, and every joiner. */
function unicodeTexts(count: number): string[] {
  const alphabet = ['a', 'Z', '0', 'é', 'É', 'ß', 'Ω', 'ω', '中', '٣', '\u0301', '𝐀', '😀', '_', '-', '.', "'", '’', '&', ' ', '/'];
  let seed = 11;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  return Array.from({ length: count }, () => Array.from({ length: 1 + next(12) }, () => alphabet[next(alphabet.length)]).join(''));
}

describe('wordSpans', () => {
  // An ampersand joins ASCII letters only (`P&L`, not `1&b`).
  const WORD = /[\p{L}\p{N}]+(?:(?:[._\-'’]|(?<=[A-Za-z])&(?=[A-Za-z]))[\p{L}\p{N}]+)*/gu;
  const IDENTIFIER = /[\p{L}\p{N}]+(?:(?:[._-]|(?<=[A-Za-z])&(?=[A-Za-z]))[\p{L}\p{N}]+)*/gu;
  const COMPOUND = /[._&-]|\p{Ll}\p{Lu}/u;
  const spansOf = (text: string, apostrophes: boolean, compoundOnly: boolean): string[] => {
    const spans: number[] = [];
    wordSpans(text, spans, apostrophes, compoundOnly);
    return Array.from({ length: spans.length / 2 }, (_, k) => text.slice(spans[2 * k], spans[2 * k + 1]));
  };
  const samples = [...unicodeTexts(20_000), 'getStories ÉtéÉté x’y 𝐀b a𝐀 ab_', ''];

  it('finds the words the Unicode word pattern matches', () => {
    const differing = samples.filter((text) => JSON.stringify(spansOf(text, true, false)) !== JSON.stringify([...text.matchAll(WORD)].map((m) => m[0])));
    expect(differing).toEqual([]);
  });

  it('finds the compound identifiers (joined, or lower case then capital) the identifier pattern matches', () => {
    const reference = (text: string): string[] => [...text.matchAll(IDENTIFIER)].map((m) => m[0]).filter((w) => COMPOUND.test(w));
    const differing = samples.filter((text) => JSON.stringify(spansOf(text, false, true)) !== JSON.stringify(reference(text)));
    expect(differing).toEqual([]);
  });
});

describe('letters joined by an ampersand', () => {
  it('are one compound, kept whole beside their letters (a single letter alone carries nothing)', () => {
    expect(splitWords('unrealized P&L, S&P 500')).toEqual(['unrealized', 'p', 'l', 'p&l', 's', 'p', 's&p', '500']);
    expect(splitWords('a=1&b=2 Tom & Jerry x&')).toEqual(['a', '1', 'b', '2', 'tom', 'jerry', 'x']);
  });
});

describe('CJK runs', () => {
  it('become overlapping bigrams of characters, astral ones included, and a lone character stays whole', () => {
    expect(splitWords('必应搜索')).toEqual(['必应', '应搜', '搜索']);
    expect(splitWords('𠀀𠀁中')).toEqual(['𠀀𠀁', '𠀁中']);
    expect(splitWords('a 中 b')).toEqual(['a', '中', 'b']);
    expect(splitWords('检索API接口')).toEqual(['检索', 'api', '接口']);
  });
});

describe('the index builder', () => {
  it('counts the words of ASCII text (its one-pass reader) as of the same text read by the general path', () => {
    const builder = new TermIndexBuilder(2 * SAMPLES.length, 1, (term) => term, { k: 1.2, b: 0.7, d: 0.5 });
    // An em dash is no word: appended, it only sends the text down the general (Unicode) path.
    const differing = SAMPLES.filter((text) => builder.analyse([text]).join() !== builder.analyse([`${text} —`]).join());
    expect(differing).toEqual([]);
  });
});
