/**
 * SIGTERM on the real gateway process (gateway/main.ts), as Kubernetes stops a pod: under a steady load
 * of tool calls, `/readyz` answers 503 at once, every call keeps being served for `shutdown.drainMs`, a
 * long call streaming progress (SSE) finishes after the listener stopped accepting, the upstream
 * connection is closed, and the process exits 0 within drain + grace. Counted: every request that
 * started before readiness flipped succeeded. Also: with `security.allowedHosts` set, the probes answer
 * a pod-IP Host.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { freePort } from '../../helpers/free-port.ts';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;
const DRAIN_MS = 2500;
const GRACE_MS = 8000;
const SLOW_MS = 4000;
const POD_IP_HOST = '10.1.2.3:3000';
const LOOPS = 4;

let upstream: FakeUpstream;
let gateway: ChildProcess;
let url: string;
let stderr = '';
let stdout = '';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }) as Tool;

beforeAll(async () => {
  upstream = await startFakeUpstream({
    tools: [
      {
        definition: tool('work'),
        call: async () => {
          await sleep(10);
          return { content: [{ type: 'text', text: 'worked' }] };
        },
      },
      {
        definition: tool('slow'),
        call: async (_args, context) => {
          const token = context.mcpReq._meta?.progressToken;
          if (token !== undefined) await context.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
          await sleep(SLOW_MS);
          return { content: [{ type: 'text', text: 'slow done' }] };
        },
      },
    ],
  });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_') && name !== 'REDIS_URL'));
  gateway = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', 'config/conformance.yaml'], {
    cwd: ROOT,
    env: {
      ...env,
      GATEWAY_LISTEN_PORT: String(port),
      GATEWAY_UPSTREAMS_0_URL: upstream.url,
      GATEWAY_SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      GATEWAY_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      GATEWAY_SECURITY_ALLOWED_HOSTS: 'mcp.example.com',
      GATEWAY_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway.stdout!.on('data', (chunk) => (stdout += chunk));
  gateway.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor('the gateway to be ready (asked by pod IP)', async () => (await probe('/readyz')).status === 200, { timeoutMs: PROCESS_BUDGET_MS });
}, PROCESS_BUDGET_MS + 30_000);
afterAll(async () => {
  if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
    gateway.kill('SIGKILL');
    await once(gateway, 'exit');
  }
  await upstream?.close();
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** GET with a pod-IP Host header (fetch cannot set Host), as a kubelet probe sends it. */
function probe(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers: { host: POD_IP_HOST }, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function call(name: string, id: number, progress = false): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      authorization: 'Bearer drain-test',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, ...(progress ? { _meta: { progressToken: 'p' } } : {}) } }),
  });
}

interface Outcome {
  started: number;
  ok: boolean;
  error?: string;
}

describe('SIGTERM on the real process', { timeout: 60_000 }, () => {
  it('answers probes by pod IP, flips readiness at once, serves through the drain, finishes a long SSE call, exits 0: 0 requests lost', async () => {
    expect(await probe('/healthz')).toEqual({ status: 200, body: '{"status":"ok"}' });
    const outcomes: Outcome[] = [];
    let running = true;
    let nextId = 1;
    const deadline = Date.now() + 40_000;
    const loops = Array.from({ length: LOOPS }, async () => {
      while (running && Date.now() < deadline) {
        const started = Date.now();
        try {
          const response = await call('work', nextId++);
          const text = await response.text();
          outcomes.push({
            started,
            ok: response.status === 200 && text.includes('worked'),
            error: response.status === 200 ? undefined : `HTTP ${response.status}`,
          });
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause;
          outcomes.push({ started, ok: false, error: cause?.code ?? (error as Error).message });
          // Connection-level: the listener has stopped accepting (or closed a connection that had sent nothing yet).
          break;
        }
      }
    });
    await waitFor('the load to run', () => outcomes.length >= 20, { timeoutMs: 20_000 });

    const slow = call('slow', 0, true);
    await waitFor('the long call to reach the upstream', () => upstream.received.some((r) => r.method === 'tools/call' && r.params.name === 'slow'));
    const sigterm = Date.now();
    gateway.kill('SIGTERM');
    const exited = once(gateway, 'exit') as Promise<[number | null, string | null]>;

    // Readiness flips at once; polled as a kubelet would, by pod IP.
    const draining = await waitFor(
      'readiness to flip to 503',
      async () => {
        const answer = await probe('/readyz').catch(() => undefined);
        return answer?.status === 503 && answer;
      },
      { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 0 },
    );
    const flipped = Date.now();
    expect(JSON.parse(draining.body)).toMatchObject({ status: 'draining' });
    expect((await probe('/healthz')).status).toBe(200);

    const slowResponse = await slow;
    expect(slowResponse.headers.get('content-type')).toMatch(/text\/event-stream/);
    const slowText = await slowResponse.text();
    const [code, signal] = await exited;
    const exitedAt = Date.now();
    running = false;
    await Promise.all(loops);

    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(exitedAt - sigterm).toBeLessThan(DRAIN_MS + GRACE_MS);
    // The long call streamed progress and its result although the listener stopped accepting at drain end.
    expect(slowText).toContain('notifications/progress');
    expect(slowText).toContain('slow done');

    // The gateway's own moment of flipping (its log line's time): a poll may see it late on a loaded machine.
    const drainLine = stdout.split('\n').find((line) => line.includes('"draining: /readyz answers 503, still serving"'));
    const flippedAt = (JSON.parse(drainLine!) as { time: number }).time;
    expect(flippedAt).toBeLessThanOrEqual(flipped);
    const beforeFlip = outcomes.filter((o) => o.started < flippedAt);
    const lost = beforeFlip.filter((o) => !o.ok);
    const duringDrain = outcomes.filter((o) => o.started >= flippedAt && o.ok);
    const after = outcomes.filter((o) => !o.ok);
    // Every request that started before readiness flipped was answered; the drain kept serving new ones.
    expect(lost).toEqual([]);
    expect(beforeFlip.length).toBeGreaterThan(20);
    expect(duringDrain.length).toBeGreaterThan(0);
    // What failed at all started after the flip and failed at the connection once the drain was over
    // (refused, or closed before it sent anything): never an HTTP error, never a request cut mid-answer.
    expect(after.filter((o) => !/^(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)$/.test(o.error ?? ''))).toEqual([]);
    expect(stderr).toContain('SIGTERM: closing the gateway (draining first for shutdown.drainMs, when set)');
    expect(stdout).toContain('"gateway closed"');
    console.log(
      `drain: ${beforeFlip.length} requests before the flip (0 lost), ${duringDrain.length} served while draining, ${after.length} refused after (${[...new Set(after.map((o) => o.error))].join(', ')}); flip ${flippedAt - sigterm} ms after SIGTERM (seen ${flipped - sigterm} ms), exit ${exitedAt - sigterm} ms after`,
    );
  });
});
