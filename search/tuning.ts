/**
 * Ranking knobs of the tool index. `DEFAULT_TUNING` holds the values chosen on the tuning part of every
 * labelled set by the protocol of bench/search/README.md: `npm run bench:search -- --tune` prints them next
 * to one variant per knob (bench/search/variants.ts). Change a default only with the new figures.
 */
import type { WeightedField } from './analysis/tool-fields.ts';

export type SearchTuning = {
  /** How fields combine. 'dismax' (Lucene's dis_max, Elasticsearch's best_fields): a tool scores its best
   *  field's BM25 (x `boosts[f]`) plus `tieBreaker` x the others'. 'sum': every field's boosted BM25 added
   *  (minisearch's own scheme: a word found in four fields counts four times, which lifts tools with many
   *  parameters). 'bm25f': one bag of words in which a field's terms count `repeats[f]` times. */
  fields: 'dismax' | 'sum' | 'bm25f';
  /** 'dismax' only: share of the non-best fields' scores added (0 = best field only, 1 = 'sum'). */
  tieBreaker: number;
  /** BM25F field weights (whole numbers: how many times a field's text is indexed). */
  repeats: Record<WeightedField, number>;
  /** Per-field weight multiplying that field's BM25 score ('dismax' and 'sum'); 0 leaves a field out. Name
   *  and title 1.5 (were 2): about the same objective on the tuning part (0.770 vs 0.768 at 2), and it keeps
   *  cpzai-user's hit@5 and recall@5 at BM25 with stop words' (2: one query below). */
  boosts: Record<WeightedField, number>;
  /** Porter-stem ASCII words (index and query alike). */
  stem: boolean;
  /** One stem for a word's forms: Porter's final i dropped from stems of 5+ letters (search/analysis/terms.ts). */
  stemFold: boolean;
  /** Drop English stop words from queries. */
  stopWords: boolean;
  /** Also drop words that phrase a request rather than its subject (please, help, tell, show, find,
   *  provide...: search/analysis/terms.ts `REQUEST_WORDS`). */
  requestWords: boolean;
  /** Leave a description's shape notes ("Returns {data, count}; page with limit/offset.") out of the index
   *  (search/analysis/tool-fields.ts `withoutShapeNotes`). Issue 31's eighth round, on top of
   *  `enumsAsParams`: tuning part, objective the same (0.8066: no set's figure moves), cpzai-user with the
   *  `_meta` keywords off 0.818 -> 0.847 ("compare the returns of my last three simulations" 9th -> 3rd:
   *  "returns" was in 26 of the 34 tools' notes); the tie was broken, by a rule fixed before looking, on
   *  the keywords-off figure of the tuning part. */
  dropShapeNotes: boolean;
  /** Index a parameter's string enum values with the parameter names too (`params`, x `boosts.params`;
   *  they stay in `paramText`): they name what the tool acts on ("order.filled", "backtest.completed",
   *  "mean_reversion"), as the names do, while the parameter text weighs x0.5. Issue 31's eighth round:
   *  tuning part, objective 0.8037 -> 0.8066 (cpzai-user 0.946 -> 0.963: create_webhook first for "send
   *  a POST to my slack relay when a backtest completes", delete_webhook for "stop sending events to my
   *  old endpoint"; livemcpbench-dev 0.610 -> 0.608; the rest unchanged), with the `_meta` keywords off
   *  cpzai-user 0.824 -> 0.818. Measured beside it and left out: the values moved out of the parameter
   *  text (0.8077 with `dropShapeNotes`; 0.8090 with parameter names x1), parameter names x0.75 / x1 /
   *  x1.25 with the values in (0.8090 / 0.8097 / 0.8109: one livemcpbench-dev or restbench query each way,
   *  noise beside the issue's finding that small tuning-part gains barely predict held-out ones); the
   *  function words the stop list lacks (so, its, does, when...: the same 0.8066 and keywords-off 0.847,
   *  nothing to gain), a query word whose stem is a stop word's ("gets", "ones": 0.8066, keywords-off
   *  0.830), a clause telling when to use the tool itself kept ("Use it when list_positions looks stale":
   *  0.8048, livemcpbench-dev 0.608 -> 0.599 on a near tie, keywords-off 0.852), and, on the
   *  default before both, the dismax taken per query term (Elasticsearch's cross_fields; tie 0.1 / 0.3 /
   *  0.5: 0.790 / 0.798 / 0.800 against 0.803). */
  enumsAsParams: boolean;
  /** Index Chinese text's English glosses too (search/analysis/gloss.ts; made by the async build). */
  gloss: boolean;
  /** Leave mentions of other tools' names out of a tool's description and parameter text. */
  stripToolMentions: boolean;
  /** With `stripToolMentions`, leave out the whole clause (or parenthesis) that mentions another tool: a
   *  pointer ("for one file's columns use get_data_file") describes the other tool, in its words. On
   *  (issue 31's sixth round): on the tuning part a tie at every step (objective 0.7856 vs 0.7857 at
   *  first; 0.7901 vs 0.7895 with the lookup steps; 0.7937 both with the base-form intent cues: hit@1
   *  0.703 -> 0.708, cpzai-user with the `_meta` keywords off 0.778 -> 0.795, livemcpbench-dev 0.619 ->
   *  0.610, one query), so it was decided, by a rule fixed before looking, on the frozen part: objective
   *  0.7246 -> 0.7254 (cpzai-user hit@1 0.629 -> 0.657, keywords off 0.514 -> 0.543 and hit@5 0.857 ->
   *  0.886; restbench hit@1 0.632 -> 0.618; cpzai-dev keywords off hit@1 0.889 -> 0.833). Measured beside
   *  it and left out: operation verbs for the request's first word even where a tool holds it (x0.5
   *  0.7853, x1 0.7826: livemcpbench-dev 0.592). */
  mentionClauses: boolean;
  /** Fuzzy matching as a fraction of term length (minisearch semantics), 0 = off; only for terms of at
   *  least `fuzzyMinLength` characters and only in queries of at most `fuzzyMaxTerms` terms. */
  fuzzy: number;
  fuzzyMinLength: number;
  fuzzyMaxTerms: number;
  /** Fuzzy matching (the same fraction of term length) for a query term no tool holds and no prefix or
   *  fuzzy expansion above found, of at least 4 characters, in a query of at most `fuzzyMaxTerms` terms: a
   *  misspelt word ("ordrs") finds the word it misses instead of nothing (not in a query of one identifier,
   *  `get_weathr`, which the tool-name spelling tier answers); 0 = off. On at 0.2 (one edit up
   *  to 7 characters, two from 8): a try-out's "ordrs" found nothing. On the tuning part a tie on every
   *  set at 0.2, 0.25 and 0.34 (no short query there has a word no tool holds); for the words of long
   *  queries too it moved single queries both ways (objective 0.809 vs 0.807: livemcpbench-dev +1,
   *  metatool and cpzai-user keywords off -1 each, rivals like hdbcarpark for "horror"), so long queries
   *  keep their unknown words unmatched. */
  fuzzyUnknown: number;
  /** Prefix matching for terms of at least this many characters; 0 = off. */
  prefixMinLength: number;
  /** Coordination: a tool's score is multiplied by (distinct query terms it matches) ^ this power
   *  (minisearch's own factor is power 1; 0 turns it off). Default off, as Lucene dropped its coord
   *  factor with BM25 (7.0): BM25 already sums every matched term, and the factor multiplied that by
   *  their count, so a long text matching many common words of a long request (a glossed manual) beat
   *  the tool its one rare word names; breadth of meaning is the semantic arm's part now. */
  coordination: number;
  /** Weight of a tool's upstream's best-scoring visible tool added to the tool's own score: tools of the
   *  server a request is about rank above lone matches elsewhere. 0 = off. */
  upstreamContext: number;
  /** Rank each clause of a multi-step request on its own too, and fuse those lists with the whole query's:
   *  reciprocal-rank fusion or a sum of max-normalised scores; 'off' ranks the whole query only. */
  clauseFusion: 'off' | 'rrf' | 'sum' | 'steps';
  /** 'steps': answers ahead of the first step's tool kept by a clause (0: a step's tool may come first). */
  stepSlot: number;
  /** Fuse clauses only for queries of at least this many terms (after stop words). */
  clauseMinTerms: number;
  /** Also split clauses at a bare "and" (not only at punctuation and "then"). */
  clauseSplitAnd: boolean;
  /** Weight of each clause's list in the fusion (the whole query's list weighs 1). */
  clauseWeight: number;
  /** BM25+ parameters (minisearch's k, b, d), and whose rarity a term's idf is: among the tools holding it
   *  in the field scored ('field', minisearch's), or in any field ('tool', BM25F's). Default 'tool': with
   *  a rarity per field, a word rare among names but common in the catalogue's text scored as a rare word
   *  whenever a name held it, and the name's tool beat the one whose text holds the request's rare words
   *  (search-index.test.ts). Tuning part, with the word arm: objective 0.761 ('field') -> 0.770. */
  bm25: { k: number; b: number; d: number; idf: 'field' | 'tool' | 'mean' };
  /** File paths and extensions in a query are ranked as a list of their own, fused with this weight (the
   *  topic's list weighs 1); 1 leaves them in the query as ordinary words. Default 1: on the
   *  tuning part, with the word arm, a weak clue lowered the objective (0.770 -> 0.765 at 0.2, 0.769 at
   *  0.5: livemcpbench-dev, the only set whose requests name paths, loses at hit@1 and recall@5). */
  pathWeight: number;
  /** Each further tool of an upstream already in the top k scores x this (1 = off): a server's siblings
   *  do not fill the top k when another server matches too (a multi-step request needs one tool per step,
   *  often of different servers). The tools accepting a parameter the query names stay first as they are. */
  upstreamDecay: number;
  /** Read/write intent (search/analysis/intent.ts): tools of the class a query does not ask for score x this
   *  when its cue is explicit, x `intentImplicit` when the query has no cue (reads: the safer default);
   *  1 turns either off. `intentImplicit` is 1: the cues are learnt from the catalogue's lead words
   *  (list, get, create, place), and users ask for writes in other words ("rename my algo", "spin up a
   *  strategy", "stop sending events", "ping my server when"), so a request with no cue was most often
   *  a write, and x0.8 put list_webhooks above delete_webhook ("stop sending events to my webhook"). It was
   *  the main reason search_tools lost to BM25 with stop words at hit@1 on cpzai-user (tuning part, hit@1
   *  0.614 -> 0.705 alone; objective 0.758 at 0.8 -> 0.770). Cues count in their base form only (a
   *  participle or plural names a thing: "buying power", "trading accounts", list_deals' keyword "swaps"
   *  made "swap the tickers of my strategy" a read): objective 0.7895 -> 0.7917 (cpzai-user 0.889 ->
   *  0.901, hit@5 0.955 -> 0.977; every other set unchanged). The everyday verbs of an operation whose
   *  verb is a cue (operation-verbs.ts: "rename", "swap", "tweak" where "update" leads writes) are cues
   *  too: 0.7917 -> 0.7937 (cpzai-user 0.901 -> 0.906, restbench 0.802 -> 0.807, the rest unchanged). */
  intentFactor: number;
  intentImplicit: number;
  /** Tools with a request word among their name's words as written, not only as a stem, x this: Porter gives
   *  "strategies" and "strategy" one stem, so "what strategies do I have" ranked get_strategy (by id) above
   *  list_strategies, "my webhooks" delete_webhook above list_webhooks (an SDK try-out). The word's number
   *  (and other inflection) is the user's: a plural asks for the collection, a singular for the one. */
  nameFormFactor: number;
  /** The catalogue's own semantic arm (search/semantic/lsa.ts): 'lsa' in process, 'off' without it. Fused
   *  with the lexical ranking like the word arm (`semanticFusion`). Default 'off' since the word arm: with it
   *  in, the LSA lowered the tuning part's objective (0.770 without, 0.759 with, word weight 1 and 0.5 x
   *  LSA), and it was most of the build's time and all of its seed instability. */
  semantic: 'off' | 'lsa';
  /** How the semantic list joins the lexical one: reciprocal rank fusion, or 'convex': the lexical score
   *  over its best plus `semanticWeight` x the cosine similarity. */
  semanticFusion: 'rrf' | 'convex';
  /** Weight of the semantic list (the lexical list weighs 1): of its cosine in 'convex', of its ranks in 'rrf'. */
  semanticWeight: number;
  /** Least cosine similarity for a tool to enter the semantic list: a faint likeness (two tools sharing
   *  one common word) is no evidence. */
  semanticMinSimilarity: number;
  /** Weight of each field's BM25+ in the LSA matrix, where it differs from `boosts`. Default: the summary
   *  (the description's first paragraph) in the description's place, without category and upstream
   *  (words every tool of a server shares would make servers, not topics, the main directions): usage
   *  notes and argument lists after the first paragraph blur which tools are about the same thing. */
  semanticFields: Partial<Record<WeightedField, number>>;
  /** A query term weighs its idf along its unit direction in the LSA space (search/semantic/lsa.ts), not its
   *  projection's length. */
  semanticUnitTerms: boolean;
  /** LSA dimensions, and most tools the SVD reads (the rest folded in). */
  semanticDims: number;
  semanticSample: number;
  /** Seed of the SVD's random test matrix (the same vectors every build; another seed, other vectors of
   *  about the same quality: the bench's seed spread). */
  semanticSeed: number;
  /** Power iterations of the SVD's range finder, and its columns beyond `semanticDims` (search/semantic/lsa.ts). */
  semanticPowerIterations: number;
  semanticOversample: number;
  /** The word arm (search/semantic/word-vectors.ts): weight of its cosine in the fusion (0: off), least
   *  similarity for a tool to enter its list, and the weight of each text of a tool in its vector. Weight
   *  1, LSA off: tuning-part objective 0.751 (no word arm) -> 0.770; 0.5: 0.768, 1.5: 0.765. The server's
   *  name read too (`upstream` 1; a server beyond its tools' words): 0.770 -> 0.772 (livemcpbench-dev
   *  0.592 -> 0.601; x0.5 the same; with the category too 0.769); parameter names 0.767; least
   *  similarity 0.2: 0.769. With the vectors on 64 principal axes (data/word-vectors/, 0.775): the
   *  output field names (`output`) 0.771, x0.5 0.775; the whole description (`description`) instead of
   *  the first paragraph 0.773, beside it x0.5 0.774; parameter names x0.5 0.773: none kept. With the
   *  lookup steps (0.7850): the output field names x0.5 0.7857 (kept: cpzai-user 0.884 -> 0.889, with
   *  the `_meta` keywords off 0.761 -> 0.778; restbench 0.786 -> 0.783), x1 0.7832. */
  wordWeight: number;
  /** Convex fusion: each lexical score (over the best) x (its coverage over the widest coverage) ^ this,
   *  coverage being the share of the query's known terms (those some tool holds) the tool holds, so a
   *  tool holding every word of the request keeps its place against a dense neighbour while a one-word
   *  match weighs less (0: off). Off: on the tuning part it lowered the objective at every power (0.775
   *  -> 0.756 at ^0.5, 0.742 at ^1, 0.724 at ^2; livemcpbench-dev and metatool lose most: their long
   *  requests' common words are what a partial match lacks, and BM25 already weighs them by rarity). */
  lexicalCoverage: number;
  /** Convex fusion: the semantic lists weigh x (1 - this x the lexical first tool's coverage): the
   *  surer the words, the less the likeness counts (0: off). 0.3: with the vectors on 64 principal axes
   *  the word arm put create_strategy above create_webhook for "create webhook" (a neighbour's likeness
   *  over a tool holding every word); at 0.3 it no longer does, and the tuning part stays where it was
   *  (objective 0.7750 -> 0.7745, hit@1 0.679 -> 0.684, MRR 0.758 -> 0.759; cpzai-user 0.878 -> 0.884,
   *  restbench 0.737 -> 0.734, metatool 0.641 -> 0.636); 0.5 the same, 0.8 0.772. */
  semanticGate: number;
  wordMinSimilarity: number;
  wordFields: {
    name: number;
    title: number;
    summary: number;
    keywords: number;
    params: number;
    upstream: number;
    category: number;
    output: number;
    description: number;
  };
  /** Everyday verbs of an operation also match its verb (search/analysis/operation-verbs.ts: "rename" an
   *  update), weighed `operationVerbWeight`: 'gaps' only for verbs no tool holds, 'always' for every one.
   *  'gaps' x0.5: on the tuning part, cpzai-user with the `_meta` keywords off 0.739 -> 0.761 and every
   *  other set unchanged (objective 0.775; any weight the same); 'always' x0.5 lifts that to 0.784 but
   *  costs livemcpbench-dev 0.619 -> 0.599 (objective 0.772; x0.3 0.774, x0.8 0.774). Measured beside
   *  it and left out: a query word no tool holds matching the catalogue's nearest words in the word
   *  vectors' space (embedding query expansion; objective 0.775 -> 0.777 at best, keywords-off cpzai-user
   *  0.761 -> 0.756, restbench -0.004 at x0.5, and a dot product per catalogue term for each such word).
   *  The verbs of stopping something (stop, cancel, disable: a delete) and of starting one (launch,
   *  deploy, upload, spin up, subscribe: a create), issue 31's seventh round: tuning part, cpzai-user with
   *  the `_meta` keywords off 0.795 -> 0.813 (hit@1 0.591 -> 0.614, hit@5 0.886 -> 0.909), every other
   *  set unchanged; the verbs of pausing and resuming as an update's changed nothing (left out). */
  operationVerbs: 'off' | 'gaps' | 'always';
  operationVerbWeight: number;
  /** With `operationVerbs` on: a request led by an everyday verb of an operation in its base form ("swap
   *  the tickers my pairs trader uses", "stop my index short from acting as a hedge") matches with that
   *  word its operation's verb only (x `operationVerbWeight`), not the things its stem names in the
   *  tools' texts (list_deals' "swaps", place_order's "stop" orders), unless a tool's name holds the word
   *  (Spotify's add-to-queue for "add ..."). Issue 31's seventh round: tuning part objective 0.8022 ->
   *  0.8033, cpzai-user 0.940 -> 0.946 (hit@1 0.818 -> 0.841), with the `_meta` keywords off 0.813 ->
   *  0.824 (hit@1 0.614 -> 0.636, hit@3 0.841 -> 0.864), every other set unchanged; without the names'
   *  exception 0.8031 (restbench 0.810 -> 0.807). */
  leadingVerb: boolean;
  /** Pseudo-relevance feedback: weight of the top `feedbackDocs` lexical tools' mean vector added to the
   *  query's vector (0: the query's words alone). */
  semanticFeedback: number;
  feedbackDocs: number;
  /** The server first (search/engine/server-choice.ts): tools of the upstreams that cover the query's
   *  terms score x (1 + `serverWeight` x their coverage over the best's), when the second best upstream
   *  covers less than `serverConfidence` x the best; otherwise (or at 0) the flat ranking. */
  serverWeight: number;
  serverConfidence: number;
  /** A tool counts as matched ("N of M tools matched") when it scores at least this share of the best
   *  match: the semantic arm's faint likenesses and a long request's stray common words are not matches. */
  matchFloor: number;
  /** The same for a tool that shares no word with the query, brought by a semantic arm alone: a likeness
   *  must be a clear one to count as a match and be answered (general English finds some likeness
   *  between any two texts). */
  semanticMatchFloor: number;
  /** Lookup steps (search/analysis/lookups.ts): when a request names something and one of the answer's
   *  first `lookupDepth` tools requires an identifier of a kind its server's lookup tool (a free-text
   *  query, no identifier) finds, that lookup goes before it, no later than after `lookupSlot` answers
   *  (depth 0 = off). Depth 3, slot 1: tuning part, restbench 0.734 -> 0.786 (objective 0.775 -> 0.785),
   *  every other set unchanged; depth 1 0.778, 5 as 3; slot 0 (the lookup first) 0.783, and the lookup
   *  after its tool whatever its place 0.777. With a schema that marks nothing required read as
   *  requiring every parameter (Spotify's `search` a lookup, its `id` an identifier) and the output
   *  field names in the word arm: slot 0 0.7885 (restbench 0.798; kept), slot 1 0.7867, depth 1 0.7833. Measured beside it and left out: the names' own words as a
   *  weak clue (a list of their own fused x0.2 or x0.5, like `pathWeight`: objective 0.768-0.771,
   *  livemcpbench-dev 0.619 -> 0.552-0.573, restbench 0.786 -> 0.768-0.775). */
  lookupDepth: number;
  lookupSlot: number;
  /** Lookup steps for the current one too (search/analysis/lookups.ts `answersCurrent`: a tool taking no
   *  parameter and answering an id, whose name or title holds what the identifier identifies: the
   *  caller's own profile for a `user_id`), whether or not the request names something; it goes right
   *  after the tool that needs it. Tuning part: objective 0.7885 -> 0.7895 (restbench 0.798 -> 0.802,
   *  every other set unchanged); placed like a named lookup (before the tool) 0.7852. */
  selfLookups: boolean;
  /** How deep each list goes into the fusion (at least the search's limit). */
  fusionDepth: number;
  /** The RRF constant k (Cormack et al., 2009: 60). */
  rrfK: number;
};

