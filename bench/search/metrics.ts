/** Moved to search/eval/metrics.ts (evaluation code tests and bench both import); re-exported so bench/search keeps its paths. */
export * from '../../search/eval/metrics.ts';
