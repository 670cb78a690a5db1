/**
 * The health probe's reading of an HTTP upstream's answer to its `ping` (gateway/upstream/health.ts): any
 * HTTP answer proves the server alive, except a success in a media type no MCP server answers in (a web page
 * at the upstream's URL: an operator try-out's upstream served one while /readyz said ready and every call
 * failed). Two such answers in a row mark it lost, naming what it answered; one among MCP answers does not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import type { GatewayError } from '../../gateway/errors.ts';
import { HealthProbe } from '../../gateway/upstream/health.ts';
import { waitFor } from '../helpers/wait.ts';

const config = loadConfig({ env: {}, overrides: { upstreams: [{ name: 'pages', url: 'http://127.0.0.1:9/mcp', health: { intervalMs: 20, timeoutMs: 500 } }] } })
  .upstreams[0]!;
const PAGE = () => new Response('<!doctype html><title>Welcome</title>', { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } });
const PONG = () => new Response('{"jsonrpc":"2.0","id":"gateway-health","result":{}}', { status: 200, headers: { 'content-type': 'application/json' } });

let probe: HealthProbe | undefined;
afterEach(() => probe?.stop());

/** A probe of an upstream that is up, answering its pings from `answers` in turn (the last one repeated); the losses it reports. */
function probed(answers: (() => Response)[]): GatewayError[] {
  const losses: GatewayError[] = [];
  let n = 0;
  probe = new HealthProbe({
    config,
    fetchUpstream: async () => answers[Math.min(n++, answers.length - 1)]!(),
    health: () => ({ state: 'up', attempting: false, reconnects: 0 }),
    reconnect: async () => undefined,
    stdioClient: () => undefined,
    busy: () => false,
    lost: (reason) => losses.push(reason),
  });
  return losses;
}

describe('HealthProbe, HTTP upstream', () => {
  it('marks an upstream lost on the second web page in a row, naming what it answered', async () => {
    const losses = probed([PAGE]);
    await waitFor('a loss', () => losses.length > 0, { timeoutMs: 2000 });
    expect(losses[0]!.message).toMatch(/went away \(it answers HTTP 200 with text\/html, not MCP: is upstreams\[\]\.url the MCP endpoint\?\)/);
  });

  // SRE try-out: an upstream answering 503 to everything stayed up and /readyz ready while every call failed.
  it.each([502, 503, 504])('marks an upstream lost on the second HTTP %i in a row', async (status) => {
    const losses = probed([() => new Response('unavailable', { status, headers: { 'content-type': 'text/plain' } })]);
    await waitFor('a loss', () => losses.length > 0, { timeoutMs: 2000 });
    expect(losses[0]!.message).toBe(`upstream pages went away (it answers HTTP ${status} to its health probe)`);
  });

  it('keeps an upstream whose one 503 is among MCP answers', async () => {
    const losses = probed([() => new Response('busy', { status: 503 }), PONG, () => new Response('busy', { status: 503 }), PONG]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(losses).toEqual([]);
  });

  it('keeps an upstream whose web page is one answer among MCP ones, and one answering errors or JSON of any kind', async () => {
    const losses = probed([PAGE, PONG, PAGE, PONG, () => new Response('nope', { status: 404, headers: { 'content-type': 'text/html' } }), PONG]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(losses).toEqual([]);
  });
});
