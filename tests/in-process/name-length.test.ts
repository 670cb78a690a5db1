/**
 * `limits.nameLength`: a tool or prompt name or resource URI longer than it is refused by the gateway itself,
 * 400 with -32602 naming the param and the limit, in both eras, and nothing reaches the upstream (a
 * 500 KB name was forwarded, in the hop's Mcp-Name header too, and came back as the upstream's HTTP 431
 * in a -32603). A URI within the limit is forwarded as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';

const MAX = 256;
let gateway: InProcessGateway;

beforeAll(() => {
  gateway = inProcessGateway(
    { limits: { nameLength: MAX }, upstreams: [{ health: { intervalMs: 0 } }] },
    { fake: { tools: [], resources: { [`test://${'a'.repeat(MAX - 7)}`]: 'at the limit' } } },
  );
});
afterAll(async () => {
  await gateway?.close();
});

async function post(
  era: 'modern' | 'legacy',
  id: number,
  method: string,
  params: Record<string, unknown>,
): Promise<{ status: number; messages: Record<string, unknown>[] }> {
  const { headers, body } = rpc(era, id, method, params);
  const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers, body: JSON.stringify(body) }));
  return { status: response.status, messages: (await messagesOf(response)) as Record<string, unknown>[] };
}
const forwarded = (method: string) => gateway.fake!.received.filter((r) => r.method === method).length;

describe.each(['modern', 'legacy'] as const)('a name or URI over limits.nameLength (%s era)', (era) => {
  const long = 'x'.repeat(500_000);
  it.each([
    ['tools/call', '/params/name', { name: long, arguments: {} }],
    ['prompts/get', '/params/name', { name: long }],
    ['resources/read', '/params/uri', { uri: `test://${long}` }],
    ['resources/subscribe', '/params/uri', { uri: `test://${long}` }],
    ['completion/complete', '/params/ref/name', { ref: { type: 'ref/prompt', name: long }, argument: { name: 'a', value: '' } }],
    ['completion/complete', '/params/ref/uri', { ref: { type: 'ref/resource', uri: `test://${long}` }, argument: { name: 'a', value: '' } }],
  ] as const)('refuses %s with -32602 naming %s, forwarding nothing', async (method, path, params) => {
    const before = gateway.fake!.received.length;
    const { status, messages } = await post(era, 7, method, params);
    expect(status).toBe(400);
    expect(messages[0]!.id).toBe(7);
    expect(messages[0]!.error).toMatchObject({
      code: -32602,
      message: `Invalid params: a name or URI longer than limits.nameLength (${MAX}) at ${path}`,
      data: { kind: 'params_over_limit', path, limit: 'limits.nameLength', max: MAX },
    });
    expect(gateway.fake!.received.length).toBe(before);
  });

  it('forwards a URI at the limit, and refuses one a character longer', async () => {
    const uri = `test://${'a'.repeat(MAX - 7)}`;
    expect(uri.length).toBe(MAX);
    const before = forwarded('resources/read');
    const ok = await post(era, 1, 'resources/read', { uri });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.messages[0]!.result)).toContain('at the limit');
    expect(forwarded('resources/read')).toBe(before + 1);
    const over = await post(era, 2, 'resources/read', { uri: `${uri}a` });
    expect((over.messages[0]!.error as { code: number }).code).toBe(-32602);
    expect(forwarded('resources/read')).toBe(before + 1);
  });
});
