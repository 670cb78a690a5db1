/** Moved to search/eval/bm25.ts (evaluation code tests and bench both import); re-exported so bench/search keeps its paths. */
export * from '../../search/eval/bm25.ts';
