/**
 * Tool search: a minisearch index over a catalogue's tool definitions, built once per catalogue version
 * and shared by every caller. Pure: tool definitions in, ranked names out (no HTTP, Koa or MCP SDK).
 *
 * Callers see only what their `filter` predicate admits (scope filtering is a filter on the shared index,
 * never a rebuild): a hidden tool is never returned, never named by `nearestNames`, and never lends its
 * score to a visible one (server context, fusion and tiers are computed over visible tools). Corpus
 * statistics (term rarity, field lengths) are the shared catalogue's.
 *
 * Ranking: BM25+ per field, fields combined dismax-style with boosts; Porter-stemmed terms, stop words
 * dropped from queries; a coordination factor; server context; a fusion of per-clause rankings for long
 * multi-step requests; and a query that is exactly a parameter name lists the tools accepting it first.
 * search/tuning.ts holds the measured settings, `npm run bench:search` the figures.
 */
import type MiniSearch from 'minisearch';

import { EmptyQueryError } from './errors.ts';
import { clauses, normalisedSum, reciprocalRankFusion } from './fusion.ts';
import { nearestNames } from './nearest-names.ts';
import { queryTerms } from './terms.ts';
import { COMBINED, documents, emptyIndex } from './tool-documents.ts';
import { splitWords } from './tokenize.ts';
import { parameterIndex, topK, withParameterTier, withUpstreamContext, type Scores } from './score-adjustments.ts';
import { FIELD_NAMES, type SearchableTool } from './tool-fields.ts';
import { tuningWith, type SearchTuning, type TuningOverrides } from './tuning.ts';

export { EmptyQueryError } from './errors.ts';
export type { SearchableTool } from './tool-fields.ts';
export { DEFAULT_TUNING, type SearchTuning, type TuningOverrides } from './tuning.ts';

export type SearchOptions = {
  /** Most results to return; default 10. */
  limit?: number;
  /** Only tools of this category (case-insensitive). */
  category?: string;
  /** Only tools of this upstream. */
  upstream?: string;
  /** Admits a tool by name (and upstream, when tools repeat a name across upstreams). */
  filter?: (name: string, upstream?: string) => boolean;
};

export type SearchHit = { name: string; score: number; upstream?: string };

export type ToolIndex = {
  /** Best matches first; `[]` when nothing matches. Throws `EmptyQueryError` for an empty or blank query. */
  search(query: string, opts?: SearchOptions): SearchHit[];
  /** Names nearest to an unknown `name`: close spellings (edit distance) first, then search matches. */
  nearestNames(name: string, opts?: { limit?: number; filter?: SearchOptions['filter'] }): string[];
  /** Number of tools indexed. */
  size: number;
  /** The catalogue's categories, sorted. */
  categories: string[];
};

type Indexed = { tool: SearchableTool; category: string };

const DEFAULT_LIMIT = 10;
const NEAREST_LIMIT = 5;
/** Bounds on the work one query may ask for: a request longer than this adds nothing a model needs,
 *  and an unbounded one (a pasted document) would cost a search per clause. */
const MAX_QUERY_TERMS = 64;
const MAX_CLAUSES = 16;

/**
 * Builds the index of `tools`. Names may repeat across upstreams: tools are keyed by position (upstream +
 * name), and each hit carries the name and upstream the caller passed. `tuning` overrides the measured
 * defaults (the bench uses it to compare variants). Synchronous, a few hundred ms per 1,000 tools on the
 * bench machine: large catalogues should use `buildToolIndexAsync`.
 */
export function buildToolIndex(tools: SearchableTool[], tuning: TuningOverrides = {}): ToolIndex {
  const t = tuningWith(tuning);
  const mini = emptyIndex(t);
  mini.addAll(documents(tools, t));
  return indexOver(tools, mini, t);
}

/** `buildToolIndex`, yielding to the event loop between chunks of tools so serving goes on meanwhile. */
export async function buildToolIndexAsync(tools: SearchableTool[], tuning: TuningOverrides = {}): Promise<ToolIndex> {
  const t = tuningWith(tuning);
  const mini = emptyIndex(t);
  await mini.addAllAsync(documents(tools, t), { chunkSize: 250 });
  return indexOver(tools, mini, t);
}

