/**
 * Tool search, the one door into search/: tool definitions in, ranked names out (no HTTP, Koa or MCP
 * SDK). This file is the API and its types only; the work is behind it:
 * - `engine/`: the index (`buildToolIndex`, `buildToolIndexAsync`: BM25+ postings, the ranking, fusion);
 * - `analysis/`: how text becomes terms (tokeniser, stems and stop words, a tool's fields, Chinese
 *   glosses, paths and clauses of a request, read/write intent);
 * - `semantic/`: the semantic arm (the in-process LSA; an OpenAI-compatible embeddings endpoint).
 * `tuning.ts` holds the measured settings; bench/search/README.md how they are measured.
 */
export type { BuildOptions, DenseVectors, Glosses, SearchableTool, SearchHit, SearchOptions, SearchPage, ToolIndex } from './types.ts';
export { EmptyQueryError } from './errors.ts';
export { DEFAULT_TUNING, type SearchTuning, type TuningOverrides } from './tuning.ts';
export { buildToolIndex, buildToolIndexAsync, glossTexts } from './engine/tool-index.ts';
export { matchedFields, type FieldMatch } from './engine/explain.ts';
export { nearestNames } from './engine/nearest-names.ts';
export { glossesFor, NO_GLOSSES } from './analysis/gloss.ts';
export { metaKeywords } from './analysis/meta-keywords.ts';
export { splitPaths } from './analysis/paths.ts';
export { EmbeddingSearch, type EmbeddingFailure, type EmbeddingsEndpoint, type VectorStore } from './semantic/embeddings.ts';
export { parseWordVectors, type WordVectors } from './semantic/word-vectors.ts';
