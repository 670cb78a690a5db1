import { nearestNames } from '../../search/index.ts';

/** An identifier's words: split at anything but letters and digits, and at camelCase humps; lower case. */
function nameWords(name: string): string[] {
  return name
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * Up to `limit` of `names` nearest to `name` by the names alone, for an unknown tool's refusal over a
 * large set of names (catalog/search-index-cache.ts `nearestFindableNames`): misspellings first
 * (search/index.ts `nearestNames`: Levenshtein within a typo distance, closest first), then names
 * sharing words with `name` (`get_order_book` for `order_book_depth`), a rarer shared word counting more
 * (the sum of log(1 + n / names holding it)), ties by name. A function of `name` and `names` only, so a
 * name outside `names` (a hidden tool's) is never returned and never changes the answer. About a
 * millisecond over 10,000 names, where an index of them takes half a second to build.
 */
export function nearestByName(name: string, names: readonly string[], limit: number): string[] {
  return nearestNames(name, names, limit, () => sharingWords(name, names, limit));
}

function sharingWords(name: string, names: readonly string[], limit: number): string[] {
  const wanted = [...new Set(nameWords(name))];
  if (wanted.length === 0) return [];
  const holders = new Map<string, number>(wanted.map((w) => [w, 0]));
  const sharing: { name: string; words: string[] }[] = [];
  for (const candidate of names) {
    const lower = candidate.toLowerCase();
    // Most names hold none of the words: skipped without being split.
    if (!wanted.some((w) => lower.includes(w))) continue;
    const words = new Set(nameWords(candidate));
    const shared = wanted.filter((w) => words.has(w));
    if (shared.length === 0) continue;
    for (const w of shared) holders.set(w, holders.get(w)! + 1);
    sharing.push({ name: candidate, words: shared });
  }
  return sharing
    .map(({ name: candidate, words }) => ({ candidate, score: words.reduce((sum, w) => sum + Math.log1p(names.length / holders.get(w)!), 0) }))
    .sort((a, b) => b.score - a.score || (a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0))
    .slice(0, limit)
    .map(({ candidate }) => candidate);
}
