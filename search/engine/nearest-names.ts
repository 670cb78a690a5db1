/**
 * Names to offer for an unknown tool name ("did you mean"): close spellings by Levenshtein distance
 * first, then what a search for the name's words finds. Never a guess: the caller shows the list.
 */
import { distance } from 'fastest-levenshtein';

/** Highest edit distance still taken as a misspelling of a name of `length` characters. */
export function maxTypoDistance(length: number): number {
  return Math.max(2, Math.floor(length / 3));
}

/**
 * Up to `limit` distinct names from `candidates` (visible tools only) nearest to `name`: misspellings
 * (closest first, ties by name), then `related(name)` matches. `[]` for an empty name.
 */
export function nearestNames(name: string, candidates: readonly string[], limit: number, related: (name: string) => string[]): string[] {
  const wanted = String(name ?? '')
    .trim()
    .toLowerCase();
  if (wanted === '' || limit <= 0) return [];
  const typos = candidates
    .map((candidate) => ({ candidate, d: distance(wanted, candidate.toLowerCase()) }))
    .filter(({ d }) => d <= maxTypoDistance(wanted.length))
    .sort((a, b) => a.d - b.d || (a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0))
    .map(({ candidate }) => candidate);
  return [...new Set([...typos, ...related(wanted)])].slice(0, limit);
}
