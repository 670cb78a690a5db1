import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScopeEndpointMode = 'ok' | 'no_field' | 'error' | 'unauthorized';

export interface ScopeEndpoint {
  /** Full URL of the profile route, …/v1/me. */
  url: string;
  /** Requests received so far. */
  readonly hits: number;
  mode: ScopeEndpointMode;
  /** Delay before answering, in ms (a slow endpoint). */
  delayMs: number;
  close(): Promise<void>;
}

/**
 * A stand-in for the platform's `GET /v1/me`: answers `{ id, scopes }` for the key in X-CPZ-Key
 * (or the bearer token), or misbehaves on purpose (`mode`, `delayMs`).
 */
export async function startScopeEndpoint(scopesByKey: Record<string, string[]>, options: { mode?: ScopeEndpointMode; delayMs?: number } = {}): Promise<ScopeEndpoint> {
  let hits = 0;
  const state = { mode: options.mode ?? 'ok', delayMs: options.delayMs ?? 0 };
  const server = createServer((req, res) => {
    hits++;
    const key = String(req.headers['x-cpz-key'] ?? req.headers.authorization?.replace(/^Bearer\s+/i, '') ?? '');
    const answer = () => {
      if (state.mode === 'unauthorized' || !(key in scopesByKey)) return res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      if (state.mode === 'error') return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
      const body = state.mode === 'no_field' ? { id: key } : { id: key, scopes: scopesByKey[key] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (state.delayMs > 0) setTimeout(answer, state.delayMs).unref();
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/me`,
    get hits() {
      return hits;
    },
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms) {
      state.delayMs = ms;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback URL nothing listens on (a port bound and released). */
export async function unreachableUrl(path = '/v1/me'): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}${path}`;
}
