// The client of bench/search/e2e-scale.ts, in a worker thread: its requests, answers and garbage stay in
// its own V8 isolate, so the gateway's process pays only for its own (and node:http's) allocations.
// Asks each body in turn on one keep-alive connection (POST, the answer read whole) and reports, per
// request, its start (epoch ms, performance.timeOrigin + now) and length (ms); a non-200 answer or an
// isError result fails the run. Plain JavaScript: a worker thread runs outside any TypeScript loader.
import { Agent, request } from 'node:http';
import { parentPort } from 'node:worker_threads';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function ask(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

parentPort.on('message', async ({ url, headers, bodies, rounds }) => {
  try {
    const spans = [];
    let sample = '';
    for (let r = 0; r < rounds; r += 1) {
      for (const body of bodies) {
        const t = performance.now();
        const { status, text } = await ask(url, headers, body);
        spans.push([performance.timeOrigin + t, performance.now() - t]);
        if (status !== 200 || text.includes('"isError":true')) throw new Error(`search_tools failed (${status}): ${text.slice(0, 300)}`);
        sample = text;
      }
    }
    parentPort.postMessage({ spans, sample });
  } catch (error) {
    parentPort.postMessage({ error: String(error?.stack ?? error) });
  }
});
