/**
 * Errors the search raises for bad input. The gateway maps them to a clear message (an `isError` result
 * for search_tools); they never mean the index itself failed.
 */

/** The query was empty or only whitespace: there is nothing to rank by. */
export class EmptyQueryError extends Error {
  readonly code = 'empty_query';
  constructor() {
    super('query must contain at least one word: describe the task, or give a tool or parameter name');
    this.name = 'EmptyQueryError';
  }
}
