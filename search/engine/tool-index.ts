/**
 * Tool search: an index over a catalogue's tool definitions (search/engine/term-index.ts: minisearch's scoring
 * and radix tree, our own postings), built once per catalogue version and shared by every caller. Pure:
 * tool definitions in, ranked names out (no HTTP, Koa or MCP SDK).
 *
 * Callers see only what their `filter` predicate admits (scope filtering is a filter on the shared index,
 * never a rebuild): a hidden tool is never returned, never named by `nearestNames`, and never lends its
 * score to a visible one (server context, fusion and tiers are computed over visible tools). Corpus
 * statistics (term rarity, field lengths) are the shared catalogue's.
 *
 * Ranking: BM25+ per field, fields combined dismax-style with boosts; Porter-stemmed terms, stop words
 * dropped from queries; server context; a fusion of per-clause rankings for long multi-step requests; the
 * semantic arm (search/semantic/lsa.ts) fused by a convex combination of scores; read/write intent; a decay
 * of a server's siblings in the top k; and a query that is exactly a parameter name lists the tools
 * accepting it first.
 * search/tuning.ts holds the measured settings, `npm run bench:search` the figures.
 */
import { LRUCache } from 'lru-cache';

import { EmptyQueryError } from '../errors.ts';
import { glossesFor, NO_GLOSSES, type Glosses } from '../analysis/gloss.ts';
import { learnIntent, queryIntent, READ, WRITE } from '../analysis/intent.ts';
import { clauses } from '../analysis/clauses.ts';
import { answersCurrent, identifiedThings, isLookup } from '../analysis/lookups.ts';
import { namesSomething } from '../analysis/names.ts';
import { OPERATION_VERBS, operationSynonyms, undoingSide } from '../analysis/operation-verbs.ts';
import { splitPaths } from '../analysis/paths.ts';
import { normaliseTerm, queryTerms, REQUEST_WORDS, STOP_WORDS } from '../analysis/terms.ts';
import { identifierParts, splitWords } from '../analysis/tokenize.ts';
import { respelledMatches } from './respell.ts';
import { schemaText, summaryOf, toolFields, type SearchableTool, type WeightedField } from '../analysis/tool-fields.ts';
import { lsaSteps, nearestVectors, type DenseVectors, type LsaModel } from '../semantic/lsa.ts';
import { projectWordVectors, wordArmSteps, type WeightedTexts, type WordArm, type WordVectors } from '../semantic/word-vectors.ts';
import { tuningWith, type SearchTuning, type TuningOverrides } from '../tuning.ts';
import type { BuildOptions, SearchHit, SearchOptions, SearchPage, ToolIndex } from '../types.ts';
import { Fusion } from './fusion.ts';
import { misspellingsOf, nearestNames } from './nearest-names.ts';
import { coordinationFactors, ListScorer, type ListScoring, type QueryTerm } from './query-scores.ts';
import { parameterIndex, topK, withParameterTier } from './score-adjustments.ts';
import { ServerChooser } from './server-choice.ts';
import { ScoreSums, topScore, type Scores } from './scores.ts';
import type { Expansion, FieldRun, TermIndex, TermMatches } from './term-index.ts';
import { COMBINED, documentIndexer, indexedFields, type Documents } from './tool-documents.ts';

type Indexed = { tool: SearchableTool; category: string };
/** Lookup steps' roles (search/analysis/lookups.ts): per tool, the stemmed words of what its required
 *  identifiers identify; the lookup tools, and each one's words with their weights. */
type LookupRoles = { things: string[][]; lookups: number[]; selves: number[]; words: Map<number, Map<string, number>> };
/** One semantic arm's list for a query: tools by similarity, best first, above `floor`; `weight` in the fusion. */
type SemanticList = { ids: number[]; scores: number[]; weight: number; floor: number };

const DEFAULT_LIMIT = 10;
/** The everyday verbs of the operations, as written (base forms). */
const EVERYDAY_VERBS: ReadonlySet<string> = new Set(Object.values(OPERATION_VERBS).flat());

/** A request's first word that is neither a stop word nor a request word ("please show my orders": show), as typed. */
function firstWord(text: string): string | undefined {
  return splitWords(text).find((w) => !STOP_WORDS.has(w) && !REQUEST_WORDS.has(w));
}
/** Fewer tools than this share too few words for co-occurrence to mean anything: lexical only. */
const MIN_SEMANTIC_TOOLS = 16;
const NEAREST_LIMIT = 5;
/** One identifier: words joined by `_`, `-` or `.` (`list_ordres`), or camelCase (`listOrdrs`). */
const IDENTIFIER = /^(?:[\p{L}\p{N}]+(?:[_.-][\p{L}\p{N}]+)+|\p{Ll}+(?:\p{Lu}[\p{Ll}\p{N}]*)+)$/u;
/** Bounds on the work one query may ask for: a request longer than this adds nothing a model needs,
 *  and an unbounded one (a pasted document) would cost a search per clause. */
const MAX_QUERY_TERMS = 64;
const MAX_CLAUSES = 16;

/** `filterKey`s whose filter answers an index keeps (one byte per tool each). */
const FILTER_KEYS = 64;
/** Longest stretch an async build works before letting other callbacks run, ms. */
const BUILD_SLICE_MS = 10;

/** Per index, the documents a later build can take over (tool-documents.ts); held by the newest only. */
const documentsOf = new WeakMap<ToolIndex, Documents>();

/**
 * Builds the index of `tools`. Names may repeat across upstreams: tools are keyed by position (upstream +
 * name), and each hit carries the name and upstream the caller passed. `tuning` overrides the measured
 * defaults (the bench uses it to compare variants). Synchronous: about 75-90 ms per 1,000 tools read (semantic arm on, 10,000 tools) on the
 * bench machine (`npm run bench:search-scale`), about 5 ms per 1,000 taken over from `options.previous`;
 * a server should use `buildToolIndexAsync`.
 */
export function buildToolIndex(catalogue: SearchableTool[], tuning: TuningOverrides = {}, options: BuildOptions = {}): ToolIndex {
  const t = tuningWith(tuning);
  const { tools, positions } = canonical(catalogue);
  const glosses = t.gloss ? (options.glosses ?? options.previous?.glosses ?? NO_GLOSSES) : NO_GLOSSES;
  const indexer = documentIndexer(tools, t, glosses, takeDocuments(options.previous));
  const params = tools.map((_, id) => indexer.add(id));
  const termIndex = indexer.builder.finish();
  const arms = completed(semanticSteps(termIndex, tools, t, options.wordVectors));
  return withDocuments(indexOver(tools, positions, termIndex, params, t, arms, glosses), indexer.documents());
}

