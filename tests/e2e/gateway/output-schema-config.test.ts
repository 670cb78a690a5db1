/**
 * An `upstreams[].outputSchemas` override that does not compile is the operator's to fix: refused at start
 * and on reload, naming the key and the engine's reason (it was advertised as written and the tool served
 * unchecked, one warning at its first call; try-out). The real gateway, its upstream in memory.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { anonymousGatewayConfig } from '../../helpers/stack.ts';
import { ConfigError } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { fakeUpstream } from '../../fixtures/fake-upstream.ts';

const echo = fakeUpstream({
  tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } as Tool, call: () => ({ content: [] }) }],
});

const config = (outputSchemas: Record<string, Record<string, unknown>>): GatewayConfig =>
  anonymousGatewayConfig({ upstreams: [{ name: 'echo', url: 'http://echo.upstream.invalid/mcp', health: { intervalMs: 0 }, outputSchemas }] });

const broken = { echo: { type: 'object', properties: { n: { type: 'integr' } } } };

let running: RunningGateway | undefined;
afterAll(async () => {
  await running?.close();
});

describe('an outputSchemas override that does not compile', () => {
  it('is refused at start and on reload, naming the key', async () => {
    const refusal = await startGateway(config(broken), { upstreamTransport: () => echo.fetch }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as ConfigError).message).toMatch(/upstreams\[0\]\.outputSchemas\.echo: is not a JSON Schema that compiles: .*type/);
    running = await startGateway(config({ echo: { type: 'object', properties: { n: { type: 'integer' } } } }), { upstreamTransport: () => echo.fetch });
    await expect(running.reload(config(broken))).rejects.toThrow(/upstreams\[0\]\.outputSchemas\.echo: is not a JSON Schema that compiles/);
    // A pattern RE2 cannot run compiles (it is left unchecked in an upstream's own schema), but is the operator's to fix.
    const lookahead = { echo: { type: 'object', properties: { n: { type: 'string', pattern: '(?=a)a' } } } };
    await expect(running.reload(config(lookahead))).rejects.toThrow(
      /upstreams\[0\]\.outputSchemas\.echo: has a pattern the gateway cannot check: pattern "\(\?=a\)a"/,
    );
  });
});
