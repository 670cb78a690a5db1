/** Moved to search/eval/query-sets.ts (evaluation code tests and bench both import); re-exported so bench/search keeps its paths. */
export * from '../../search/eval/query-sets.ts';
