/**
 * The search's API types (re-exported by search/index.ts): what a caller passes and gets back. A leaf:
 * the engine and the semantic arm import these, never the facade.
 */
import type { Glosses } from './analysis/gloss.ts';
import type { SearchableTool } from './analysis/tool-fields.ts';
import type { DenseVectors } from './semantic/lsa.ts';
import type { WordVectors } from './semantic/word-vectors.ts';

export type { SearchableTool, Glosses, DenseVectors };

export type SearchOptions = {
  /** Most results to return; default 10. */
  limit?: number;
  /** Only tools of this category (case-insensitive). */
  category?: string;
  /** Only tools of this upstream. */
  upstream?: string;
  /** Admits a tool by name (and upstream, when tools repeat a name across upstreams). */
  filter?: (name: string, upstream?: string) => boolean;
  /**
   * Names what `filter` answers (a caller's catalogue version and scopes, say): the searches of one index
   * that pass the same key share its answers, asked once per tool, so `filter` MUST answer alike for
   * equal keys. Without it, `filter` is asked about every tool a search can match, every search.
   */
  filterKey?: string;
  /**
   * The semantic arm's vectors from elsewhere (search/semantic/embeddings.ts: an embeddings endpoint),
   * used in place of the in-process LSA: a vector per tool of this index (in catalogue order) and the query's.
   */
  vectors?: { tools: DenseVectors; query: Float32Array };
};

export type SearchHit = { name: string; score: number; upstream?: string };

/** A search's hits with its counts: `matched` tools matched the query (before the limit) of `total` the
 *  caller's filter admits. */
export type SearchPage = { hits: SearchHit[]; matched: number; total: number };

export type ToolIndex = {
  /** Best matches first; `[]` when nothing matches. Throws `EmptyQueryError` for an empty or blank query. */
  search(query: string, opts?: SearchOptions): SearchHit[];
  /** `search` with its counts ("N of M tools matched"). */
  searchPage(query: string, opts?: SearchOptions): SearchPage;
  /** Names nearest to an unknown `name`: close spellings (edit distance) first, then search matches. */
  nearestNames(name: string, opts?: { limit?: number; filter?: SearchOptions['filter'] }): string[];
  /** Number of tools indexed. */
  size: number;
  /** The catalogue's categories, sorted. */
  categories: string[];
  /** The glosses of the catalogue's Chinese text this index was built with (a later build takes them over). */
  glosses: Glosses;
};

/** What a build may take besides the tools and the tuning. */
export type BuildOptions = {
  /**
   * An earlier index (of the same tuning) whose per-tool work to take over: a tool passed again as the
   * same object is not read again (its text is analysed once; objects passed in MUST NOT change
   * afterwards), and its glosses are reused. The result is the index a build from scratch with the same
   * glosses gives. The earlier index hands its documents over: it keeps working, but a later build
   * cannot take them from it again.
   */
  previous?: ToolIndex;
  /**
   * English glosses of the catalogue's Chinese text (search/analysis/gloss.ts `glossesFor`). The
   * synchronous build reads only these (default: `previous`'s, else none); the async build makes the
   * missing ones itself.
   */
  glosses?: Glosses;
  /**
   * Told when the async build could not make the missing glosses (search/analysis/gloss.ts `glossesFor`
   * rejected: the gloss table unreadable): the build goes on with the glosses it has, so the index stays
   * right, only blind to the meaning of that Chinese text.
   */
  onGlossFailure?: (error: unknown) => void;
  /** Word vectors for the word arm instead of the project's file (search/semantic/word-vectors.ts); the
   *  bench compares two files with it. */
  wordVectors?: WordVectors;
};
