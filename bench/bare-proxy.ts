import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