/** `buildToolIndex`, letting other callbacks run every `BUILD_SLICE_MS` so serving goes on meanwhile. */
export async function buildToolIndexAsync(catalogue: SearchableTool[], tuning: TuningOverrides = {}, options: BuildOptions = {}): Promise<ToolIndex> {
  // Not in the caller's turn: a build started where a catalogue was just built (an upstream's answer)
  // would add its first slice to that work. A timer: from an I/O callback an immediate runs before any I/O.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const t = tuningWith(tuning);
  const { tools, positions } = canonical(catalogue);
  // Without glosses the index is still right, only blind to Chinese text's meaning.
  const known = options.glosses ?? options.previous?.glosses ?? NO_GLOSSES;
  const glosses = t.gloss
    ? await glossesFor(glossTexts(tools), known).catch((error: unknown) => {
        options.onGlossFailure?.(error);
        return known;
      })
    : NO_GLOSSES;
  const pause = slicer();
  const indexer = documentIndexer(tools, t, glosses, takeDocuments(options.previous));
  const params: string[][] = [];
  for (let id = 0; id < tools.length; id += 1) {
    params.push(indexer.add(id));
    await pause();
  }
  const termIndex = indexer.builder.finish();
  await pause();
  // The semantic arms in slices too: at 10,000 tools they are seconds of work on a busy machine.
  const steps = semanticSteps(termIndex, tools, t, options.wordVectors);
  let arms: SemanticArms;
  for (let next = steps.next(); ; next = steps.next()) {
    if (next.done) {
      arms = next.value;
      break;
    }
    await pause();
  }
  await pause();
  return withDocuments(indexOver(tools, positions, termIndex, params, t, arms, glosses), indexer.documents());
}

/** A pause for an async build's loops: a macrotask (other callbacks run) once `BUILD_SLICE_MS` passed since the last, else nothing. */
function slicer(): () => Promise<void> | undefined {
  let sliceStart = performance.now();
  return () => {
    if (performance.now() - sliceStart < BUILD_SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        sliceStart = performance.now();
        resolve();
      }),
    );
  };
}

/**
 * The catalogue in the index's own order, by upstream, then name, then (for tools that share both) their
 * text: every piece of the build (term numbers, the LSA's sample and its random test matrix, tie-breaks)
 * follows this order, so the same tools in any order, and any restart, give the same index. `positions[i]`
 * is where the catalogue's tool `i` went.
 */
function canonical(catalogue: SearchableTool[]): { tools: SearchableTool[]; positions: Int32Array } {
  const keyOf = (tool: SearchableTool): string => `${tool.upstream ?? ''}\u0000${tool.name}`;
  const keys = catalogue.map(keyOf);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i += 1) sorted = keys[i - 1] < keys[i];
  if (sorted) return { tools: catalogue, positions: Int32Array.from(catalogue, (_, i) => i) };
  const text = new Map<number, string>();
  const textOf = (i: number): string => {
    let t = text.get(i);
    if (t === undefined) text.set(i, (t = JSON.stringify(catalogue[i])));
    return t;
  };
  const order = Array.from(catalogue, (_, i) => i).sort((a, b) => {
    if (keys[a] !== keys[b]) return keys[a] < keys[b] ? -1 : 1;
    const ta = textOf(a);
    const tb = textOf(b);
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  });
  const positions = new Int32Array(catalogue.length);
  order.forEach((from, to) => {
    positions[from] = to;
  });
  return { tools: order.map((i) => catalogue[i]), positions };
}

function completed<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** The in-process semantic arms of one index: the LSA of the catalogue, the word vectors of general English. */
type SemanticArms = { lsa?: LsaModel; words?: WordArm };

/**
 * The semantic arms' build as steps: the LSA (search/semantic/lsa.ts `lsaSteps`; not when it is off or the
 * catalogue too small for co-occurrence to mean anything), then the word arm (search/semantic/word-vectors.ts;
 * not when its weight is 0 or the vectors file is absent). Their cost is the build's, not a first search's.
 */
function* semanticSteps(
  termIndex: TermIndex,
  tools: readonly SearchableTool[],
  t: SearchTuning,
  wordVectors?: WordVectors,
): Generator<void, SemanticArms, void> {
  const lsa =
    t.semantic === 'lsa' && tools.length >= MIN_SEMANTIC_TOOLS
      ? yield* lsaSteps(termIndex, lsaFieldWeights(t), {
          dims: t.semanticDims,
          sample: t.semanticSample,
          seed: t.semanticSeed,
          powerIterations: t.semanticPowerIterations,
          oversample: t.semanticOversample,
          unitTerms: t.semanticUnitTerms,
        })
      : undefined;
  const vectors = t.wordWeight > 0 ? (wordVectors ?? projectWordVectors()) : undefined;
  const names = t.stripToolMentions ? new Set(tools.map((tool) => tool.name)) : undefined;
  const words = vectors
    ? yield* wordArmSteps(
        vectors,
        tools.map((tool) => wordTexts(tool, t, names)),
        tools.length >= MIN_SEMANTIC_TOOLS,
      )
    : undefined;
  return { lsa, words };
}

/** A tool's texts for the word arm, with their weights (`wordFields`: its own texts, and its server's name
 *  and its category, words about the server rather than the tool); mentions of the other tools of `names`
 *  left out, as the lexical fields leave them out. */
function wordTexts(tool: SearchableTool, t: SearchTuning, names?: ReadonlySet<string>): WeightedTexts {
  const fields = toolFields(tool, names, undefined, undefined, t.mentionClauses);
  const w = t.wordFields;
  const texts: [string, number][] = [
    [fields.name, w.name],
    [fields.title, w.title],
    [summaryOf(fields.description), w.summary],
    [fields.keywords, w.keywords],
    [fields.params, w.params],
    [fields.upstream, w.upstream],
    [fields.category, w.category],
    [fields.output.split('\n', 1)[0], w.output],
    [fields.description, w.description],
  ];
  return texts.filter(([text, weight]) => weight > 0 && text !== '');
}

function takeDocuments(index: ToolIndex | undefined): Documents | undefined {
  const documents = index && documentsOf.get(index);
  if (index) documentsOf.delete(index);
  return documents;
}

function withDocuments(index: ToolIndex, documents: Documents): ToolIndex {
  documentsOf.set(index, documents);
  return index;
}

