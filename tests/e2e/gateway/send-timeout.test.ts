/**
 * server.sendTimeoutMs (robustness try-out): a client that sent a tools/call and never read the answer
 * kept that answer in the gateway's memory for as long as it held the socket (100 such sockets and a
 * 4 MB tool answer: 1 GB). Such a connection is now reset once none of its answer has moved for the
 * bound, counted in mcp_send_timeouts_total and logged; a client that reads slowly, a call that runs
 * longer than the bound and an idle SSE stream are not cut.
 */
import { connect, type Socket } from 'node:net';
import { getHeapSnapshot } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { followSse, openStream, rpc } from '../../helpers/raw-mcp.ts';
import { waitFor } from '../../helpers/wait.ts';

const SEND_TIMEOUT_MS = 2000;
// More than the kernel's socket buffers take on loopback (Linux's tcp_wmem default ceiling is 4 MiB),
// so most of the answer waits in the gateway; some multi-byte characters so the length is in bytes.
const BIG_TEXT = '€'.repeat(1000) + 'x'.repeat(16 * 1024 * 1024);
const MARKER = 'UNREAD-ANSWER-MARKER';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    upstream: {
      listChanged: true,
      tools: [
        { definition: { name: 'big', inputSchema: { type: 'object' } }, call: () => ({ content: [{ type: 'text', text: BIG_TEXT }] }) },
        {
          definition: { name: 'marked', inputSchema: { type: 'object' } },
          call: () => ({ content: [{ type: 'text', text: MARKER + 'y'.repeat(16 * 1024 * 1024) }] }),
        },
        {
          definition: { name: 'slow', inputSchema: { type: 'object' } },
          call: async () => {
            await new Promise((resolve) => setTimeout(resolve, 2 * SEND_TIMEOUT_MS));
            return { content: [{ type: 'text', text: 'finally' }] };
          },
        },
      ],
    },
    gateway: { server: { sendTimeoutMs: SEND_TIMEOUT_MS }, limits: { resultBytes: 32 * 1024 * 1024 } },
  });
});
afterAll(async () => {
  await stack?.close();
});

/** The raw HTTP/1.1 text of a 2026-07-28 tools/call of `tool`. */
function rawCall(tool: string): string {
  const { headers, body } = rpc('modern', 1, 'tools/call', { name: tool, arguments: {} });
  const text = JSON.stringify(body);
  const lines = Object.entries({ ...headers, host: new URL(stack.gatewayUrl).host, 'content-length': String(Buffer.byteLength(text)) });
  return `POST /mcp HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n${text}`;
}

function rawSocket(): Promise<Socket> {
  const { hostname, port } = new URL(stack.gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

async function sendTimeouts(): Promise<number> {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  return Number(/^mcp_send_timeouts_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** The JSON body of a raw HTTP/1.1 response with a content-length, and that length. */
function bodyOf(raw: Buffer): { length: number; body: { result?: { content?: { text?: string }[] } } } {
  const split = raw.indexOf('\r\n\r\n');
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(raw.subarray(0, split).toString())?.[1]);
  return { length, body: JSON.parse(raw.subarray(split + 4).toString('utf8')) };
}

describe('server.sendTimeoutMs', () => {
  it('resets a connection whose client reads none of its answer, and counts and logs it', async () => {
    const before = await sendTimeouts();
    const socket = await rawSocket();
    socket.on('error', () => undefined);
    // Never read: what the socket buffers stays in the kernel until resume().
    socket.pause();
    socket.write(rawCall('big'));
    await waitFor('mcp_send_timeouts_total to count the connection', async () => (await sendTimeouts()) === before + 1, { timeoutMs: 20_000, intervalMs: 200 });
    const [line] = stack.logs.records('took none of the answer for server.sendTimeoutMs');
    expect(line).toMatchObject({ level: 40, sendTimeoutMs: SEND_TIMEOUT_MS, requestId: expect.any(String), peer: '127.0.0.1' });
    expect(line.heldBytes).toBeGreaterThan(0);
    // The client finds the connection gone (reset) when it reads at last, with the answer cut short.
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.resume();
    await closed;
    expect(received).toBeLessThan(BIG_TEXT.length);
  });

  it('holds an answer its client has not read once, as bytes, not also as a string', async () => {
    const socket = await rawSocket();
    socket.on('error', () => undefined);
    socket.write(rawCall('marked'));
    // The first bytes say the whole answer has been handed to the socket; then read no more.
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    // The gateway runs in this process: its heap is this heap (a snapshot collects garbage first). The
    // answer's string would be there with its status line in front, as node:http hands it to the socket;
    // a snapshot keeps the first 1,024 characters of each string, which reach into the answer's text.
    let text = '';
    for await (const chunk of getHeapSnapshot()) text += chunk;
    socket.destroy();
    expect(text).not.toMatch(/"HTTP\/1\.1 200 OK(?:[^"\\]|\\.)*UNREAD-ANSWER-MARKER/);
  });

  it('lets a client that reads slowly take its whole answer, over longer than the bound', async () => {
    const socket = await rawSocket();
    const chunks: Buffer[] = [];
    let burst = 0;
    // A megabyte at a time, then a pause well inside the bound: the answer trickles out over seconds.
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      burst += chunk.length;
      if (burst < 1024 * 1024) return;
      burst = 0;
      socket.pause();
      setTimeout(() => socket.resume(), SEND_TIMEOUT_MS / 5);
    });
    const started = performance.now();
    socket.write(rawCall('big'));
    const { length, body } = await waitFor(
      'the whole answer',
      () => {
        if (socket.destroyed) throw new Error('the connection closed');
        const raw = Buffer.concat(chunks);
        const split = raw.indexOf('\r\n\r\n');
        if (split < 0) return undefined;
        const parsed = bodyOf(raw);
        return raw.length - split - 4 >= parsed.length ? parsed : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    // Not a speed check: the pauses alone make it longer than the bound, which is what this test is about.
    expect(performance.now() - started).toBeGreaterThan(SEND_TIMEOUT_MS);
    expect(length).toBeGreaterThan(BIG_TEXT.length);
    expect(body.result?.content?.[0]?.text).toBe(BIG_TEXT);
    socket.destroy();
  });

  it('answers a call that runs longer than the bound', async () => {
    const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'slow', arguments: {} });
    const response = await fetch(stack.mcpUrl, { method: 'POST', headers, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: { content: [{ type: 'text', text: 'finally' }] } });
  });

  it('keeps an idle SSE stream that its client reads open past the bound', async () => {
    const { headers, body } = rpc('modern', 'listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const stream = await openStream(stack.mcpUrl, body, headers);
    try {
      const messages = followSse(stream);
      await messages.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
      await new Promise((resolve) => setTimeout(resolve, 3 * SEND_TIMEOUT_MS));
      expect(stream.destroyed).toBe(false);
      stack.fake!.setTools([{ definition: { name: 'renamed', inputSchema: { type: 'object' } } }]);
      await messages.waitFor((m) => m.method === 'notifications/tools/list_changed');
    } finally {
      stream.destroy();
    }
  });
});
