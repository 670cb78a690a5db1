/**
 * A name, URI or task id with a lone UTF-16 surrogate (JSON `"\ud800"` unpaired), in the params member
 * the 2026-07-28 wire mirrors in `Mcp-Name` (SEP-2243): it has no UTF-8 form, so no header can carry it.
 * One rule for both eras: 400/-32602 naming the member, nothing forwarded. Before (try-out), a 2025-era
 * resources/read or prompts/get reached the 2026-07-28 reference upstream with U+FFFD in the hop's
 * `Mcp-Name`, which it refused (-32020), relayed as -32603 Internal error; a 2026-07-28 caller, who could
 * send no matching header, got -32020 for the header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessReferenceStack, type InProcessReferenceStack } from '../helpers/in-process.ts';
import { encodeParamValue } from '../../gateway/wire/param-value.ts';
import { LEGACY, messagesOf, post, rpc } from '../helpers/raw-mcp.ts';

let stack: InProcessReferenceStack;
beforeAll(async () => {
  stack = await inProcessReferenceStack();
});
afterAll(async () => {
  await stack?.close();
});

const CASES: [string, Record<string, unknown>, string, number][] = [
  ['resources/read', { uri: 'cpzai://\ud800' }, '/params/uri', 8],
  ['prompts/get', { name: 'x\udc00y' }, '/params/name', 1],
  ['tools/call', { name: 'get_\ud800quote', arguments: {} }, '/params/name', 4],
];

describe.each(['/mcp', '/mcp/compact'])('%s', (path) => {
  describe.each([
    ['modern', '2026-07-28'],
    ['legacy', LEGACY],
    ['legacy', '2025-06-18'],
    ['legacy', '2024-11-05'],
  ] as const)('a %s caller (%s)', (era, version) => {
    it.each(CASES)('gets 400/-32602 for a lone surrogate in %s', async (method, params, pointer, at) => {
      const { headers, body } = rpc(era, 3, method, params);
      headers['mcp-protocol-version'] = version;
      // The best a 2026-07-28 client can send: the UTF-8 form, where the surrogate is U+FFFD.
      if (headers['mcp-name'] !== undefined) headers['mcp-name'] = encodeParamValue(headers['mcp-name']);
      const response = await post(`${stack.gatewayUrl}${path}`, body, headers);
      expect(response.status).toBe(400);
      const [answer] = await messagesOf(response);
      expect(answer).toEqual({
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: -32602,
          message: `Invalid params: ${pointer} is not a well-formed string: it holds a lone UTF-16 surrogate at index ${at}, which has no UTF-8 form, so no Mcp-Name header can carry it`,
          data: { kind: 'ill_formed_string', path: pointer },
        },
      });
    });
  });
});

it('takes a surrogate pair (a well-formed astral character) as any other name', async () => {
  const { headers, body } = rpc('legacy', 4, 'resources/read', { uri: 'cpzai://\ud83d\ude00' });
  const response = await post(`${stack.gatewayUrl}/mcp`, body, headers);
  const [answer] = await messagesOf(response);
  expect(answer?.error?.data?.kind).not.toBe('ill_formed_string');
  expect(answer?.error?.code).not.toBe(-32603);
});