function indexOver(
  tools: SearchableTool[],
  positions: Int32Array,
  termIndex: TermIndex,
  params: string[][],
  t: SearchTuning,
  { lsa, words }: SemanticArms,
  glosses: Glosses,
): ToolIndex {
  const entries: Indexed[] = tools.map((tool) => ({ tool, category: (tool.category ?? '').toLowerCase() }));
  const { ids: upstreamIds, count: upstreamCount } = numberedUpstreams(tools);
  const acceptedBy = parameterIndex(params);
  const fieldNumber = new Map<string, number>(indexedFields(t).map((f, i) => [f, i]));
  // A field weighted 0 is left out of the search (minisearch, whose scoring the index keeps, reads 0 as 1).
  const searchedFields: (WeightedField | typeof COMBINED)[] =
    t.fields === 'bm25f' ? [COMBINED] : (indexedFields(t) as WeightedField[]).filter((f) => t.boosts[f] > 0);
  // 'dismax' asks each field on its own and keeps the best field (plus a tie-breaking share of the others).
  const runs: FieldRun[] = (t.fields === 'dismax' ? searchedFields.map((f) => [f]) : [searchedFields]).map((fields) => ({
    fields: fields.map((f) => fieldNumber.get(f) as number),
    boosts: fields.map((f) => (f === COMBINED ? 1 : t.boosts[f])),
  }));
  const allFields = [...new Set(runs.flatMap((run) => run.fields))];
  const scoring: ListScoring = {
    runs,
    tieBreaker: t.tieBreaker,
    coordination: coordinationFactors(t.coordination, MAX_QUERY_TERMS),
    context: { upstreamOf: upstreamIds, upstreamCount, weight: t.upstreamContext },
  };
  // Per-tool working arrays, made on the first search: a build that is never searched pays nothing.
  let scorer: ListScorer | undefined;
  let fusion: Fusion | undefined;
  let chooser: ServerChooser | undefined;
  /** 1 for the tools of a search's lexical list while it is fused with the semantic lists, else 0. */
  let inLexical: Uint8Array | undefined;
  let fusedSums: ScoreSums | undefined;
  /** Each tool's place in name-then-upstream order (tools equal in both share one), made on the first search:
   *  the ties of a search's scores are broken by an integer comparison, not two string ones (a catalogue that
   *  repeats tools ties often: 5% of a search at 10,000 tools went to comparing names). */
  let nameOrder: Int32Array | undefined;
  const byName = (a: number, b: number): number => nameOrder![a] - nameOrder![b];
  const everyTool = new Uint8Array(tools.length).fill(1);
  const allIds = Array.from({ length: tools.length }, (_, i) => i);
  const intent = learnIntent(tools, t.stem);
  const filterCache = new LRUCache<string, Uint8Array>({ max: FILTER_KEYS });
  /** Tools each cached filter admits (same keys as `filterCache`). */
  const filterCounts = new LRUCache<string, number>({ max: FILTER_KEYS });
  let lastMatched = 0;
  const operations = t.operationVerbs === 'off' ? undefined : operationSynonyms((term) => termIndex.entry(term) !== undefined, t.stem, t.stemFold);
  const reordered = new WeakMap<DenseVectors, DenseVectors>();
  let lookupRoles: LookupRoles | undefined;
  const respellings = new LRUCache<string, TermMatches>({ max: 1_000 });
  /** The UNDOING side of each tool's name's first part (place_order: start; delete_webhook: end), for withIntent. */
  const nameSides = entries.map((e) => undoingSide(identifierParts(e.tool.upstreamName ?? e.tool.name)[0]?.toLowerCase()));
  // A name word as written -> the tools whose name holds it (`strategies` -> list_strategies): a query reads its words' lists only.
  const nameForms = new Map<string, number[]>();
  if (t.nameFormFactor !== 1)
    entries.forEach((e, id) => {
      for (const word of new Set(identifierParts(e.tool.upstreamName ?? e.tool.name).map((w) => w.toLowerCase()))) {
        const ids = nameForms.get(word);
        if (ids) ids.push(id);
        else nameForms.set(word, [id]);
      }
    });
  // Names in index order, for the misspelling tier (nameSpellings).
  const toolNames = entries.map((e) => e.tool.name);

  /**
   * Visibility for one search (`visible[id]` 1 or 0; read-only). The filter's answers come from the
   * `filterKey` cache, else it is asked about the tools the query can match (`candidates`) and `also`,
   * each once, in catalogue order (asked in the middle of scoring, the same calls cost several times
   * more: each evicts the other's data from the caches).
   */
  function visibility(opts: SearchOptions, candidates: TermMatches[], also: readonly number[]): Uint8Array {
    const { filter, filterKey } = opts;
    const byFilter = filter === undefined ? everyTool : filterKey !== undefined ? filterAnswers(filterKey, filter) : undefined;
    if (byFilter !== undefined && opts.category === undefined && opts.upstream === undefined) return byFilter;
    const category = opts.category?.toLowerCase();
    const visible = new Uint8Array(entries.length);
    for (const matches of candidates) termIndex.mark(matches, allFields, visible);
    for (const id of also) visible[id] = 1;
    for (let id = 0; id < entries.length; id += 1) {
      if (visible[id] === 0) continue;
      const e = entries[id];
      const ok =
        (category === undefined || e.category === category) &&
        (opts.upstream === undefined || e.tool.upstream === opts.upstream) &&
        (byFilter !== undefined ? byFilter[id] === 1 : filter === undefined || filter(e.tool.name, e.tool.upstream));
      if (!ok) visible[id] = 0;
    }
    return visible;
  }

  /** `filter`'s answer for every tool (1 admitted), asked once per `filterKey` while the key stays cached. */
  function filterAnswers(key: string, filter: NonNullable<SearchOptions['filter']>): Uint8Array {
    let answers = filterCache.get(key);
    if (answers === undefined) {
      answers = new Uint8Array(entries.length);
      for (let id = 0; id < entries.length; id += 1) answers[id] = filter(entries[id].tool.name, entries[id].tool.upstream) ? 1 : 0;
      filterCache.set(key, answers);
    }
    return answers;
  }

  /**
   * Tools the caller may use that the search selects: those `opts.filter` admits (counted once per
   * `filterKey`; without a key, asked of every tool), of `opts.category` and `opts.upstream` when given.
   */
  function admitted(opts: SearchOptions): number {
    const { filter, filterKey } = opts;
    const category = opts.category?.toLowerCase();
    const selects = (id: number): boolean =>
      (category === undefined || entries[id].category === category) && (opts.upstream === undefined || entries[id].tool.upstream === opts.upstream);
    if (category !== undefined || opts.upstream !== undefined) {
      const answers = filter !== undefined && filterKey !== undefined ? filterAnswers(filterKey, filter) : undefined;
      let n = 0;
      for (let id = 0; id < entries.length; id += 1) {
        if (!selects(id)) continue;
        if (answers !== undefined ? answers[id] === 1 : filter === undefined || filter(entries[id].tool.name, entries[id].tool.upstream)) n += 1;
      }
      return n;
    }
    if (filter === undefined) return tools.length;
    const count = (answers: Uint8Array): number => answers.reduce((n, a) => n + a, 0);
    if (filterKey === undefined) return entries.reduce((n, e) => n + (filter(e.tool.name, e.tool.upstream) ? 1 : 0), 0);
    let n = filterCounts.get(filterKey);
    if (n === undefined) filterCounts.set(filterKey, (n = count(filterAnswers(filterKey, filter))));
    return n;
  }

  /** Whether a tool's name holds one of `matches` (the term a query word matches). */
  function namesHold(matches: TermMatches): boolean {
    const name = fieldNumber.get('name');
    if (name === undefined || matches.length === 0) return false;
    const marks = new Uint8Array(entries.length);
    termIndex.mark(matches, [name], marks);
    return marks.includes(1);
  }

  /**
   * The normalised term of `text`'s leading verb when it is an everyday verb of an operation in its base
   * form (operation-verbs.ts: "swap", "stop", not "swaps" or "stopping"): its first word that is neither a
   * stop word nor a request word, as the read/write intent reads it (intent.ts); undefined otherwise.
   */
  function leadingVerb(text: string): string | undefined {
    const first = firstWord(text);
    if (first === undefined || !EVERYDAY_VERBS.has(first)) return undefined;
    return normaliseTerm(first, t.stem, t.stemFold) ?? undefined;
  }

  /** The operation verbs `heads` (search/analysis/operation-verbs.ts), each weighed `operationVerbWeight`. */
  function operationMatches(heads: readonly string[]): TermMatches {
    return heads.map((head) => ({ entry: termIndex.entry(head)!, weight: t.operationVerbWeight }));
  }

  /** The word of `text` whose term is `term` (the first such), if any (a path's terms are no words of the topic). */
  function wordOf(text: string, term: string): string | undefined {
    return splitWords(text).find((w) => normaliseTerm(w, t.stem, t.stemFold) === term);
  }

  /** `respelledMatches` of `word` in this index, remembered for the words lately asked. */
  function respelled(word: string): TermMatches {
    let matches = respellings.get(word);
    if (matches === undefined) {
      // Up to 12 letters (673 spellings, each stemmed: under a millisecond); a longer word's stem keeps enough of it for the fuzzy match above.
      matches =
        word.length > 12
          ? []
          : respelledMatches(
              word,
              (w) => normaliseTerm(w, t.stem, t.stemFold),
              (term) => termIndex.entry(term),
            );
      respellings.set(word, matches);
    }
    return matches;
  }

  function searchPage(query: string, opts: SearchOptions = {}): SearchPage {
    const hits = search(query, opts);
    return { hits, matched: Math.max(lastMatched, hits.length), total: admitted(opts) };
  }

  function search(query: string, opts: SearchOptions = {}): SearchHit[] {
    if (typeof query !== 'string' || query.trim() === '') throw new EmptyQueryError();
    nameOrder ??= nameOrderOf(entries.map((e) => e.tool));
    // File paths and extensions (`/root/music`, `.pptx`) are one weak clue, not topic words: taken out of
    // the query and ranked as a list of their own, fused with weight `pathWeight`.
    const { topic, paths } = t.pathWeight < 1 ? splitPaths(query) : { topic: query, paths: '' };
    const topicWords = queryTerms(topic, t).slice(0, MAX_QUERY_TERMS);
    const topicTerms = informative(topic, topicWords);
    const pathTerms = paths === '' ? [] : queryTerms(paths, t).slice(0, MAX_QUERY_TERMS);
    if (topicWords.length > 0 && topicTerms.length === 0 && pathTerms.length === 0) {
      // Only stop words most tools hold: no arm, the semantic ones included, may call a tool a match.
      lastMatched = 0;
      return [];
    }
    const terms = topicTerms.length > 0 ? topicTerms : pathTerms;
    const multiStep = t.clauseFusion !== 'off' && terms.length >= t.clauseMinTerms;
    const parts = multiStep
      ? clauses(topic, t.clauseSplitAnd)
          .slice(0, MAX_CLAUSES)
          .map((c) => queryTerms(c, t).slice(0, MAX_QUERY_TERMS))
          .filter((ts) => ts.length > 0)
      : [];
    const termLists = [terms, ...(parts.length > 1 ? parts : [])];
    const pathList = topicTerms.length > 0 && pathTerms.length > 0 && t.pathWeight > 0 ? termLists.push(pathTerms) - 1 : -1;
    // What each term matches, looked up once per search however many clauses repeat it. Fuzzy matching
    // applies to the terms of short lists only, so a term's matches depend on its list's length too.
    const byKey = new Map<string, QueryTerm>();
    const verb = t.leadingVerb ? leadingVerb(topic) : undefined;
    // A misspelt word of a short request finds the word it misses; one identifier has its spelling tier instead (nameSpellings).
    const fuzzyUnknown = t.fuzzyUnknown > 0 && !IDENTIFIER.test(query.trim()) ? t.fuzzyUnknown : 0;
    // Words still unmatched, each with its (shared) lookup, for the respelling below.
    const unmatched: [string, QueryTerm][] = [];
    const lookups = termLists.map((ts) => {
      const long = terms.length > t.fuzzyMaxTerms;
      return ts.map((term) => {
        const key = `${long ? 'L' : 'S'}${term}`;
        let found = byKey.get(key);
        if (found === undefined) {
          const expansion: Expansion = {
            fuzzy: t.fuzzy > 0 && !long && term.length >= t.fuzzyMinLength ? t.fuzzy : false,
            prefix: t.prefixMinLength > 0 && term.length >= t.prefixMinLength,
          };
          found = { matches: termIndex.matches(term, expansion) };
          // Up to 20 characters: a longer word is no typo of a tool's word, and a fuzzy walk of a long one visits most of the terms.
          if (found.matches.length === 0 && fuzzyUnknown > 0 && !long && term.length >= 4 && term.length <= 20) {
            found = { matches: termIndex.matches(term, { fuzzy: fuzzyUnknown, prefix: false }) };
          }
          // An everyday verb also matches its operation's verb ("rename": update; operation-verbs.ts).
          const heads = operations?.get(term);
          // The request's own verb asks for its operation, not for the things its stem names in the
          // tools' texts ("swap the tickers" is no request for list_deals' "swaps"), unless tools are
          // named with it (Spotify's add-to-queue for "add ...").
          if (heads && term === verb && !namesHold(found.matches)) found = { matches: operationMatches(heads) };
          else if (heads && (t.operationVerbs === 'always' || found.matches.length === 0)) found = { matches: [...found.matches, ...operationMatches(heads)] };
          byKey.set(key, found);
          if (found.matches.length === 0 && fuzzyUnknown > 0 && t.stem && !long && term.length >= 4) unmatched.push([term, found]);
        }
        return found;
      });
    });
    // A search of one or two words of which none matched: a word stemmed apart from the one it misses
    // ("postions": postion, not posit) is respelled, one edit of the word itself. A last resort for the
    // keyword search a person types: in a longer request, or beside words that matched, a word no tool
    // holds is more often about something the catalogue lacks than a typo (measured: docs/performance.md).
    if (unmatched.length > 0 && terms.length <= 2 && lookups[0].every((q) => q.matches.length === 0))
      for (const [term, found] of unmatched) {
        const word = wordOf(topic, term);
        if (word !== undefined) found.matches = respelled(word);
      }
    const accepting = acceptedBy.get(query.trim().toLowerCase()) ?? [];
    const spelled = nameSpellings(query);
    const external = opts.vectors !== undefined && opts.vectors.tools.vectors.length === tools.length * opts.vectors.tools.dim ? opts.vectors : undefined;
    const queryVector = external ? external.query : lsa?.queryVector(terms);
    const arm: DenseVectors | undefined = external ? inIndexOrder(external.tools) : lsa;
    // The word arm stands beside the LSA; an external model replaces both.
    const wordVector = external ? undefined : words?.queryVector(topic);
    // The semantic arms can rank any tool: every tool's visibility is needed then.
    const visible = visibility(
      opts,
      [...byKey.values()].map((q) => q.matches),
      queryVector || wordVector ? allIds : spelled.length > 0 ? [...accepting, ...spelled.map(([id]) => id)] : accepting,
    );
    scorer ??= new ListScorer(termIndex, scoring);
    const scoresOf = (list: QueryTerm[]): Scores => scorer!.score(list, visible);
    // The whole query's list, then each clause's (weighed `clauseWeight`), fused as they come: a list is
    // read before the next one reuses the scorer's arrays.
    // 'steps': each clause ranked on its own for its best tool, which keeps a place in the answer (below);
    // the whole query (and the paths' list) ranks the rest.
    const stepTops: number[] = [];
    const fused_ = t.clauseFusion === 'steps' ? lookups.map((_, i) => i).filter((i) => i === 0 || i === pathList) : lookups.map((_, i) => i);
    if (t.clauseFusion === 'steps') {
      for (let i = 1; i < lookups.length; i += 1) {
        if (i === pathList) continue;
        const top = topK(scoresOf(lookups[i]), 1, byName);
        if (top.length > 0 && !stepTops.includes(top[0][0])) stepTops.push(top[0][0]);
      }
    }
    let fused: Scores;
    if (fused_.length === 1) fused = scoresOf(lookups[0]);
    else {
      fusion ??= new Fusion(tools.length, t.clauseFusion === 'rrf' ? 'rrf' : 'sum');
      fused = fusion.fuse(fused_.length, (j) => {
        const i = fused_[j];
        return { scores: scoresOf(lookups[i]), weight: i === 0 ? 1 : i === pathList ? t.pathWeight : t.clauseWeight };
      });
    }
    const limit = opts.limit !== undefined && Number.isFinite(opts.limit) ? Math.max(0, Math.floor(opts.limit)) : DEFAULT_LIMIT;
    const semanticLists: SemanticList[] = [];
    const depth = Math.max(limit, t.fusionDepth);
    if (arm && queryVector) {
      const q =
        t.semanticFeedback > 0
          ? withFeedback(
              arm,
              queryVector,
              topK(fused, t.feedbackDocs, byName).map(([id]) => id),
              t.semanticFeedback,
            )
          : queryVector;
      const floor = external ? 0 : t.semanticMinSimilarity;
      const { ids, scores } = nearestVectors(arm, q, visible, depth, floor);
      // One literal, not a spread plus keys: on Node 20 that makes a hidden class per object (gateway/wire/objects.ts).
      semanticLists.push({ ids, scores, weight: t.semanticWeight, floor });
    }
    if (words && wordVector) {
      const { ids, scores } = nearestVectors(words, wordVector, visible, depth, t.wordMinSimilarity);
      semanticLists.push({ ids, scores, weight: t.wordWeight, floor: t.wordMinSimilarity });
    }
    let semanticOnly: Set<number> | undefined;
    if (semanticLists.length > 0) {
      // The lexical matches marked in a per-tool array (cleared after): a Set of them was most of a
      // search's garbage at 10,000 tools.
      const lexicalIds = fused.ids;
      const marks = (inLexical ??= new Uint8Array(tools.length));
      for (let i = 0; i < lexicalIds.length; i += 1) marks[lexicalIds[i]] = 1;
      try {
        fused = withSemantic(fused, semanticLists, depth, knownTerms(lookups[0]));
        semanticOnly = new Set();
        for (let i = 0; i < fused.ids.length; i += 1) if (marks[fused.ids[i]] !== 1) semanticOnly.add(fused.ids[i]);
      } finally {
        for (let i = 0; i < lexicalIds.length; i += 1) marks[lexicalIds[i]] = 0;
      }
    }
    fused = withNameForms(withIntent(fused, query), query);
    if (t.serverWeight > 0 && upstreamCount >= 2) fused = withServerChoice(fused, lookups[0], visible);
    const tier = [...new Set([...closestSpelling(spelled, visible), ...accepting.filter((id) => visible[id] === 1)])];
    const final = withParameterTier(fused, tier);
    // Only matches are answered: a tool below `matchFloor` x the best score is no match (see `matchFloor`).
    const top = topScore(final.scores);
    const floor = t.matchFloor * top;
    const likenessFloor = t.semanticMatchFloor * top;
    const inTier = new Set(tier);
    // The matches, and only they, are ranked for the answer (a likeness under its floor took a place in the
    // top k and was then dropped: 9 answers for a limit of 10 with 24 matches). Matched ("N of M") is their
    // number, after every adjustment: the lexical matches at `matchFloor` x the best score, the semantic
    // arm's at `semanticMatchFloor`, the tools accepting a parameter the query names (counted before the
    // read/write intent lowered some, it said "4 of 34 tools matched; showing the best 2": try-out).
    const kept: number[] = [];
    for (let i = 0; i < final.ids.length; i += 1) {
      const id = final.ids[i];
      const score = final.scores[i];
      if (inTier.has(id) || (score > 0 && score >= (semanticOnly?.has(id) ? likenessFloor : floor))) kept.push(i);
    }
    const answerable: Scores = { ids: Int32Array.from(kept, (i) => final.ids[i]), scores: Float64Array.from(kept, (i) => final.scores[i]) };
    lastMatched = kept.length;
    if (t.upstreamDecay >= 1 || upstreamCount < 2)
      return withLookup(withSteps(topK(answerable, limit, byName), stepTops, limit), query, visible, limit).map(([id, score]) => hit(entries[id].tool, score));
    // The tools accepting a parameter named by the query stay first, in their order, however many share
    // an upstream (a parameter is usually one server's: git's repo_path); the rest are diversified.
    const ranked = topK(answerable, limit * 3 + tier.length, byName);
    const head = ranked.filter(([id]) => inTier.has(id)).slice(0, limit);
    const tail = diversified(
      ranked.filter(([id]) => !inTier.has(id)),
      limit - head.length,
    );
    return withLookup(withSteps([...head, ...tail], stepTops, limit), query, visible, limit).map(([id, score]) => hit(entries[id].tool, score));
  }

  /**
   * `ranked` with the lookup step a request that names something leaves unnamed (search/analysis/lookups.ts):
   * the first of its first `lookupDepth` tools that requires an identifier brings the visible lookup tool
   * of its upstream whose name, title and summary hold the most of what that identifier identifies (a
   * word of the name counting 3, of the title 2, of the summary 1); one not ahead of it already goes
   * before it, and no later than after `lookupSlot` answers (a step comes before the one that needs it).
   */
  function withLookup(ranked: [number, number][], query: string, visible: Uint8Array, limit: number): [number, number][] {
    if (t.lookupDepth <= 0 || ranked.length === 0) return ranked;
    const named = namesSomething(query);
    if (!named && !t.selfLookups) return ranked;
    lookupRoles ??= lookupRolesOf();
    const roles = lookupRoles;
    if (roles.lookups.length === 0 && roles.selves.length === 0) return ranked;
    /** The visible tool of `candidates` on `id`'s upstream whose words hold the most of `things` (a score
     *  above 0 and at least `least`), -1 for none. */
    const bestOf = (candidates: readonly number[], id: number, things: readonly string[], least: number): number => {
      let best = -1;
      let bestScore = 0;
      for (const lookup of candidates) {
        if (visible[lookup] !== 1 || upstreamIds[lookup] !== upstreamIds[id] || lookup === id) continue;
        const words = roles.words.get(lookup)!;
        const score = things.reduce((sum, w) => sum + (words.get(w) ?? 0), 0);
        if (score <= 0 || score < least) continue;
        if (score > bestScore || (score === bestScore && byNameThenUpstream(entries[lookup].tool, entries[best].tool) < 0)) {
          best = lookup;
          bestScore = score;
        }
      }
      return best;
    };
    for (let r = 0; r < Math.min(t.lookupDepth, ranked.length); r += 1) {
      const id = ranked[r][0];
      const things = roles.things[id];
      if (things === undefined || things.length === 0) continue;
      let best = named ? bestOf(roles.lookups, id, things, 0) : -1;
      // The current one (the caller's own user, the latest show): a tool taking nothing that answers an id.
      let self = false;
      if (best < 0 && t.selfLookups) self = (best = bestOf(roles.selves, id, things, 2)) >= 0;
      if (best < 0) continue;
      const at = ranked.findIndex(([x]) => x === best);
      if (at >= 0 && (at < r || (self && at < limit))) return ranked;
      const out = ranked.filter(([x]) => x !== best);
      const slot = self ? Math.min(r + 1, out.length) : Math.min(t.lookupSlot, r, out.length);
      out.splice(slot, 0, [best, out[slot]?.[1] ?? out.at(-1)?.[1] ?? 0]);
      return out.slice(0, limit);
    }
    return ranked;
  }

  /** Each tool's identified things and each lookup tool's words, stemmed like queries (made on first need). */
  function lookupRolesOf(): LookupRoles {
    const norm = (words: string[]): string[] => words.map((w) => normaliseTerm(w, t.stem, t.stemFold)).filter((w): w is string => w !== null);
    const things = tools.map((tool) => norm(identifiedThings(tool)));
    const lookups: number[] = [];
    const words = new Map<number, Map<string, number>>();
    const selves: number[] = [];
    tools.forEach((tool, id) => {
      const self = t.selfLookups && answersCurrent(tool);
      if (self) selves.push(id);
      if (!isLookup(tool) && !self) return;
      if (isLookup(tool)) lookups.push(id);
      const weights = new Map<string, number>();
      const add = (text: string, weight: number): void => {
        for (const w of norm(splitWords(text))) weights.set(w, Math.max(weights.get(w) ?? 0, weight));
      };
      add(summaryOf(tool.description ?? ''), 1);
      add(tool.title ?? '', 2);
      add(tool.upstreamName ?? tool.name, 3);
      words.set(id, weights);
    });
    return { things, lookups, selves, words };
  }

  /**
   * The lexical scores' top `depth` fused with the semantic list (similarities above `floor`, the least
   * the list admits). 'convex' (a convex combination of normalised scores; Bruch, Gai and Ingber, 2023,
   * "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS: with theoretical min-max
   * normalisation it beats RRF in and out of domain): lexical score / the best lexical score, plus
   * weight x (similarity - floor) / (1 - floor); a lexical match the semantic list lacks keeps its score,
   * so a clear lexical winner is not overturned by a middling likeness. 'rrf' (Cormack et al., 2009):
   * (k + 1) x (1 / (k + lexical rank) + weight / (k + semantic rank)), ranks only.
   */
  function withSemantic(lexical: Scores, lists: readonly SemanticList[], depth: number, known: number): Scores {
    // The same sums as a Map of them, in the order first added, without a Map per search.
    let capacity = 0;
    for (const list of lists) capacity += list.ids.length;
    const top = topK(lexical, depth, byName);
    const sums = (fusedSums ??= new ScoreSums(tools.length)).begin(top.length + capacity);
    const k = t.rrfK;
    const add = (id: number, x: number): void => sums.add(id, x);
    if (t.semanticFusion === 'convex') {
      const best = top.length > 0 && top[0][1] > 0 ? top[0][1] : 1;
      const wanted = t.lexicalCoverage > 0 ? top.map(([id]) => id) : t.semanticGate > 0 && top.length > 0 ? [top[0][0]] : [];
      const coverage = coverageOf(lexical, known, wanted);
      // Relative to the widest coverage: in a long request no tool holds every word.
      let widest = 0;
      for (const [id] of top) widest = Math.max(widest, coverage.get(id) ?? 0);
      for (const [id, score] of top) add(id, (score / best) * (widest > 0 ? (coverage.get(id) ?? widest) / widest : 1) ** t.lexicalCoverage);
      // The dense lists weigh less the surer the lexical answer: its first tool holding every query word.
      const gate = 1 - t.semanticGate * (top.length > 0 ? (coverage.get(top[0][0]) ?? 0) : 0);
      for (const { ids, scores, weight, floor } of lists)
        for (let i = 0; i < ids.length; i += 1) add(ids[i], (gate * weight * (scores[i] - floor)) / (1 - floor));
    } else {
      for (let rank = 0; rank < top.length; rank += 1) add(top[rank][0], (k + 1) / (k + rank + 1));
      for (const { ids, weight } of lists) for (let rank = 0; rank < ids.length; rank += 1) add(ids[rank], (weight * (k + 1)) / (k + rank + 1));
    }
    return sums.scores();
  }

  /** The share of the `known` query terms each of the `wanted` lexically matched tools holds (empty
   *  without the counts: a fused list of several term lists). One pass over the lexical list. */
  function coverageOf(lexical: Scores, known: number, wanted: readonly number[]): Map<number, number> {
    const out = new Map<number, number>();
    const { matched, ids } = lexical;
    if (matched === undefined || known === 0 || wanted.length === 0) return out;
    const one = wanted.length === 1 ? wanted[0] : -1;
    const set = one < 0 ? new Set(wanted) : undefined;
    for (let i = 0; i < ids.length; i += 1) {
      if (ids[i] === one || set?.has(ids[i])) out.set(ids[i], Math.min(1, matched[i] / known));
    }
    return out;
  }

  /**
   * The server first: when one upstream (or a few) covers the query's terms clearly better than the rest
   * (the second best below `serverConfidence` x the best), each tool's score is lifted by `serverWeight`
   * x its upstream's coverage over the best's (search/engine/server-choice.ts); when the choice is unsure,
   * the flat ranking stands.
   */
  function withServerChoice(s: Scores, terms: QueryTerm[], visible: Uint8Array): Scores {
    chooser ??= new ServerChooser(termIndex, runs, upstreamIds, upstreamCount);
    const { scores: coverage, best, second } = chooser.score(terms, visible);
    if (best <= 0 || second >= t.serverConfidence * best) return s;
    const scores = Float64Array.from(s.scores);
    for (let i = 0; i < s.ids.length; i += 1) scores[i] *= 1 + (t.serverWeight * coverage[upstreamIds[s.ids[i]]]) / best;
    return { ids: s.ids, scores };
  }

  /**
   * `ranked` with each step's best tool (`steps`, in the request's order) among the first `limit`: one
   * not there already takes the place after `stepSlot` answers (and after the steps placed before it),
   * pushing the tail out, so that a multi-step request's later steps are not all crowded out by its first.
   */
  function withSteps(ranked: [number, number][], steps: readonly number[], limit: number): [number, number][] {
    if (steps.length === 0) return ranked;
    const out = [...ranked];
    let at = Math.min(t.stepSlot, out.length);
    for (const id of steps) {
      const found = out.findIndex(([x]) => x === id);
      if (found >= 0 && found < limit) {
        if (found >= at) at = Math.max(at, Math.min(found + 1, limit));
        continue;
      }
      if (found >= 0) out.splice(found, 1);
      if (at >= limit) break;
      out.splice(at, 0, [id, out[at]?.[1] ?? out.at(-1)?.[1] ?? 0]);
      at += 1;
    }
    return out.slice(0, limit);
  }

  /** External vectors (one per tool in catalogue order) in the index's order, remade once per vectors object. */
  function inIndexOrder(vectors: DenseVectors): DenseVectors {
    let ordered = reordered.get(vectors);
    if (ordered === undefined) {
      const { dim } = vectors;
      const out = new Float32Array(vectors.vectors.length);
      for (let i = 0; i < positions.length; i += 1) out.set(vectors.vectors.subarray(i * dim, (i + 1) * dim), positions[i] * dim);
      reordered.set(vectors, (ordered = { dim, vectors: out }));
    }
    return ordered;
  }

  /**
   * Scores of the tools of the class the query does not ask for, lowered (search/analysis/intent.ts); and of
   * the tools named for the operation that undoes the one the request's first word asks for (operation-verbs.ts
   * UNDOING: "cancel my order" is no request for place_order), by the same factor.
   */
  function withIntent(s: Scores, query: string): Scores {
    const asked = queryIntent(query, intent.cues, t.stem);
    const other = asked.intent === 0 ? WRITE : asked.intent === READ ? WRITE : READ;
    const factor = asked.explicit ? t.intentFactor : t.intentImplicit;
    const side = t.intentFactor === 1 ? undefined : undoingSide(firstWord(query));
    if (factor === 1 && side === undefined) return s;
    const scores = Float64Array.from(s.scores);
    for (let i = 0; i < s.ids.length; i += 1) {
      if (intent.classes[s.ids[i]] === other) scores[i] *= factor;
      else if (side !== undefined && nameSides[s.ids[i]] !== undefined && nameSides[s.ids[i]] !== side) scores[i] *= t.intentFactor;
    }
    return { ids: s.ids, scores };
  }

  /** Scores of the tools whose name holds a word of the request as written (not only its stem), x `nameFormFactor`. */
  function withNameForms(s: Scores, query: string): Scores {
    if (nameForms.size === 0) return s;
    const named = new Set<number>();
    for (const word of splitWords(query)) {
      if (word.length < 3 || STOP_WORDS.has(word) || REQUEST_WORDS.has(word)) continue;
      for (const id of nameForms.get(word) ?? []) named.add(id);
    }
    if (named.size === 0) return s;
    const scores = Float64Array.from(s.scores);
    for (let i = 0; i < s.ids.length; i += 1) if (named.has(s.ids[i])) scores[i] *= t.nameFormFactor;
    return { ids: s.ids, scores };
  }

  /** The best `limit` of `ranked` (best first), each further tool of an upstream already picked scoring
   *  x `upstreamDecay` per sibling before it (a greedy re-ranking: scores shown are the decayed ones). */
  function diversified(ranked: [number, number][], limit: number): [number, number][] {
    const picked: [number, number][] = [];
    const perUpstream = new Map<number, number>();
    const left = [...ranked];
    while (picked.length < limit && left.length > 0) {
      let best = 0;
      let bestScore = -Infinity;
      left.forEach(([id, score], i) => {
        const decayed = score * t.upstreamDecay ** (perUpstream.get(upstreamIds[id]) ?? 0);
        if (decayed > bestScore) {
          best = i;
          bestScore = decayed;
        }
      });
      const [id] = left.splice(best, 1)[0];
      perUpstream.set(upstreamIds[id], (perUpstream.get(upstreamIds[id]) ?? 0) + 1);
      picked.push([id, bestScore]);
    }
    return picked;
  }

  /**
   * `terms` of `text`, but for a text made only of stop words (kept then: "who am I" may still name a
   * tool) only the rare ones, held by at most a tenth of the tools: "the of and a to is it" matched
   * every CPZAI tool, a write tool first. Nothing left is no match.
   */
  function informative(text: string, terms: string[]): string[] {
    if (!t.stopWords || terms.length === 0 || !splitWords(text).every((w) => STOP_WORDS.has(w))) return terms;
    const holders = new Uint8Array(entries.length);
    return terms.filter((term) => {
      const entry = termIndex.entry(term);
      if (entry === undefined) return true;
      holders.fill(0);
      termIndex.mark([{ entry, weight: 1 }], allFields, holders);
      return holders.reduce((n, h) => n + h, 0) * 10 <= Math.max(10, entries.length);
    });
  }

  /**
   * A query that is one identifier (`list_ordres`, `get-markt-dta`, `listOrdrs`) is a tool's name, maybe
   * misspelt: the tools whose names are within typo distance of it (nearest-names.ts), with that distance.
   * Natural-language queries (spaces) get none: [].
   */
  function nameSpellings(query: string): [number, number][] {
    if (!IDENTIFIER.test(query.trim())) return [];
    return misspellingsOf(query.trim().toLowerCase(), toolNames);
  }

  /** The visible tools of `spelled` at its least distance, in catalogue order. */
  function closestSpelling(spelled: readonly [number, number][], visible: Uint8Array): number[] {
    const seen = spelled.filter(([id]) => visible[id] === 1);
    const least = Math.min(...seen.map(([, d]) => d));
    return seen.filter(([, d]) => d === least).map(([id]) => id);
  }

  function nearest(name: string, opts: { limit?: number; filter?: SearchOptions['filter'] } = {}): string[] {
    const limit = opts.limit ?? NEAREST_LIMIT;
    const candidates = entries.filter((e) => opts.filter === undefined || opts.filter(e.tool.name, e.tool.upstream)).map((e) => e.tool.name);
    const related = (wanted: string): string[] => (splitWords(wanted).length > 0 ? search(wanted, { limit, filter: opts.filter }).map((h) => h.name) : []);
    return nearestNames(name, candidates, limit, related);
  }

  return {
    search,
    searchPage,
    nearestNames: nearest,
    size: tools.length,
    categories: [...new Set(tools.map((tool) => tool.category).filter((c): c is string => !!c))].sort(),
    glosses,
  };
}

