/**
 * A loopback hop that adds one credential to every request and otherwise moves bytes unchanged.
 *
 * Why: the conformance suite's server runner (`conformance server --url`) has no option for request
 * headers, and the gateway answers 401 to any request without a credential. The proxy keeps every
 * header the suite sends (Host and Origin included, so the DNS-rebinding scenario still reaches the
 * gateway's own check) and adds the credential headers only when the request carries none of them.
 * Bodies and responses are piped as they arrive (SSE is not buffered).
 *
 * CLI: `tsx upstream/conformance-fixture/credential-proxy.ts --target http://127.0.0.1:3000
 *       --header 'x-cpz-key: cpz_demo_full' --header 'x-cpz-secret: demo-secret-full'`
 * prints `{"url": "http://127.0.0.1:PORT"}` (a base URL: the target's paths are served under it).
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** Starts the proxy on 127.0.0.1 (port 0: a free one). `inject` maps lower-case header names to values. */
export async function startCredentialProxy(opts: { target: string; inject: Record<string, string>; port?: number }) {
  const target = new URL(opts.target);
  const injectNames = Object.keys(opts.inject).map((name) => name.toLowerCase());
  const server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers };
    if (!injectNames.some((name) => name in headers) && !headers.authorization) Object.assign(headers, opts.inject);
    const upstream = request({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      res.flushHeaders();
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`credential-proxy: ${error.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { target: { type: 'string' }, header: { type: 'string', multiple: true }, port: { type: 'string' } } });
  if (!values.target) {
    console.error('credential-proxy: --target URL is required');
    process.exit(2);
  }
  const inject: Record<string, string> = {};
  for (const line of values.header ?? []) {
    const colon = line.indexOf(':');
    if (colon < 1) {
      console.error(`credential-proxy: --header must be "name: value", got "${line.slice(0, 40)}"`);
      process.exit(2);
    }
    inject[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const proxy = await startCredentialProxy({ target: values.target, inject, port: Number(values.port ?? 0) });
  console.log(JSON.stringify({ url: proxy.url }));
  const stop = () => void proxy.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
