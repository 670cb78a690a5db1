/**
 * Read or write intent. A request to see, list or check something should find the read-only tool before
 * a state-changing one with similar words ("show my open orders": list_orders, not place_order), and a
 * request to place, create or delete something the reverse.
 *
 * The cue words are learnt from the catalogue itself, never from queries: a tool's annotations say which
 * tools change state (MCP `ToolAnnotations`: `readOnlyHint` true is a read; `readOnlyHint` false or
 * `destructiveHint` true a write; spec 2026-07-28, schema `ToolAnnotations`), and its lead words say how
 * its authors phrase that: the first word of its own name (`place_order`), of its title ("Place an
 * order"), of its description ("Submit a buy or sell order"), and its one-word search keywords in their
 * base form ("buy", not "swaps"). A word is a cue for a class when at least `CUE_SHARE` of the annotated
 * tools led by it are of that class; the everyday verbs of an operation whose own verb is a cue
 * (operation-verbs.ts: "rename" and "swap" where "update" leads writes) are cues of that class too. A
 * catalogue without annotations has no cues, and intent changes nothing.
 */
import { OPERATION_VERBS } from './operation-verbs.ts';
import { normaliseTerm, REQUEST_WORDS, STOP_WORDS } from './terms.ts';
import { splitWords } from './tokenize.ts';
import type { SearchableTool } from './tool-fields.ts';

/** Per tool: 1 read-only, 2 state-changing, 0 not annotated. */
export type ToolClasses = Uint8Array;
export const READ = 1;
export const WRITE = 2;

/** The learnt cue words (normalised terms) of each class. */
export type IntentCues = { read: ReadonlySet<string>; write: ReadonlySet<string> };

const CUE_SHARE = 0.75;
/** Questions ask to see something: a request phrased as one (a trailing ?, or led by a question word
 *  of English grammar) reads. */
const QUESTION = /\?\s*$|^\s*(?:what|which|who|whose|how|when|where|is|are|do|does|did|can i see)\b/i;

/** The class of a tool from its annotations. */
export function toolClass(tool: SearchableTool): number {
  const a = tool.annotations;
  if (a === undefined || a === null || typeof a !== 'object') return 0;
  if (a.readOnlyHint === true) return READ;
  if (a.readOnlyHint === false || a.destructiveHint === true) return WRITE;
  return 0;
}

/** An inflected word: an -ing or -ed form or a plural (`buying`, `connected`, `swaps`), told by its ending
 *  and a stem other than itself (not `need`, `string`, `process`). */
const INFLECTED = /^[a-z]{2,}(?:ing|ed|[^s]s)$/;
const inflected = (word: string, term: string): boolean => term !== word && INFLECTED.test(word);

const plain = (w: string): boolean => !/[._-]/.test(w);

/** The first term of `text` that is not a compound, reading a long text's opening words first: no word
 *  spans a space, so those are the text's own first words (a description is read whole only when its
 *  opening holds compounds alone). */
function firstPlainWord(text: string): string | undefined {
  const cut = text.length > 200 ? text.lastIndexOf(' ', 200) : -1;
  return (cut > 0 ? splitWords(text.slice(0, cut)).find(plain) : undefined) ?? splitWords(text).find(plain);
}

/** Lead words of a tool: the first term of its own name, title and description, and its one-word keywords. */
function leadTerms(tool: SearchableTool, stem: boolean): string[] {
  const own = tool.upstreamName ?? tool.name;
  // One-word keywords only ("buy", "unsubscribe"): a phrase's first word is as often a noun ("shares
  // held"); and in their base form: "swaps", "fills", "holdings" name things, not what the tool does.
  const keywords = Array.isArray(tool.keywords) ? tool.keywords.filter((k) => typeof k === 'string' && !/\s/.test(k.trim())) : [];
  const baseForm = (word: string): string | null => {
    const term = normaliseTerm(word, stem);
    return term !== null && inflected(word, term) ? null : term;
  };
  const firsts = [own, tool.title, tool.description].map((text) => (typeof text === 'string' ? firstPlainWord(text) : undefined));
  const terms = firsts.filter((w): w is string => w !== undefined).map((w) => normaliseTerm(w, stem));
  const keywordTerms = keywords
    .map(firstPlainWord)
    .filter((w): w is string => w !== undefined)
    .map(baseForm);
  return [...new Set([...terms, ...keywordTerms].filter((w): w is string => w !== null))];
}

/** Classes of `tools` and the cue words learnt from them (see the module docstring). */
export function learnIntent(tools: readonly SearchableTool[], stem: boolean): { classes: ToolClasses; cues: IntentCues } {
  const classes = new Uint8Array(tools.length);
  const counts = new Map<string, [number, number]>();
  tools.forEach((tool, id) => {
    const c = toolClass(tool);
    classes[id] = c;
    if (c === 0) return;
    for (const term of leadTerms(tool, stem)) {
      const n = counts.get(term) ?? [0, 0];
      n[c - 1] += 1;
      counts.set(term, n);
    }
  });
  const read = new Set<string>();
  const write = new Set<string>();
  for (const [term, [r, w]] of counts) {
    if (r >= CUE_SHARE * (r + w)) read.add(term);
    else if (w >= CUE_SHARE * (r + w)) write.add(term);
  }
  // The everyday verbs of an operation (operation-verbs.ts: "rename", "swap" an update) ask for what it
  // does: where the operation's own verb is a cue here, they are cues of its class too.
  const learnt = new Set([...read, ...write]);
  for (const [operation, verbs] of Object.entries(OPERATION_VERBS)) {
    const head = normaliseTerm(operation, stem);
    const into = head === null ? undefined : write.has(head) ? write : read.has(head) ? read : undefined;
    if (into === undefined) continue;
    for (const verb of verbs) {
      const term = normaliseTerm(verb, stem);
      if (term !== null && !learnt.has(term)) into.add(term);
    }
  }
  return { classes, cues: { read, write } };
}

/**
 * The intent of `query`: READ when it is a question; else the class of its leading cue word (before any
 * other content word, and in its base form: "trading accounts" asks to trade nothing); else 0 (no cue:
 * the caller may still prefer reads, as the safer default).
 * Every word counts, stop and request words too ("show", "list" are request words for ranking).
 */
export function queryIntent(query: string, cues: IntentCues, stem: boolean): { intent: number; explicit: boolean } {
  if (cues.read.size === 0 && cues.write.size === 0) return { intent: 0, explicit: false };
  // A question asks to see, whatever its words ("which strategies are active").
  if (QUESTION.test(query)) return { intent: READ, explicit: true };
  // The request's leading verb says what it wants ("buy 10 shares", "please show my orders"): the first
  // word that is a cue or a content word decides; a cue further on is usually a noun ("saved runs").
  for (const word of splitWords(query)) {
    const term = normaliseTerm(word, stem);
    if (term === null) continue;
    // A participle, gerund or plural leading a request is most often part of a noun phrase ("buying
    // power", "trading accounts", "connected providers", "trades booked"): a request's verb comes in its
    // base form ("buy", "trade", "connect"), so an inflected cue is a content word, not the request's verb.
    const base = !inflected(word, term);
    if (base && cues.write.has(term)) return { intent: WRITE, explicit: true };
    if (base && cues.read.has(term)) return { intent: READ, explicit: true };
    if (!STOP_WORDS.has(word) && !REQUEST_WORDS.has(word)) break;
  }
  return { intent: 0, explicit: false };
}
