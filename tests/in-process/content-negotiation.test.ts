/**
 * Content negotiation of an MCP POST's answer by RFC 9110 §12.5.1 and §12.4.2 (issue 33), one rule for
 * both eras (gateway/wire/negotiation.ts): the answer comes in the acceptable representation with the
 * highest weight (JSON or SSE; the server's own choice on a tie), a `q=0` refuses a type, media ranges
 * and case are read as the RFC says, and 406 with a JSON-RPC error only when neither is acceptable.
 * Checked on the fast path and on the SDK path (`dispatch.fastPath: false`), for tools/list and tools/call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseRepresentation } from '../../gateway/wire/negotiation.ts';
import { rpcCall, parseAnswer, ERAS, type Era } from '../fixtures/rpc-requests.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';
import { echoWordTool } from '../fixtures/fake-tools.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const upstream = {
  era: 'modern' as const,
  tools: [echoWordTool],
};

/** A request sent without any Accept header. */
const NO_ACCEPT = '(no Accept header)';

/** Accept values and what each era must answer in: 'json', 'sse' or 406. */
const CASES: readonly { accept: string; legacy: 'json' | 'sse' | 406; modern: 'json' | 'sse' | 406 }[] = [
  { accept: 'application/json, text/event-stream', legacy: 'sse', modern: 'json' },
  { accept: 'application/json, text/event-stream;q=0', legacy: 'json', modern: 'json' },
  { accept: 'text/event-stream;q=0, */*', legacy: 'json', modern: 'json' },
  { accept: 'application/json;q=0, text/event-stream', legacy: 'sse', modern: 'sse' },
  { accept: 'application/json;q=0', legacy: 406, modern: 406 },
  { accept: 'text/html', legacy: 406, modern: 406 },
  { accept: 'application/json;charset=latin1', legacy: 406, modern: 406 },
  { accept: 'APPLICATION/JSON, TEXT/EVENT-STREAM', legacy: 'sse', modern: 'json' },
  { accept: 'application/json;q=0.5, text/*', legacy: 'sse', modern: 'sse' },
  { accept: 'text/event-stream;q=0.5, application/json; charset="UTF-8"', legacy: 'json', modern: 'json' },
  { accept: 'application/json', legacy: 'json', modern: 'json' },
  { accept: '*/*', legacy: 'json', modern: 'json' },
  { accept: 'application/json, text/*', legacy: 'json', modern: 'json' },
  // No Accept at all is */* (RFC 9110 §12.5.1), an empty one alike: JSON (before, try-out: SSE on the 2025 leg).
  { accept: NO_ACCEPT, legacy: 'json', modern: 'json' },
  { accept: '', legacy: 'json', modern: 'json' },
];

