/**
 * English glosses of Chinese text, so that a tool described only in Chinese matches an English request
 * ("获取指定公历时间的黄历信息" also reads "Gregorian calendar ... Chinese divination almanac").
 * The dictionary is CC-CEDICT (CC BY-SA 4.0), as a table of each word's gloss (cedict/glosses.tsv.gz,
 * its source and licence in cedict/README.md) generated from the `cc-cedict` package by
 * scripts/data/cedict-glosses.ts (`npm run data:cedict-glosses`), which also says how a gloss is made.
 *
 * The table (193,000 words, 2.5 MB compressed) takes about 20 MB of heap and a few hundred ms to read;
 * it is read in the server's process, in slices (other callbacks run every `SLICE_MS`), once per call
 * that has new Chinese text, and dropped when the call returns (the package's own data took ~400 MB of
 * heap: it was read in a child process that peaked at ~650 MiB of RSS).
 * `glossesFor` glosses the texts a set of glosses lacks (async) and returns those of the texts asked
 * about; a build reads its glosses from what it is given ('' for a text that has none: the index stays
 * right, only blind to that text's meaning), and an index keeps its glosses, so that the next build
 * (which takes it as `previous`) glosses only new text.
 *
 * Han runs are segmented by forward maximum matching against the dictionary (the longest entry, up to
 * `MAX_WORD` characters; an unknown character is skipped), and each word contributes its gloss. Function
 * words (the `stopword` package's Chinese list: 的, 在, 为...) contribute nothing: their senses as content
 * words ("a taxi", "to be alive") would make every Chinese description match unrelated requests.
 */
import { readFile } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { zho } from 'stopword';

const HAN = /\p{Script=Han}/u;
const HAN_RUN = /\p{Script=Han}+/gu;
const STOP_WORDS: ReadonlySet<string> = new Set(zho);
/** Longest word looked up, in characters (the table holds no longer one). */
export const MAX_WORD = 6;
/** The gloss table: `word\tgloss\n` lines, gzip (scripts/data/cedict-glosses.ts writes it). */
export const GLOSS_TABLE_FILE = new URL('./cedict/glosses.tsv.gz', import.meta.url);
const TAB = 0x09;
const LINE_FEED = 0x0a;
/** Longest stretch of reading the table or glossing before other callbacks run, ms. */
const SLICE_MS = 10;

/** English glosses of texts, by text: an input of a build (search/engine/tool-index.ts), never module state. */
export type Glosses = ReadonlyMap<string, string>;

/** No text glossed: Chinese text indexes as its bigrams alone. */
export const NO_GLOSSES: Glosses = new Map();

/** True when `text` holds Han characters. */
export function hasHan(text: string): boolean {
  return HAN.test(text);
}

/** The English glosses of `text` in `glosses` ('' when it has no Han text or none was made for it). */
export function glossChinese(text: string, glosses: Glosses): string {
  return hasHan(text) ? (glosses.get(text) ?? '') : '';
}

/**
 * The glosses of the Han texts of `texts`: those `known` holds taken from it, the others made from the
 * gloss table (not read when nothing is missing). Only these texts' glosses: a catalogue's old text does
 * not pile up version after version. Rejects when the table cannot be read (missing, not gzip).
 */
export async function glossesFor(texts: Iterable<string>, known: Glosses = NO_GLOSSES): Promise<Glosses> {
  const han = [...new Set([...texts].filter(hasHan))];
  const missing = han.filter((t) => !known.has(t));
  const out = new Map<string, string>();
  for (const text of han) {
    const gloss = known.get(text);
    if (gloss !== undefined) out.set(text, gloss);
  }
  if (missing.length === 0) return out;
  const pause = slicer();
  const words = await readGlossTable(pause);
  for (const text of missing) {
    out.set(text, glossText(text, words));
    await pause();
  }
  return out;
}

/**
 * The gloss table, word -> gloss ('' for a word all of whose senses are cross-references). Each word and
 * gloss is its own string, decoded from the file's bytes: a slice of one decoded text would keep that
 * whole text (12 MB) alive for as long as an index keeps a gloss that is one word's.
 */
export async function readGlossTable(pause: () => Promise<void> | undefined = slicer()): Promise<ReadonlyMap<string, string>> {
  const bytes = await promisify(gunzip)(await readFile(GLOSS_TABLE_FILE));
  const words = new Map<string, string>();
  for (let at = 0; at < bytes.length; ) {
    const tab = bytes.indexOf(TAB, at);
    const end = tab < 0 ? -1 : bytes.indexOf(LINE_FEED, tab);
    if (end < 0) throw new Error(`gloss table ${GLOSS_TABLE_FILE.pathname}: line without a tab or a line break at byte ${at}`);
    words.set(bytes.toString('utf8', at, tab), bytes.toString('utf8', tab + 1, end));
    at = end + 1;
    if (words.size % 1024 === 0) await pause();
  }
  return words;
}

/** Forward maximum matching: the longest dictionary word at each place; an unknown character is skipped. */
function glossText(text: string, words: ReadonlyMap<string, string>): string {
  const out: string[] = [];
  for (const m of text.matchAll(HAN_RUN)) {
    const chars = Array.from(m[0]);
    let i = 0;
    while (i < chars.length) {
      let found = 0;
      for (let len = Math.min(MAX_WORD, chars.length - i); len >= 1; len -= 1) {
        const word = chars.slice(i, i + len).join('');
        const g = words.get(word);
        if (g !== undefined) {
          if (g !== '' && !STOP_WORDS.has(word)) out.push(g);
          found = len;
          break;
        }
      }
      i += Math.max(1, found);
    }
  }
  return out.join(' ');
}

/** A pause for a loop: a macrotask (other callbacks run) once `SLICE_MS` passed since the last, else nothing. */
function slicer(): () => Promise<void> | undefined {
  let sliceStart = performance.now();
  return () => {
    if (performance.now() - sliceStart < SLICE_MS) return undefined;
    return nextTurn().then(() => {
      sliceStart = performance.now();
    });
  };
}
