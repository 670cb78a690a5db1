import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the proxy received, as it arrived. */
export interface HeldRequest {
  method: string;
  /** Path and query, e.g. `/v1/orders?limit=5`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The request body as received (UTF-8). */
  body: string;
}

export interface HoldingProxy {
  /** Base URL to use instead of the target's, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Every request received so far. */
  readonly received: HeldRequest[];
  /** From now on, requests wait here (received, not forwarded) until {@link release}. */
  hold(): void;
  /** Forwards every waiting request and stops holding. */
  release(): void;
  /** Resolves once `count` requests are waiting (a barrier: all of them are in flight behind the proxy). */
  waiting(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of `target` (a base URL) that can hold requests: put between two real
 * services, it makes "these calls are in flight right now" a fact a test can wait for rather than a
 * timing guess. Bodies are buffered; responses are streamed back unchanged (minus hop-by-hop headers).
 */
export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const received: HeldRequest[] = [];
  let held: (() => void)[] | undefined;
  let barrier: { count: number; resolve: () => void } | undefined;
  const checkBarrier = () => {
    if (barrier && held && held.length >= barrier.count) {
      barrier.resolve();
      barrier = undefined;
    }
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    if (held) {
      await new Promise<void>((resolve) => {
        held!.push(resolve);
        checkBarrier();
      });
    }
    try {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers.set(name, value);
      const response = await fetch(new URL(req.url ?? '/', target), { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (!['connection', 'transfer-encoding', 'content-length', 'content-encoding', 'keep-alive'].includes(name)) out[name] = value;
      });
      res.writeHead(response.status, out);
      // Streamed as it arrives: an SSE response (a listen stream) may stay open for the test's whole run.
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (error) {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const resume of waiting) resume();
    },
    waiting: (count) =>
      new Promise<void>((resolve) => {
        barrier = { count, resolve };
        checkBarrier();
      }),
    close: async () => {
      const waiting = held ?? [];
      held = undefined;
      for (const resume of waiting) resume();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