/** Pseudo-relevance feedback (Rocchio): the query's vector plus `beta` x the mean of the top lexical
 *  tools' vectors, so that the semantic list also brings the siblings of what the words found. */
function withFeedback(lsa: DenseVectors, query: Float32Array, top: number[], beta: number): Float32Array {
  if (top.length === 0) return query;
  const k = lsa.dim;
  const q = Float32Array.from(query);
  for (const id of top) for (let d = 0; d < k; d += 1) q[d] += (beta / top.length) * lsa.vectors[id * k + d];
  let s = 0;
  for (let d = 0; d < k; d += 1) s += q[d] * q[d];
  if (s > 0) for (let d = 0; d < k; d += 1) q[d] /= Math.sqrt(s);
  return q;
}

/** The texts of `tools` that the index glosses (search/analysis/gloss.ts): descriptions and parameter texts. */
export function glossTexts(tools: readonly SearchableTool[]): string[] {
  return tools.flatMap((tool) => {
    const description = typeof tool.description === 'string' ? tool.description : '';
    return [description, summaryOf(description), schemaText(tool.inputSchema).paramText];
  });
}

/** Per indexed field, the weight of its BM25+ in the LSA matrix: `semanticFields`, else the boosts. */
function lsaFieldWeights(t: SearchTuning): number[] {
  return indexedFields(t).map((f) => (f === COMBINED ? 1 : (t.semanticFields[f] ?? t.boosts[f])));
}

