/**
 * The protocol edges issue 33 lists, each with its exact answer, on both eras where the era has the
 * edge: a short -32020 (the two disagreeing
 * values, never a whole body twice), a non-UTF-8 charset (415) and invalid UTF-8 bytes (-32700), a
 * tools/call without `name` ("is required"), a 2025-03-26 batch with one bad element (named by index) or
 * of more than 100 messages (refused whole, as the SDK would, but with `data.kind`),
 * an unknown method (404 on 2026-07-28 by SEP-2575; an in-band -32601 on the 2025 leg, where a 404
 * tells a client its session is gone: README compatibility notes), and one `_meta` key for argument errors
 * whether the gateway (call_tool) or the reference upstream (a direct call) checked them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcCall, parseAnswer, ERAS, type RpcCall } from '../fixtures/rpc-requests.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';
import { echoWordTool } from '../fixtures/fake-tools.ts';
import { ARGUMENT_ERRORS_META_KEY } from '../../gateway/checks/input-check.ts';
import { resolveCall } from '../../upstream/server/call-tool.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const CLAIM_KEY = 'io.modelcontextprotocol/protocolVersion';

describe('protocol edges', () => {
  let stack: InProcessGateway;
  beforeAll(async () => {
    stack = await inProcessStack({
      upstream: { era: 'modern', tools: [echoWordTool] },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const send = (call: RpcCall, init: { headers?: Record<string, string>; body?: BodyInit } = {}) =>
    stack.fetch(new Request(call.url, { method: 'POST', headers: { ...call.headers, ...init.headers }, body: init.body ?? call.body }));
  const answerOf = async (response: Response) => parseAnswer(await response.text()) as { error?: { code: number; message: string; data?: unknown } };
  const call = (era: 'legacy' | 'modern', method: string, params?: Record<string, unknown>, path = '/mcp') =>
    rpcCall(era, `${stack.gatewayUrl}${path}`, KEY, method, params);

  describe('-32020 carries the two disagreeing values, short (2026-07-28: the 2025 revisions have no such headers)', () => {
    it('an Mcp-Name disagreeing with a long body name', async () => {
      const name = `x${'y'.repeat(299)}`;
      const response = await send(call('modern', 'tools/call', { name, arguments: {} }), { headers: { 'mcp-name': 'echo_word' } });
      expect(response.status).toBe(400);
      const { error } = await answerOf(response);
      expect(error?.code).toBe(-32020);
      expect(error?.data).toEqual({ kind: 'header_mismatch', mismatch: { header: 'echo_word', body: `${name.slice(0, 64)}…` } });
      expect(error?.message.length).toBeLessThanOrEqual(401);
      expect(error?.message).toMatch(/^Bad Request: the request headers and body disagree: the body carries params\.name="xyyy/);
    });

    it('an Mcp-Name sent as raw UTF-8 (read as Latin-1): data.hint says how a non-ASCII name is sent', async () => {
      const name = 'líst_orders';
      const raw = Buffer.from(name, 'utf8').toString('latin1');
      const response = await send(call('modern', 'tools/call', { name, arguments: {} }), { headers: { 'mcp-name': raw } });
      expect(response.status).toBe(400);
      const { error } = await answerOf(response);
      expect(error?.code).toBe(-32020);
      expect(error?.message).toBe(
        `Bad Request: the request headers and body disagree: the body carries params.name="líst_orders" but the Mcp-Name header names "${raw}"`,
      );
      expect(error?.data).toEqual({
        kind: 'header_mismatch',
        mismatch: { header: raw, body: name },
        hint: `a name outside visible ASCII is sent Base64-encoded: Mcp-Name: =?base64?${Buffer.from(name).toString('base64')}?=`,
      });
    });

    it('an Mcp-Name that is a Base64 sentinel is decoded before it is compared, on the plain path too (wire try-out)', async () => {
      // An intermediary routing on the decoded header would see echo_word while the gateway looked up the literal name.
      const sentinel = `=?base64?${Buffer.from('echo_word').toString('base64')}?=`;
      for (const path of ['/mcp', '/mcp/compact']) {
        const response = await send(call('modern', 'tools/call', { name: sentinel, arguments: {} }, path), { headers: { 'mcp-name': sentinel } });
        expect(response.status, path).toBe(400);
        const { error } = await answerOf(response);
        expect(error?.code).toBe(-32020);
        expect(error?.data).toMatchObject({ kind: 'header_mismatch', mismatch: { header: sentinel, body: sentinel } });
        expect(error?.message).toMatch(/but the Mcp-Name header names "echo_word"$/);
      }
      // Sent as the spec says (a value that looks like the sentinel is itself encoded), the name reaches the lookup.
      const encoded = `=?base64?${Buffer.from(sentinel).toString('base64')}?=`;
      const response = await send(call('modern', 'tools/call', { name: sentinel, arguments: {} }), { headers: { 'mcp-name': encoded } });
      expect(response.status).toBe(200);
      expect((await answerOf(response)).error?.message).toMatch(/^Unknown tool/);
    });

    it("an Mcp-Method disagreeing with the body (the SDK classifier's refusal)", async () => {
      const response = await send(call('modern', 'tools/call', { name: 'echo_word', arguments: {} }), { headers: { 'mcp-method': 'tools/list' } });
      expect(response.status).toBe(400);
      const { error } = await answerOf(response);
      expect(error).toEqual({
        code: -32020,
        message: 'Bad Request: the request headers and body disagree: the body names method tools/call but the Mcp-Method header names tools/list',
        data: { kind: 'header_mismatch', mismatch: { header: 'tools/list', body: 'tools/call' } },
      });
    });

    it('a missing MCP-Protocol-Version header', async () => {
      const modern = call('modern', 'tools/list');
      const { 'mcp-protocol-version': _dropped, ...headers } = modern.headers;
      const response = await stack.fetch(new Request(modern.url, { method: 'POST', headers, body: modern.body }));
      expect(response.status).toBe(400);
      expect((await answerOf(response)).error?.data).toEqual({ kind: 'header_mismatch', mismatch: { header: '(missing)', body: '2026-07-28' } });
    });
  });

  describe.each(ERAS)('%s', (era) => {
    it('refuses a Content-Type charset other than UTF-8 with 415, and takes UTF-8 by any of its labels', async () => {
      const response = await send(call(era, 'tools/list'), { headers: { 'content-type': 'application/json; charset=latin1' } });
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({
        error: {
          code: -32000,
          message:
            'Unsupported Media Type: Content-Type charset "latin1" is not supported; JSON is UTF-8 (RFC 8259 §8.1): send application/json or application/json; charset=utf-8',
          data: { kind: 'unsupported_media_type' },
        },
      });
      for (const type of ['application/json; charset=UTF-8', 'application/json;charset="utf8"']) {
        const ok = await send(call(era, 'tools/list'), { headers: { 'content-type': type } });
        expect(ok.status, type).toBe(200);
      }
    });

    it('refuses a body that is not valid UTF-8 with 400/-32700, nothing forwarded', async () => {
      const before = stack.fake!.received.length;
      const c = call(era, 'tools/call', { name: 'echo_word', arguments: { word: 'QQQ' } });
      const bytes = Buffer.from(c.body.replace('QQQ', '\u00ff\u00fe'), 'latin1');
      const response = await send(c, { body: bytes });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32700, message: 'Parse error: the body is not valid UTF-8 (RFC 8259 §8.1: JSON is UTF-8)', data: { kind: 'parse_error' } },
        id: null,
      });
      expect(stack.fake!.received.length).toBe(before);
    });

    it('reads a tools/call without a name as "is required", one of the wrong type as "must be a string"', async () => {
      const missing = await answerOf(await send(call(era, 'tools/call', { arguments: {} })));
      expect(missing.error).toMatchObject({
        code: -32602,
        message: 'Invalid params: /name is required',
        data: { path: '/name', issues: [{ path: '/name', problem: 'is required' }] },
      });
      const wrong = await answerOf(await send(call(era, 'tools/call', { name: 5, arguments: {} }), era === 'modern' ? { headers: { 'mcp-name': '5' } } : {}));
      expect(wrong.error).toMatchObject({ code: -32602, message: 'Invalid params: /name must be a string' });
    });

    // Longer than limits.nameLength (2,048) is refused before any lookup (name-length.test.ts).
    it('echoes at most 256 characters of an unknown tool name', async () => {
      const name = `x${'y'.repeat(1_999)}`;
      const params = { name, arguments: {} };
      const answer = await answerOf(await send(call(era, 'tools/call', params), era === 'modern' ? { headers: { 'mcp-name': name } } : {}));
      expect(answer.error?.message).toMatch(/^Unknown tool: xy{255}…/);
      expect(answer.error!.message.length).toBeLessThan(400);
    });

    it('answers an unknown method -32601: HTTP 404 on 2026-07-28 (SEP-2575), in band on the 2025 leg', async () => {
      const response = await send(call(era, 'no/such/method', {}));
      expect(response.status).toBe(era === 'modern' ? 404 : 200);
      expect((await answerOf(response)).error).toEqual({ code: -32601, message: 'Method not found' });
    });

    it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])(
      'answers a method named after an Object.prototype member (%s) -32601 under its id, a notification of it 202',
      async (method) => {
        const response = await send(call(era, method, {}));
        expect(response.status).toBe(era === 'modern' ? 404 : 200);
        const answer = (await answerOf(response)) as { id?: unknown; error?: unknown };
        expect(answer.error).toEqual({ code: -32601, message: 'Method not found' });
        expect(answer.id).toBe(1);
        const notification = call(era, method, {});
        const body = JSON.parse(notification.body as string) as Record<string, unknown>;
        delete body.id;
        expect((await send(notification, { body: JSON.stringify(body) })).status).toBe(202);
      },
    );
  });

  // The upstream serves no tasks, so the gateway offers no tasks extension: its methods are unknown methods on
  // 2026-07-28, answered as no/such/method is (before, in band with HTTP 200, or -32020 without an Mcp-Name: try-out).
  it.each([
    ['tasks/get', { taskId: 't-1' }],
    ['tasks/update', { taskId: 't-1', inputResponses: {} }],
    ['tasks/cancel', { taskId: 't-1' }],
  ])('answers %s, unserved, as an unknown method: 404/-32601 with or without its Mcp-Name, or with an ill-formed task id', async (method, params) => {
    const unknown = await send(call('modern', 'no/such/method', params));
    const variants = [
      send(call('modern', method, params), { headers: { 'mcp-name': 't-1' } }),
      send(call('modern', method, params)),
      send(call('modern', method, params), { headers: { 'mcp-name': 'another' } }),
      send(call('modern', method, { ...params, taskId: 't\ud800' }), { headers: { 'mcp-name': 't' } }),
    ];
    const expected = { status: unknown.status, answer: await answerOf(unknown) };
    expect(expected).toEqual({ status: 404, answer: { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } } });
    for (const response of await Promise.all(variants)) expect({ status: response.status, answer: await answerOf(response) }).toEqual(expected);
  });

  it.each([
    [
      'initialize',
      { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      /server\/discover.*MCP-Protocol-Version: 2025-11-25 to initialize/,
    ],
    ['ping', {}, /server\/discover.*MCP-Protocol-Version: 2025-11-25 to ping/],
    // 2026-07-28 changelog 4 and 5: these 2025 methods were removed, for subscriptions/listen and the per-request log level.
    ['logging/setLevel', { level: 'info' }, /send the level with each request as _meta\["io\.modelcontextprotocol\/logLevel"\]/],
    ['resources/subscribe', { uri: 'x://y' }, /open a subscriptions\/listen stream whose params\.notifications\.resourceSubscriptions lists the URIs/],
    ['resources/unsubscribe', { uri: 'x://y' }, /close the subscriptions\/listen stream that names the URI/],
  ])('answers %s under 2026-07-28 404/-32601 saying what to send instead (first-time user: a bare "Method not found")', async (method, params, hint) => {
    const response = await send(call('modern', method, params));
    expect(response.status).toBe(404);
    const answer = await answerOf(response);
    expect(answer.error).toMatchObject({
      code: -32601,
      message: expect.stringMatching(new RegExp(`^Method not found: ${method} is no method of revision 2026-07-28`)),
    });
    expect(answer.error!.message).toMatch(hint);
    // Without the _meta envelope too, as an initialize without one is told about the handshake (-32020) rather than the
    // envelope: before (try-out), -32602 "missing _meta", and with the envelope added the 404.
    const bare = call('modern', method, params);
    const { _meta: _envelope, ...plainParams } = (JSON.parse(bare.body) as { params: Record<string, unknown> }).params;
    const withoutMeta = await send(bare, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: plainParams }) });
    if (method === 'initialize') expect((await answerOf(withoutMeta)).error?.code).toBe(-32020);
    else expect({ status: withoutMeta.status, answer: await answerOf(withoutMeta) }).toEqual({ status: 404, answer });
    // A notification of it is acknowledged as any notification is (review: it got a 404 with an error).
    const notification = call('modern', method, params);
    const body = JSON.parse(notification.body as string) as Record<string, unknown>;
    delete body.id;
    expect((await send(notification, { body: JSON.stringify(body) })).status).toBe(202);
  });

  // README "Malformed input": a 2026-07-28 envelope missing a member or with one of the wrong type is 400 -32602, the
  // issues in data.envelope (a try-out read -32600 in the README).
  it.each([
    ['no _meta', undefined],
    ['no protocolVersion', { 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }],
    ['clientInfo a string', { [CLAIM_KEY]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': 'x', 'io.modelcontextprotocol/clientCapabilities': {} }],
    [
      'clientCapabilities an array',
      { [CLAIM_KEY]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': [] },
    ],
  ] as const)('answers a 2026-07-28 tools/list whose envelope has %s 400 -32602 with the issues in data.envelope', async (_what, meta) => {
    const asked = call('modern', 'tools/list');
    const response = await send(asked, { body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: meta ? { _meta: meta } : {} }) });
    const answer = await answerOf(response);
    expect({ status: response.status, code: answer.error?.code }).toEqual({ status: 400, code: -32602 });
    expect(answer.error?.data).toEqual({ envelope: expect.anything() });
  });

  // server/discover is a 2026-07-28 method: asked in a 2025 revision it is unknown there, answered in band as the 2025 leg
  // answers one. Before (try-out), a _meta claiming 2025-11-25 was told "Invalid _meta envelope for protocol revision
  // 2026-07-28: ... clientCapabilities missing" (a revision it never asked for), a full envelope -32022 "Unsupported protocol
  // version: 2025-11-25", no _meta a bare "Method not found".
  const CLAIM = 'io.modelcontextprotocol/protocolVersion';
  it.each([
    ['a _meta claim and header of 2025-11-25', '2025-11-25', { [CLAIM]: '2025-11-25' }],
    [
      'a whole envelope claiming 2025-11-25',
      '2025-11-25',
      { [CLAIM]: '2025-11-25', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
    ],
    ['no _meta, the header 2025-11-25', '2025-11-25', undefined],
    ['a _meta claim of 2025-06-18 and no header', undefined, { [CLAIM]: '2025-06-18' }],
    ['neither (read as 2025-03-26)', undefined, undefined],
  ] as const)('answers server/discover with %s in band -32601, saying it is a 2026-07-28 method and to initialize', async (_what, header, meta) => {
    const asked = meta?.[CLAIM] ?? header ?? '2025-03-26';
    const { 'mcp-protocol-version': _legacy, ...headers } = call('legacy', 'ping').headers;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'server/discover', params: meta ? { _meta: meta } : {} });
    const sendWith = (accept: string) =>
      stack.fetch(
        new Request(`${stack.gatewayUrl}/mcp`, {
          method: 'POST',
          headers: { ...headers, accept, ...(header ? { 'mcp-protocol-version': header } : {}) },
          body,
        }),
      );
    const expected = {
      jsonrpc: '2.0',
      id: 5,
      error: {
        code: -32601,
        message: `Method not found: server/discover is a method of revision 2026-07-28, not of ${asked}: a ${asked} client sends initialize to learn the server's capabilities, or sends MCP-Protocol-Version: 2026-07-28 with the _meta envelope to discover`,
      },
    };
    // In the representation the 2025 leg would answer in: SSE to a caller naming it, else JSON.
    const sse = await sendWith('application/json, text/event-stream');
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    expect(parseAnswer(await sse.text())).toEqual(expected);
    const json = await sendWith('application/json');
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual(expected);
  });

  // Before (try-out), the SDK's listen router answered each "'notifications' is required and must be a valid SubscriptionFilter", no path.
  it.each([
    [{ notifications: { toolsListChanged: 'yes' } }, '/notifications/toolsListChanged must be a boolean'],
    [{ notifications: 5 }, '/notifications must be an object'],
    [{ notifications: { resourceSubscriptions: 'x' } }, '/notifications/resourceSubscriptions must be an array'],
    [{ resourceSubscriptions: 'x' }, '/notifications is required'],
  ])('answers a subscriptions/listen with the invalid params %j -32602 naming the path: %s', async (params, problem) => {
    const response = await send(call('modern', 'subscriptions/listen', params));
    expect(response.status).toBe(200);
    const answer = await answerOf(response);
    expect(answer.error).toMatchObject({
      code: -32602,
      message: `Invalid params: ${problem}`,
      data: { kind: 'invalid_arguments', path: problem.split(' ')[0] },
    });
  });

  // A response from a client answers a request the server sent; one answering nothing is refused in a batch as alone
  // (before, try-out: the batch's ping was answered and the stray response dropped without a word).
  it('refuses a 2025-03-26 batch holding a response that answers no request, as that response alone is refused', async () => {
    const legacy = call('legacy', 'ping');
    const headers = { 'mcp-protocol-version': '2025-03-26' };
    const stray = { jsonrpc: '2.0', id: 'never-asked', result: {} };
    const alone = await send(legacy, { headers, body: JSON.stringify(stray) });
    const batched = await send(legacy, { headers, body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }, stray]) });
    const expected = { status: alone.status, answer: await answerOf(alone) };
    expect(expected.status).toBe(400);
    expect(expected.answer.error).toMatchObject({ code: -32600, message: expect.stringContaining('the response answers no request') });
    expect({ status: batched.status, answer: await answerOf(batched) }).toEqual(expected);
  });

  it('serves a 2025-03-26 batch of 100 messages and refuses one of 101 whole, with data.kind and the cap', async () => {
    const legacy = call('legacy', 'tools/list');
    const batch = (length: number) => Array.from({ length }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }));
    const served = await send(legacy, { headers: { 'mcp-protocol-version': '2025-03-26' }, body: JSON.stringify(batch(100)) });
    expect(served.status).toBe(200);
    expect((await served.text()).match(/"tools":\[/g)).toHaveLength(100);
    const refused = await send(legacy, { headers: { 'mcp-protocol-version': '2025-03-26' }, body: JSON.stringify(batch(101)) });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: a JSON-RPC batch of 101 messages; at most 100 are served in one batch',
        data: { kind: 'invalid_request', maxBatchMessages: 100 },
      },
    });
  });

  // 2025-03-26 basic/lifecycle: "The initialize request MUST NOT be part of a JSON-RPC batch". Before (try-out), the SDK's
  // 2025 leg answered [initialize, notifications/initialized] "Only one initialization request is allowed" and served [initialize].
  it.each([
    ['with notifications/initialized', '2025-03-26', 0, [{ jsonrpc: '2.0', method: 'notifications/initialized' }]],
    ['alone', '2025-03-26', 0, []],
    ['after a ping', '2025-03-26', 1, [{ jsonrpc: '2.0', id: 2, method: 'ping' }]],
    ['without MCP-Protocol-Version (read as 2025-03-26)', undefined, 0, [{ jsonrpc: '2.0', method: 'notifications/initialized' }]],
  ] as const)('refuses a batch holding initialize %s with 400/-32600 naming the rule and the element', async (_what, version, at, others) => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    };
    const batch = at === 0 ? [initialize, ...others] : [...others, initialize];
    // Without the header at all (not an empty one, which is refused -32022).
    const { 'mcp-protocol-version': _legacy, ...headers } = call('legacy', 'ping').headers;
    const response = await stack.fetch(
      new Request(`${stack.gatewayUrl}/mcp`, {
        method: 'POST',
        headers: { ...headers, ...(version ? { 'mcp-protocol-version': version } : {}) },
        body: JSON.stringify(batch),
      }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Invalid Request: the batch holds an initialize request at /${at}; the initialize request MUST NOT be part of a JSON-RPC batch (2025-03-26 basic/lifecycle): send it alone, then batch what follows it`,
        data: { kind: 'invalid_request', path: `/${at}` },
      },
    });
  });

  it('answers every element of a 2025-03-26 batch that has a method named after an Object.prototype member', async () => {
    const legacy = call('legacy', 'tools/list');
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'constructor' },
    ];
    const response = await send(legacy, { headers: { 'mcp-protocol-version': '2025-03-26' }, body: JSON.stringify(batch) });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"id":2,"error":{"code":-32601,"message":"Method not found"}');
    expect(text).toMatch(/"result":\{\},"jsonrpc":"2.0","id":1\b/);
  });

  it('names the bad element of a 2025-03-26 batch by its index', async () => {
    const legacy = call('legacy', 'tools/list');
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: 'echo_word' },
    ];
    const response = await send(legacy, { headers: { 'mcp-protocol-version': '2025-03-26' }, body: JSON.stringify(batch) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: -32600, message: 'Invalid Request: the body is a batch whose /1/params is not an object, not a JSON-RPC request object' },
      id: null,
    });
    // Elements that are messages are answered each on its own, an invalid call among them by its id.
    const mixed = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
    ];
    const answers = await send(legacy, { headers: { 'mcp-protocol-version': '2025-03-26' }, body: JSON.stringify(mixed) });
    expect(answers.status).toBe(200);
    const text = await answers.text();
    expect(text).toContain('"id":2,"error":{"code":-32602,"message":"Invalid params: /name is required"');
    expect(text).toContain('"tools":[{"name":"echo_word"');
  });

  it.each(ERAS)('%s: call_tool names bad arguments under the same _meta key and shape as a direct call to the reference upstream', async (era) => {
    const c = call(era, 'tools/call', { name: 'call_tool', arguments: { name: 'echo_word', arguments: { word: 5 } } }, '/mcp/compact');
    const answer = parseAnswer(await (await send(c)).text()) as { result?: { isError?: boolean; _meta?: Record<string, unknown> } };
    expect(answer.result?.isError).toBe(true);
    expect(answer.result?._meta?.['ai.cpz/argument-errors']).toEqual([{ path: '/word', message: 'must be string' }]);
    expect(answer.result?._meta).not.toHaveProperty('ai.cpz.gateway/paths');
    const missing = call(era, 'tools/call', { name: 'call_tool', arguments: { arguments: {} } }, '/mcp/compact');
    const refused = parseAnswer(await (await send(missing)).text()) as { result?: { _meta?: Record<string, unknown> } };
    expect(refused.result?._meta?.[ARGUMENT_ERRORS_META_KEY]).toEqual([{ path: '/name', message: 'is required' }]);
    // A direct tools/call on /mcp is checked by the upstream: the reference upstream answers under the same key and shape.
    const direct = resolveCall('list_accounts', { nope: 1 });
    expect('refused' in direct && direct.refused._meta).toEqual({
      [ARGUMENT_ERRORS_META_KEY]: [expect.objectContaining({ path: expect.any(String), message: expect.any(String) })],
    });
  });
});
