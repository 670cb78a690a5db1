/**
 * 2025-era (initialize-based) clients across two gateway processes behind nginx, measured for the Helm
 * chart's choice (deploy/helm/mcp-gateway/README.md). The gateway serves that era statelessly (no
 * Mcp-Session-Id of its own), so initialize, lists and calls may land on either replica: 0 failures
 * round robin. The one exchange bound to a replica is a call whose upstream asks its client for input
 * mid-call (elicitation): the question goes out on the call's own stream, held by one replica, and the
 * client POSTs its answer as a new request. Round robin, answers that reach the other replica are refused
 * as unknown and those calls fail; hashed on the credential header (nginx `hash $http_x_cpz_key`, what
 * the chart's docs configure on the ingress), every answer reaches the replica holding its call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startAskingUpstream } from '../../fixtures/fake-tools.ts';
import { freePort } from '../../helpers/free-port.ts';
import { startGatewayOver } from '../../helpers/stack.ts';
import { waitFor } from '../../helpers/wait.ts';

const CLIENTS = 8;
const dir = mkdtempSync(join(tmpdir(), 'legacy-replicas-'));
let upstream: Awaited<ReturnType<typeof startAskingUpstream>>;
const gateways: RunningGateway[] = [];
let nginx: ChildProcess;
let roundRobin: string;
let byCredential: string;

beforeAll(async () => {
  upstream = await startAskingUpstream();
  // A short upstream budget: a call whose answer went to the other replica gives up within it.
  for (let i = 0; i < 2; i++) gateways.push(await startGatewayOver(upstream.url, { timeoutMs: 3000 }));
  const [rr, hashed] = [await freePort(), await freePort()];
  const servers = gateways.map((g) => `server ${new URL(g.url).host};`).join(' ');
  const location = (pool: string) =>
    `location / { proxy_pass http://${pool}; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $http_host; proxy_buffering off; proxy_read_timeout 60s; }`;
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off; worker_processes 1; pid ${dir}/nginx.pid; error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream round_robin { ${servers} }
  upstream by_credential { hash $http_x_cpz_key consistent; ${servers} }
  server { listen 127.0.0.1:${rr}; ${location('round_robin')} }
  server { listen 127.0.0.1:${hashed}; ${location('by_credential')} }
}
`,
  );
  nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  roundRobin = `http://127.0.0.1:${rr}`;
  byCredential = `http://127.0.0.1:${hashed}`;
  await waitFor('nginx to proxy', async () => (await fetch(`${roundRobin}/healthz`)).ok && (await fetch(`${byCredential}/healthz`)).ok, { timeoutMs: 15_000 });
}, 60_000);
afterAll(async () => {
  nginx?.kill('SIGTERM');
  await Promise.allSettled(gateways.map((g) => g.close()));
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One 2025-era client (v1 SDK) through `base`: initialize, tools/list, ping, then `ask_name` answered by elicitation. */
async function session(base: string, n: number): Promise<{ plain: boolean; asked: boolean }> {
  const client = new V1Client({ name: `replicas-${n}`, version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: `client-${n}` } }));
  const headers = { 'x-cpz-key': `key-${n}`, 'x-cpz-secret': `secret-${n}` };
  let plain = false;
  let asked = false;
  try {
    await client.connect(new V1Transport(new URL(`${base}/mcp`), { requestInit: { headers } }));
    const { tools } = await client.listTools();
    await client.ping();
    plain = tools.some((t) => t.name === 'ask_name');
    const result = (await client.callTool({ name: 'ask_name', arguments: {} })) as { isError?: boolean; content: { text?: string }[] };
    asked = !result.isError && result.content[0]?.text === `hello client-${n}`;
  } catch {
    // counted as not done
  } finally {
    await client.close().catch(() => undefined);
  }
  return { plain, asked };
}

async function measure(base: string) {
  const outcomes = await Promise.all(Array.from({ length: CLIENTS }, (_, n) => session(base, n)));
  return { plainFailed: outcomes.filter((o) => !o.plain).length, askFailed: outcomes.filter((o) => !o.asked).length };
}

describe('2025-era clients across two gateway replicas behind nginx', { timeout: 60_000 }, () => {
  it('round robin: initialize, lists and pings never fail (stateless); a mid-call answer reaching the other replica does', async () => {
    const { plainFailed, askFailed } = await measure(roundRobin);
    console.log(`round robin: ${CLIENTS} clients, ${plainFailed} failed initialize/list/ping, ${askFailed} of ${CLIENTS} elicited calls failed`);
    expect(plainFailed).toBe(0);
    expect(askFailed).toBeGreaterThan(0);
  });

  it('hashed on the credential header: every elicited call finishes', async () => {
    const { plainFailed, askFailed } = await measure(byCredential);
    console.log(`hash $http_x_cpz_key: ${CLIENTS} clients, ${plainFailed} failed initialize/list/ping, ${askFailed} of ${CLIENTS} elicited calls failed`);
    expect({ plainFailed, askFailed }).toEqual({ plainFailed: 0, askFailed: 0 });
  });
});