describe.each([true, false])('content negotiation (fast path %s)', (fastPath) => {
  let stack: InProcessGateway;
  beforeAll(async () => {
    stack = await inProcessStack({ upstream, gateway: { dispatch: { fastPath } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const post = async (era: Era, accept: string, method: string, params?: Record<string, unknown>) => {
    const call = rpcCall(era, `${stack.gatewayUrl}/mcp`, KEY, method, params, 7);
    const { accept: _both, ...headers } = call.headers;
    return stack.fetch(new Request(call.url, { method: 'POST', headers: accept === NO_ACCEPT ? headers : { ...headers, accept }, body: call.body }));
  };

  for (const era of ERAS)
    for (const c of CASES)
      for (const [method, params] of [
        ['tools/list', undefined],
        ['tools/call', { name: 'echo_word', arguments: { word: 'hi' } }],
      ] as const)
        it(`${era} ${method}, Accept: ${c.accept} -> ${c[era]}`, async () => {
          const response = await post(era, c.accept, method, params);
          const type = response.headers.get('content-type') ?? '';
          const body = await response.text();
          const expected = c[era];
          if (expected === 406) {
            expect(response.status).toBe(406);
            expect(type).toMatch(/^application\/json/);
            const answer = JSON.parse(body) as { id: unknown; error: { code: number; message: string } };
            // data.kind as the 413, 415 and 400 edge refusals carry theirs (before, try-out: no data).
            expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000, data: { kind: 'not_acceptable' } } });
            expect(answer.error.message).toBe(
              `Not Acceptable: the Accept header ${JSON.stringify(c.accept)} admits neither application/json nor text/event-stream, the media types a request is answered in; send Accept: application/json, text/event-stream`,
            );
            return;
          }
          expect(response.status).toBe(200);
          expect(type.split(';')[0]).toBe(expected === 'json' ? 'application/json' : 'text/event-stream');
          if (expected === 'json') expect(body.trimStart().startsWith('{')).toBe(true);
          else expect(body.startsWith('event: message\ndata: ')).toBe(true);
          const answer = parseAnswer(body);
          expect(answer.error).toBeUndefined();
          if (method === 'tools/call') expect(answer.result).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
          else expect(answer.result).toMatchObject({ tools: [{ name: 'echo_word' }] });
        });

  it('answers a 2025-03-26 batch in JSON as an array, even a batch of one request (JSON-RPC 2.0 §6)', async () => {
    const call = rpcCall('legacy', `${stack.gatewayUrl}/mcp`, KEY, 'tools/list');
    const send = (batch: unknown[]) =>
      stack.fetch(
        new Request(call.url, {
          method: 'POST',
          headers: { ...call.headers, accept: 'application/json', 'mcp-protocol-version': '2025-03-26' },
          body: JSON.stringify(batch),
        }),
      );
    const ping = { jsonrpc: '2.0', id: 'a', method: 'ping' };
    expect(await (await send([ping])).json()).toEqual([{ jsonrpc: '2.0', id: 'a', result: {} }]);
    expect(await (await send([ping, { jsonrpc: '2.0', method: 'notifications/initialized' }])).json()).toEqual([{ jsonrpc: '2.0', id: 'a', result: {} }]);
  });

  it('answers a 2025-era subscriptions/listen -32601 whatever the Accept: a stream in 2026-07-28 only (client try-out: a 406 about a listen stream)', async () => {
    for (const accept of ['application/json', 'application/json, text/event-stream']) {
      const response = await post('legacy', accept, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
      expect(response.status, accept).toBe(200);
      expect(parseAnswer(await response.text()).error, accept).toMatchObject({ code: -32601 });
    }
    // A 2026-07-28 one still needs the event stream.
    expect((await post('modern', 'application/json', 'subscriptions/listen', { notifications: { toolsListChanged: true } })).status).toBe(406);
  });

  it('answers a notification 202 whatever the Accept (nothing is sent back to negotiate)', async () => {
    const call = rpcCall('legacy', `${stack.gatewayUrl}/mcp`, KEY, 'tools/list');
    const response = await stack.fetch(
      new Request(call.url, {
        method: 'POST',
        headers: { ...call.headers, accept: 'text/html' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      }),
    );
    expect(response.status).toBe(202);
  });
});

describe('chooseRepresentation (RFC 9110 §12.5.1)', () => {
  it('reads weights, ranges, specificity, parameters and case', () => {
    // No Accept (or an empty one) is */*: JSON, the stream only to a caller naming it, or where it is the only answer.
    expect(chooseRepresentation(undefined, 'sse')).toBe('json');
    expect(chooseRepresentation(' ', 'sse')).toBe('json');
    expect(chooseRepresentation('', 'json')).toBe('json');
    expect(chooseRepresentation(undefined, 'sse', true)).toBe('sse');
    // The more specific range wins over */* whatever their order.
    expect(chooseRepresentation('*/*, text/event-stream;q=0', 'sse')).toBe('json');
    expect(chooseRepresentation('text/*;q=0, text/event-stream;q=0.1', 'json')).toBe('sse');
    expect(chooseRepresentation('text/*;q=0.1, text/event-stream;q=0', 'sse')).toBeUndefined();
    // A tie leaves the server's choice, but a stream goes only to a caller naming it; a higher weight overrides it.
    expect(chooseRepresentation('*/*', 'sse')).toBe('json');
    expect(chooseRepresentation('text/event-stream, */*', 'sse')).toBe('sse');
    expect(chooseRepresentation('application/json;q=0.5, text/event-stream;q=0.5', 'sse')).toBe('sse');
    expect(chooseRepresentation('application/json;q=0.5, text/event-stream;q=0.6', 'json')).toBe('sse');
    // Malformed weights and members are ignored; an Accept of only such members accepts nothing.
    expect(chooseRepresentation('application/json;q=2', 'json')).toBeUndefined();
    expect(chooseRepresentation('application/json;q=0.0001, text/event-stream', 'json')).toBe('sse');
    expect(chooseRepresentation('nonsense', 'json')).toBeUndefined();
    expect(chooseRepresentation('application/json;format=x', 'json')).toBeUndefined();
    // Repeated Accept fields are one list; a listen stream is SSE only.
    expect(chooseRepresentation(['text/html', 'application/json'], 'sse')).toBe('json');
    expect(chooseRepresentation('application/json', 'sse', true)).toBeUndefined();
    expect(chooseRepresentation('application/json, text/event-stream;q=0.1', 'sse', true)).toBe('sse');
  });
});
