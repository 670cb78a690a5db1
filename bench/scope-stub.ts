/**
 * A scope endpoint stand-in for many credentials (the gateway's `scopes.endpoint`): `GET` with
 * `X-CPZ-Key: bench-cred-<n>` answers `{ id, scopes }`, the scopes being one of `sets` random subsets
 * of the platform's resource scopes, drawn per credential by a seeded PRNG. Deterministic, so the
 * bench process computes the same answer ({@link scopesOfKey}) to check each caller's catalogue.
 * Any other key gets 401.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RESOURCE_SCOPES } from '../upstream/platform/credentials.ts';
import { seeded } from '../search/semantic/seeded-random.ts';

export interface ScopeStubOptions {
  /** Distinct scope sets handed out. */
  sets: number;
  seed?: number;
}

const KEY_PREFIX = 'bench-cred-';

/** The credential headers of bench credential `n`. */
export function benchCredential(n: number): Record<string, string> {
  return { 'x-cpz-key': `${KEY_PREFIX}${n}`, 'x-cpz-secret': `bench-secret-${n}` };
}

/** The `sets` scope sets: each scope in with probability 1/2, never empty. */
export function scopeSets({ sets, seed = 42 }: ScopeStubOptions): string[][] {
  const random = seeded(seed);
  return Array.from({ length: sets }, () => {
    const set = RESOURCE_SCOPES.filter(() => random() < 0.5);
    return set.length ? set : [RESOURCE_SCOPES[Math.floor(random() * RESOURCE_SCOPES.length)]!];
  });
}

/** The scopes the stub answers for `key` (the set is picked by a hash of n, so neighbours differ), or undefined (401). */
export function scopesOfKey(key: string, all: string[][]): string[] | undefined {
  if (!key.startsWith(KEY_PREFIX)) return undefined;
  const n = Number(key.slice(KEY_PREFIX.length));
  if (!Number.isSafeInteger(n) || n < 0) return undefined;
  return all[(Math.imul(n ^ 0x9e3779b9, 0x85ebca6b) >>> 0) % all.length];
}

export async function startScopeStub(
  options: ScopeStubOptions,
): Promise<{ url: string; stats(): { requests: number; distinct: number }; close(): Promise<void> }> {
  const all = scopeSets(options);
  let requests = 0;
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    requests++;
    const key = String(req.headers['x-cpz-key'] ?? '');
    seen.add(key);
    const scopes = scopesOfKey(key, all);
    if (!scopes) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: key, scopes }));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/me`,
    stats: () => ({ requests, distinct: seen.size }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