export const DEFAULT_TUNING: SearchTuning = {
  fields: 'dismax',
  tieBreaker: 0.5,
  repeats: { name: 3, title: 2, description: 1, params: 2, paramText: 1, category: 1, upstream: 1, keywords: 2, output: 1, summary: 0 },
  boosts: { name: 1.5, title: 1.5, description: 1, params: 1.5, paramText: 0.5, category: 1, upstream: 2, keywords: 1.5, output: 1, summary: 0 },
  stem: true,
  stemFold: true,
  stopWords: true,
  requestWords: true,
  dropShapeNotes: true,
  enumsAsParams: true,
  stripToolMentions: true,
  mentionClauses: true,
  gloss: true,
  fuzzy: 0,
  fuzzyUnknown: 0.2,
  fuzzyMinLength: 5,
  fuzzyMaxTerms: 4,
  prefixMinLength: 0,
  coordination: 0,
  upstreamContext: 0.3,
  clauseFusion: 'steps',
  clauseWeight: 0.5,
  stepSlot: 1,
  clauseMinTerms: 8,
  clauseSplitAnd: false,
  bm25: { k: 1.2, b: 0.7, d: 0.5, idf: 'tool' },
  pathWeight: 1,
  upstreamDecay: 0.9,
  intentFactor: 0.5,
  intentImplicit: 1,
  nameFormFactor: 1.1,
  semantic: 'off',
  semanticFusion: 'convex',
  semanticWeight: 1,
  semanticMinSimilarity: 0.3,
  semanticFields: { description: 0, summary: 1, category: 0, upstream: 0, output: 0 },
  semanticUnitTerms: true,
  semanticDims: 64,
  semanticSample: 1000,
  semanticSeed: 16,
  semanticPowerIterations: 1,
  semanticOversample: 8,
  wordWeight: 1,
  lexicalCoverage: 0,
  semanticGate: 0.3,
  wordMinSimilarity: 0.3,
  wordFields: { name: 1, title: 1, summary: 1, keywords: 1, params: 0, upstream: 1, category: 0, output: 0.5, description: 0 },
  operationVerbs: 'gaps',
  operationVerbWeight: 0.5,
  leadingVerb: true,
  semanticFeedback: 0,
  feedbackDocs: 3,
  serverWeight: 1,
  serverConfidence: 0.8,
  matchFloor: 0.1,
  semanticMatchFloor: 0.3,
  lookupDepth: 3,
  lookupSlot: 0,
  selfLookups: true,
  fusionDepth: 50,
  rrfK: 60,
};

/** Overrides of some knobs; boosts and bm25 merge key by key. */
export type TuningOverrides = Omit<Partial<SearchTuning>, 'boosts' | 'repeats' | 'bm25' | 'semanticFields' | 'wordFields'> & {
  wordFields?: Partial<SearchTuning['wordFields']>;
  semanticFields?: Partial<SearchTuning['semanticFields']>;
  boosts?: Partial<SearchTuning['boosts']>;
  repeats?: Partial<SearchTuning['repeats']>;
  bm25?: Partial<SearchTuning['bm25']>;
};

/** `DEFAULT_TUNING` with `overrides` applied. */
export function tuningWith(overrides: TuningOverrides = {}): SearchTuning {
  return {
    ...DEFAULT_TUNING,
    ...overrides,
    boosts: { ...DEFAULT_TUNING.boosts, ...overrides.boosts },
    repeats: { ...DEFAULT_TUNING.repeats, ...overrides.repeats },
    bm25: { ...DEFAULT_TUNING.bm25, ...overrides.bm25 },
    semanticFields: { ...DEFAULT_TUNING.semanticFields, ...overrides.semanticFields },
    wordFields: { ...DEFAULT_TUNING.wordFields, ...overrides.wordFields },
  };
}
