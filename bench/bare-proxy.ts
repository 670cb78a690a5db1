import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/**
 * A proxy that does nothing but relay bytes (node:http, keep-alive to the target, no parsing): the
 * floor for any gateway that runs as its own process. The overhead part times a tools/call through
 * it next to the same call through the gateway, so the cost of the extra process hop on the machine
 * at hand is measured, not assumed. Answers 502 when the target cannot be reached.
 * @param target the MCP URL to relay to, e.g. http://127.0.0.1:3001/mcp
 * @returns the proxy's MCP URL (same path as the target) and a close function
 */
export async function startBareProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server = createServer((req, res) => {
    const out = request({ host: to.hostname, port: to.port, path: to.pathname, method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  return listening(server, to.pathname, async () => agent.destroy());
}

/**
 * The floor of a gateway that reads both messages and nothing more: node:http in, the request body read
 * whole and `JSON.parse`d, re-serialised and sent on with undici (the gateway's own client, keep-alive), the
 * answer read whole, parsed and serialised again when it is JSON, and written back with its status and
 * content type. No credential, no check, no log, no metric. What the gateway spends above this is its own
 * work (authentication, policy, checks, accounting), not the cost of being a parsing HTTP hop in Node
 * (docs/performance.md). Answers 502 when the target cannot be reached, 400 for a body that is no JSON.
 * @param target the MCP URL to relay to
 * @returns the relay's MCP URL (same path as the target) and a close function
 */
export async function startParsingRelay(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const pool = new Pool(to.origin, { connections: 256 });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let message: unknown;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    delete headers['content-length'];
    try {
      const answer = await pool.request({ path: to.pathname, method: 'POST', headers, body: JSON.stringify(message) });
      const text = await answer.body.text();
      const type = String(answer.headers['content-type'] ?? 'application/json');
      res.writeHead(answer.statusCode, { 'content-type': type });
      res.end(type.includes('json') ? JSON.stringify(JSON.parse(text)) : text);
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  return listening(server, to.pathname, () => pool.close());
}

/** Listens on a free loopback port; `close` ends every connection, the server, then the relay's client (`release`). */
async function listening(server: Server, path: string, release: () => Promise<void>): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await release();
    },
  };
}
