/**
 * Reads the gateway's own Prometheus metrics (GET /metrics, text exposition format) for figures the
 * load generator cannot see from outside: scope cache hits and misses, the search time histogram.
 */

/** The /metrics text of the gateway at `baseUrl`, or undefined when it serves none. */
export async function scrape(baseUrl: string): Promise<string | undefined> {
  const response = await fetch(`${baseUrl}/metrics`).catch(() => undefined);
  return response?.ok ? response.text() : undefined;
}

/** Sum of the samples of `name` whose labels include every pair of `labels`. */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  const pattern = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
  for (const m of text.matchAll(pattern)) {
    const found = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) sum += Number(m[2]);
  }
  return sum;
}

/** Cumulative bucket counts of histogram `name` by upper bound (`le`, seconds; +Inf as Infinity). */
export function histogramBuckets(text: string, name: string): Map<number, number> {
  const buckets = new Map<number, number>();
  const pattern = new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, 'gm');
  for (const m of text.matchAll(pattern)) {
    const le = /le="([^"]+)"/.exec(m[1]!)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[2]));
  }
  return buckets;
}