/** Each tool's upstream as a small number below `count` (tools without one share a number). */
function numberedUpstreams(tools: SearchableTool[]): { ids: Int32Array; count: number } {
  const numbers = new Map<string, number>();
  const ids = Int32Array.from(tools, (tool) => {
    const key = tool.upstream ?? '';
    let id = numbers.get(key);
    if (id === undefined) {
      id = numbers.size;
      numbers.set(key, id);
    }
    return id;
  });
  return { ids, count: numbers.size };
}

/** Distinct terms of a list that the catalogue holds at all: a word no tool has lowers no tool's coverage. */
function knownTerms(terms: readonly QueryTerm[]): number {
  return new Set(terms.filter((q) => q.matches.length > 0)).size;
}

/** `nameOrder` for `tools` (by {@link byNameThenUpstream}); tools equal by it get the same place. */
function nameOrderOf(tools: readonly SearchableTool[]): Int32Array {
  const ids = Array.from(tools, (_, i) => i).sort((a, b) => byNameThenUpstream(tools[a], tools[b]));
  const order = new Int32Array(tools.length);
  for (let r = 0; r < ids.length; r += 1) {
    const id = ids[r];
    order[id] = r > 0 && byNameThenUpstream(tools[ids[r - 1]], tools[id]) === 0 ? order[ids[r - 1]] : r;
  }
  return order;
}

function byNameThenUpstream(a: SearchableTool, b: SearchableTool): number {
  const au = a.upstream ?? '';
  const bu = b.upstream ?? '';
  return a.name < b.name ? -1 : a.name > b.name ? 1 : au < bu ? -1 : au > bu ? 1 : 0;
}

function hit(tool: SearchableTool, score: number): SearchHit {
  const rounded = Math.round(score * 1000) / 1000;
  return tool.upstream === undefined ? { name: tool.name, score: rounded } : { name: tool.name, score: rounded, upstream: tool.upstream };
}
