/**
 * Ranking variants measured next to the default tuning (search/tuning.ts), one knob (or one family of
 * knobs) changed at a time, so each line of the table says what that knob is worth on every query set.
 */
import type { TuningOverrides } from '../../search/index.ts';

export type Variant = { name: string; tuning: TuningOverrides };

const flat = { name: 1, title: 1, description: 1, params: 1, paramText: 1, category: 1, upstream: 1, keywords: 1, output: 1 };

/** The semantic arm's settings before issue 16's third round: what its new defaults are measured against
 *  (`npm run bench:search -- --base 'previous default (...)'` starts the folds from there). */
const PREVIOUS_SEMANTIC: TuningOverrides = {
  semanticFusion: 'rrf',
  semanticWeight: 0.3,
  semanticFields: { description: 1, summary: 0 },
  semanticUnitTerms: false,
};

export const VARIANTS: Variant[] = [
  { name: 'default', tuning: {} },
  // Issue 31's fifth and sixth rounds: the lookup step a request naming something leaves unnamed
  // (search/analysis/lookups.ts); the clause that mentions another tool left out (on since the sixth).
  { name: 'mention clauses kept (only the names left out)', tuning: { mentionClauses: false } },
  { name: 'no lookup steps for the current one', tuning: { selfLookups: false } },
  ...[1, 3, 5].flatMap((depth) =>
    [0, 1].map((slot) => ({ name: `lookup steps depth ${depth} slot ${slot}`, tuning: { lookupDepth: depth, lookupSlot: slot } })),
  ),
  // Issue 31's fourth round: everyday verbs of an operation match its verb (search/analysis/operation-verbs.ts).
  { name: 'no operation verbs', tuning: { operationVerbs: 'off' } },
  { name: 'the leading verb keeps its own matches', tuning: { leadingVerb: false } },
  ...[0.3, 0.8, 1].map((weight) => ({ name: `operation verbs (gaps) x${weight}`, tuning: { operationVerbWeight: weight } })),
  ...[0.3, 0.5, 0.8].map((weight) => ({
    name: `operation verbs (always) x${weight}`,
    tuning: { operationVerbs: 'always' as const, operationVerbWeight: weight },
  })),
  ...[0.7, 0.8].map((factor) => ({ name: `intent factor ${factor}`, tuning: { intentFactor: factor } })),
  // Issue 31, twentieth session: a request word found in a tool's name as written (a plural asks for list_*).
  ...[1, 1.2, 1.3, 1.5].map((factor) => ({ name: `name form factor ${factor}`, tuning: { nameFormFactor: factor } })),
  // Issue 31's second round: what each change of the defaults is worth, undone one at a time, and all at once.
  {
    name: 'defaults of the round before (LSA, no word arm, field idf, implicit read bias 0.8, name/title x2)',
    tuning: { semantic: 'lsa', wordWeight: 0, bm25: { idf: 'field' }, intentImplicit: 0.8, boosts: { name: 2, title: 2 } },
  },
  { name: 'no word arm', tuning: { wordWeight: 0 } },
  // Issue 31's third round: the fusion weighs the lexical arm by how much of the query a tool holds.
  ...[0.5, 1, 2].map((p) => ({ name: `lexical x coverage^${p}`, tuning: { lexicalCoverage: p } })),
  ...[0.3, 0.5, 0.8].map((g) => ({ name: `semantic gate ${g}`, tuning: { semanticGate: g } })),
  ...[0.5, 1].flatMap((p) => [0.5, 0.8].map((g) => ({ name: `lexical x coverage^${p}, semantic gate ${g}`, tuning: { lexicalCoverage: p, semanticGate: g } }))),
  ...[1.5, 2].map((w) => ({ name: `lexical x coverage^1, word arm ${w}`, tuning: { lexicalCoverage: 1, wordWeight: w } })),
  { name: 'word arm 0.5', tuning: { wordWeight: 0.5 } },
  { name: 'word arm 1.5', tuning: { wordWeight: 1.5 } },
  { name: 'word arm least similarity 0.2', tuning: { wordMinSimilarity: 0.2 } },
  { name: 'word arm reads parameter names too', tuning: { wordFields: { params: 1 } } },
  { name: 'word arm without keywords', tuning: { wordFields: { keywords: 0 } } },
  { name: 'word arm reads parameter names x0.5', tuning: { wordFields: { params: 0.5 } } },
  { name: 'word arm reads output field names', tuning: { wordFields: { output: 1 } } },
  { name: 'word arm reads output field names x0.5', tuning: { wordFields: { output: 0.5 } } },
  { name: 'word arm reads the whole description (not the first paragraph)', tuning: { wordFields: { summary: 0, description: 1 } } },
  { name: 'word arm reads the whole description x0.5 too', tuning: { wordFields: { description: 0.5 } } },
  { name: 'word arm reads the server name', tuning: { wordFields: { upstream: 1 } } },
  { name: 'word arm reads the server name x0.5', tuning: { wordFields: { upstream: 0.5 } } },
  { name: 'word arm reads the server name and category', tuning: { wordFields: { upstream: 1, category: 1 } } },
  { name: 'LSA arm back (weight 1)', tuning: { semantic: 'lsa' } },
  { name: 'LSA arm back (weight 0.5)', tuning: { semantic: 'lsa', semanticWeight: 0.5 } },
  { name: 'idf per field (minisearch)', tuning: { bm25: { idf: 'field' } } },
  { name: 'implicit read bias 0.8', tuning: { intentImplicit: 0.8 } },
  { name: 'name and title x2', tuning: { boosts: { name: 2, title: 2 } } },
  // The LSA arm (off by default since the word arm; these turn it on) and the Chinese glosses.
  { name: 'lexical only (no word arm, no LSA)', tuning: { semantic: 'off', wordWeight: 0 } },
  {
    name: 'previous default (semantic arm as before, coordination ^1, no upstream decay)',
    tuning: { semantic: 'lsa', ...PREVIOUS_SEMANTIC, coordination: 1, upstreamDecay: 1 },
  },
  { name: 'semantic arm as before (RRF 0.3, whole description, term projections)', tuning: { semantic: 'lsa', ...PREVIOUS_SEMANTIC } },
  { name: 'semantic fused by RRF (weight 0.3)', tuning: { semantic: 'lsa', semanticFusion: 'rrf', semanticWeight: 0.3 } },
  { name: 'semantic fused by RRF (weight 1)', tuning: { semantic: 'lsa', semanticFusion: 'rrf', semanticWeight: 1 } },
  { name: 'semantic weight 0.5', tuning: { semantic: 'lsa', semanticWeight: 0.5 } },
  { name: 'semantic weight 2', tuning: { semantic: 'lsa', semanticWeight: 2 } },
  { name: 'semantic over whole descriptions (not first paragraphs)', tuning: { semantic: 'lsa', semanticFields: { description: 1, summary: 0 } } },
  { name: 'semantic over descriptions and first paragraphs', tuning: { semantic: 'lsa', semanticFields: { description: 1, summary: 1 } } },
  { name: 'semantic query terms as projections (not unit directions)', tuning: { semantic: 'lsa', semanticUnitTerms: false } },
  { name: 'semantic least similarity 0.2', tuning: { semantic: 'lsa', semanticMinSimilarity: 0.2 } },
  { name: 'semantic 32 dims', tuning: { semantic: 'lsa', semanticDims: 32 } },
  { name: 'semantic 128 dims', tuning: { semantic: 'lsa', semanticDims: 128 } },
  { name: 'semantic seed 1', tuning: { semantic: 'lsa', semanticSeed: 1 } },
  { name: 'semantic seed 2', tuning: { semantic: 'lsa', semanticSeed: 2 } },
  { name: 'semantic seed 3', tuning: { semantic: 'lsa', semanticSeed: 3 } },
  { name: 'semantic power iterations 4', tuning: { semantic: 'lsa', semanticPowerIterations: 4 } },
  { name: 'semantic + relevance feedback 1', tuning: { semantic: 'lsa', semanticFeedback: 1 } },
  { name: 'no Chinese glosses', tuning: { gloss: false } },
  { name: 'paths a weak clue (weight 0.2)', tuning: { pathWeight: 0.2 } },
  { name: 'paths a weak clue (weight 0.5)', tuning: { pathWeight: 0.5 } },
  { name: 'upstream decay 0.8 (diversity)', tuning: { upstreamDecay: 0.8 } },
  { name: 'no upstream decay', tuning: { upstreamDecay: 1 } },
  { name: 'no read/write intent', tuning: { intentFactor: 1, intentImplicit: 1 } },
  { name: 'intent, explicit cues only', tuning: { intentImplicit: 1 } },
  { name: 'keywords x1', tuning: { boosts: { keywords: 1 } } },
  { name: 'output fields off', tuning: { boosts: { output: 0 } } },
  { name: 'output fields x0.5', tuning: { boosts: { output: 0.5 } } },
  { name: 'output fields x1.5', tuning: { boosts: { output: 1.5 } } },
  // The server first, then the tool.
  ...[0.5, 1, 2].flatMap((w) =>
    [0.6, 0.8, 1.01].map((c) => ({ name: `server first x${w}, when second < ${c} x best`, tuning: { serverWeight: w, serverConfidence: c } })),
  ),
  // Term processing.
  { name: 'no stemming', tuning: { stem: false } },
  { name: 'Porter stems as they are (no fold of the final i)', tuning: { stemFold: false } },
  { name: 'no stop words', tuning: { stopWords: false, requestWords: false } },
  { name: 'stop words, request words kept', tuning: { requestWords: false } },
  // Issue 31's eighth round: what the description's shape notes and the enum values with the parameter names are worth.
  { name: 'shape notes kept', tuning: { dropShapeNotes: false } },
  { name: 'enum values in the parameter text only', tuning: { enumsAsParams: false } },
  { name: 'shape notes kept, enum values in the parameter text only', tuning: { dropShapeNotes: false, enumsAsParams: false } },
  { name: 'fuzzy 0.2, all queries', tuning: { fuzzy: 0.2, fuzzyMaxTerms: 1000 } },
  { name: 'fuzzy 0.2, queries <= 4 terms', tuning: { fuzzy: 0.2, fuzzyMaxTerms: 4 } },
  { name: 'fuzzy 0.2 for terms no tool holds', tuning: { fuzzyUnknown: 0.2 } },
  { name: 'fuzzy 0.25 for terms no tool holds', tuning: { fuzzyUnknown: 0.25 } },
  { name: 'fuzzy 0.34 for terms no tool holds', tuning: { fuzzyUnknown: 0.34 } },
  { name: 'prefix, terms >= 4 chars', tuning: { prefixMinLength: 4 } },
  // Combining fields.
  { name: "fields summed (minisearch's own)", tuning: { fields: 'sum' } },
  { name: 'fields summed, name x3, upstream x1', tuning: { fields: 'sum', boosts: { name: 3, upstream: 1 } } },
  { name: 'BM25F (fields as one weighted bag)', tuning: { fields: 'bm25f' } },
  { name: 'dismax tie 0.3', tuning: { tieBreaker: 0.3 } },
  { name: 'dismax tie 0.1', tuning: { tieBreaker: 0.1 } },
  { name: 'dismax tie 0.7', tuning: { tieBreaker: 0.7 } },
  // Scoring.
  { name: "coordination ^1 (minisearch's own)", tuning: { coordination: 1 } },
  { name: 'coordination ^0.5', tuning: { coordination: 0.5 } },
  { name: 'coordination ^1.5', tuning: { coordination: 1.5 } },
  { name: 'bm25 d=0 (BM25, not BM25+)', tuning: { bm25: { d: 0 } } },
  { name: 'bm25 b=0.3', tuning: { bm25: { b: 0.3 } } },
  // Multi-step requests and server context.
  { name: 'no clause fusion', tuning: { clauseFusion: 'off' } },
  { name: 'clause fusion rrf', tuning: { clauseFusion: 'rrf' } },
  { name: 'clause steps (each clause keeps its best tool), slot 1', tuning: { clauseFusion: 'steps' } },
  { name: 'clause steps, slot 2', tuning: { clauseFusion: 'steps', stepSlot: 2 } },
  { name: 'clause steps, slot 1, every query length', tuning: { clauseFusion: 'steps', clauseMinTerms: 0 } },
  { name: 'clause steps, slot 1, not split at "and"', tuning: { clauseFusion: 'steps', clauseSplitAnd: false } },
  { name: 'clause weight 1', tuning: { clauseWeight: 1 } },
  { name: 'clause weight 0.3', tuning: { clauseWeight: 0.3 } },
  { name: 'no upstream context', tuning: { upstreamContext: 0 } },
  { name: 'upstream context 0.15', tuning: { upstreamContext: 0.15 } },
  { name: 'upstream context 0.6', tuning: { upstreamContext: 0.6 } },
  { name: 'no clause fusion, no context', tuning: { clauseFusion: 'off', upstreamContext: 0 } },
  { name: 'clauses for every query length', tuning: { clauseMinTerms: 0 } },
  { name: 'clauses not split at "and"', tuning: { clauseSplitAnd: false } },
  { name: 'mentions of other tools kept', tuning: { stripToolMentions: false } },
  // Field weights.
  { name: 'all fields weight 1', tuning: { boosts: flat } },
  { name: 'name x1', tuning: { boosts: { name: 1 } } },
  { name: 'name x3', tuning: { boosts: { name: 3 } } },
  { name: 'title x1', tuning: { boosts: { title: 1 } } },
  { name: 'description x2', tuning: { boosts: { description: 2 } } },
  { name: 'first paragraph searched too (x1)', tuning: { boosts: { summary: 1 } } },
  { name: 'first paragraph searched too (x2)', tuning: { boosts: { summary: 2 } } },
  { name: 'params x1', tuning: { boosts: { params: 1 } } },
  { name: 'params x3', tuning: { boosts: { params: 3 } } },
  { name: 'paramText x1', tuning: { boosts: { paramText: 1 } } },
  { name: 'paramText off', tuning: { boosts: { paramText: 0 } } },
  { name: 'category off', tuning: { boosts: { category: 0 } } },
  { name: 'upstream x1', tuning: { boosts: { upstream: 1 } } },
  { name: 'upstream field off', tuning: { boosts: { upstream: 0 } } },
];