function indexOver(tools: SearchableTool[], mini: MiniSearch<Record<string, unknown>>, t: SearchTuning): ToolIndex {
  const entries: Indexed[] = tools.map((tool) => ({ tool, category: (tool.category ?? '').toLowerCase() }));
  const upstreamIds = numberedUpstreams(tools);
  const acceptedBy = parameterIndex(tools);
  // minisearch reads a boost of 0 as 1, so a field weighted 0 is left out of the search instead.
  const searchedFields = t.fields === 'bm25f' ? [COMBINED] : FIELD_NAMES.filter((f) => t.boosts[f] > 0);
  // 'dismax' asks each field on its own and keeps the best field (plus a tie-breaking share of the others).
  const runs = t.fields === 'dismax' ? searchedFields.map((f) => [f]) : [searchedFields];

  /** Visibility of each tool for one search, computed at most once per tool. */
  function visibility(opts: SearchOptions): (id: number) => boolean {
    const category = opts.category?.toLowerCase();
    const known = new Uint8Array(entries.length); // 0 unknown, 1 visible, 2 hidden
    return (id) => {
      if (known[id] === 0) {
        const e = entries[id];
        const ok =
          (category === undefined || e.category === category) &&
          (opts.upstream === undefined || e.tool.upstream === opts.upstream) &&
          (opts.filter === undefined || opts.filter(e.tool.name, e.tool.upstream));
        known[id] = ok ? 1 : 2;
      }
      return known[id] === 1;
    };
  }

  function search(query: string, opts: SearchOptions = {}): SearchHit[] {
    if (typeof query !== 'string' || query.trim() === '') throw new EmptyQueryError();
    const visible = visibility(opts);
    const terms = queryTerms(query, t).slice(0, MAX_QUERY_TERMS);
    const whole = scoresFor(terms, visible);
    const multiStep = t.clauseFusion !== 'off' && terms.length >= t.clauseMinTerms;
    const parts = multiStep
      ? clauses(query, t.clauseSplitAnd).slice(0, MAX_CLAUSES).map((c) => queryTerms(c, t).slice(0, MAX_QUERY_TERMS)).filter((ts) => ts.length > 0)
      : [];
    const lists = [{ scores: whole, weight: 1 }, ...(parts.length > 1 ? parts.map((ts) => ({ scores: scoresFor(ts, visible), weight: t.clauseWeight })) : [])];
    const fused = lists.length === 1 ? whole : t.clauseFusion === 'rrf' ? reciprocalRankFusion(lists, 60) : normalisedSum(lists);
    const accepting = (acceptedBy.get(query.trim().toLowerCase()) ?? []).filter(visible);
    const final = withParameterTier(fused, accepting);
    const byRank = (a: number, b: number): number => byNameThenUpstream(entries[a].tool, entries[b].tool);
    const limit = opts.limit !== undefined && Number.isFinite(opts.limit) ? Math.max(0, Math.floor(opts.limit)) : DEFAULT_LIMIT;
    return topK(final, limit, byRank).map(([id, score]) => hit(entries[id].tool, score));
  }

  /** Scores of the visible tools matching `terms` (tool id -> score). */
  function scoresFor(terms: string[], visible: (id: number) => boolean): Scores {
    if (terms.length === 0) return new Map();
    const long = terms.length > t.fuzzyMaxTerms;
    const best = new Map<number, number>();
    const total = new Map<number, number>();
    const matched = new Map<number, Set<string>>();
    for (const fields of runs) {
      const raw = mini.search(terms.join(' '), {
        tokenize: (q) => q.split(' '),
        processTerm: (term) => term,
        fields,
        boost: t.boosts,
        bm25: t.bm25,
        // A falsy document boost makes minisearch skip the tool before building a result for it.
        boostDocument: (id) => (visible(id as number) ? 1 : 0),
        fuzzy: (term) => (t.fuzzy > 0 && !long && term.length >= t.fuzzyMinLength ? t.fuzzy : false),
        prefix: (term) => t.prefixMinLength > 0 && term.length >= t.prefixMinLength,
      });
      for (const r of raw) {
        const id = r.id as number;
        // minisearch multiplies by the number of query terms matched; undone here, applied once below.
        const score = r.score / Math.max(1, r.queryTerms.length);
        best.set(id, Math.max(best.get(id) ?? 0, score));
        total.set(id, (total.get(id) ?? 0) + score);
        const seen = matched.get(id);
        if (seen === undefined) matched.set(id, new Set(r.queryTerms));
        else for (const q of r.queryTerms) seen.add(q);
      }
    }
    const scored: Scores = new Map();
    for (const [id, b] of best) {
      const combined = b + t.tieBreaker * ((total.get(id) ?? b) - b);
      scored.set(id, combined * (matched.get(id)?.size ?? 1) ** t.coordination);
    }
    return withUpstreamContext(scored, (id) => upstreamIds[id], t.upstreamContext);
  }

  function nearest(name: string, opts: { limit?: number; filter?: SearchOptions['filter'] } = {}): string[] {
    const limit = opts.limit ?? NEAREST_LIMIT;
    const candidates = entries.filter((e) => opts.filter === undefined || opts.filter(e.tool.name, e.tool.upstream)).map((e) => e.tool.name);
    const related = (wanted: string): string[] => (splitWords(wanted).length > 0 ? search(wanted, { limit, filter: opts.filter }).map((h) => h.name) : []);
    return nearestNames(name, candidates, limit, related);
  }

  return {
    search,
    nearestNames: nearest,
    size: tools.length,
    categories: [...new Set(tools.map((tool) => tool.category).filter((c): c is string => !!c))].sort(),
  };
}

/** Each tool's upstream as a small number (tools without one share 0). */
function numberedUpstreams(tools: SearchableTool[]): Int32Array {
  const ids = new Map<string, number>();
  return Int32Array.from(tools, (tool) => {
    const key = tool.upstream ?? '';
    let id = ids.get(key);
    if (id === undefined) {
      id = ids.size;
      ids.set(key, id);
    }
    return id;
  });
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
