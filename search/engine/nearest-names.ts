/**
 * Names to offer for an unknown tool name ("did you mean"): close spellings by Levenshtein distance
 * first, then what a search for the name's words finds. Never a guess: the caller shows the list.
 */
import { distance } from 'fastest-levenshtein';

/** Highest edit distance still taken as a misspelling of a name of `length` characters. */
function maxTypoDistance(length: number): number {
  return Math.max(2, Math.floor(length / 3));
}

/**
 * `[index, distance]` of each of `candidates` that `wanted` (lower-cased) may be a misspelling of: within
 * {@link maxTypoDistance} edits, case ignored; in `candidates`' order.
 */
export function misspellingsOf(wanted: string, candidates: readonly string[]): [number, number][] {
  const most = maxTypoDistance(wanted.length);
  const out: [number, number][] = [];
  candidates.forEach((candidate, i) => {
    // Levenshtein is at least the difference in length: most names are skipped without it.
    if (Math.abs(candidate.length - wanted.length) > most) return;
    const d = distance(wanted, candidate.toLowerCase());
    if (d <= most) out.push([i, d]);
  });
  return out;
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
  const typos = misspellingsOf(wanted, candidates)
    .map(([i, d]) => ({ candidate: candidates[i]!, d }))
    .sort((a, b) => a.d - b.d || (a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0))
    .map(({ candidate }) => candidate);
  return [...new Set([...typos, ...related(wanted)])].slice(0, limit);
}
