/**
 * The MCP route reads the POST body raw and parses it once (gateway/http/mcp-endpoint.ts readBody):
 * the rules co-body applied still hold (413 over the limit without a Content-Length too, prototype
 * poisoning refused, plain, \u-escaped or gzipped: valid JSON, so -32600, not -32700; a JSON scalar is valid JSON, so -32600), a string value that merely mentions
 * `__proto__` is an ordinary argument, and a gzip-encoded request body is still inflated.
 */
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessStack, type InProcessGateway as Stack } from '../helpers/in-process.ts';

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  'x-cpz-key': 'raw',
  'x-cpz-secret': 'raw-secret',
};

let stack: Stack;
beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } }, call: (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }) }],
    },
    gateway: { limits: { bodyBytes: 4096 } },
  });
});
afterAll(async () => {
  await stack?.close();
});

async function post(body: string | Buffer | Readable, headers: Record<string, string> = {}) {
  const sent = body instanceof Readable ? (Readable.toWeb(body) as ReadableStream) : typeof body === 'string' ? body : new Uint8Array(body);
  // A stream body needs `duplex: 'half'` (Fetch standard), which lib.dom's RequestInit does not declare yet.
  const init = { method: 'POST', headers: { ...HEADERS, ...headers }, body: sent, duplex: 'half' } as RequestInit;
  const response = await stack.fetch(new Request(stack.mcpUrl, init));
  return { status: response.status, text: await response.text() };
}
const callBody = (args: string) => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":${args}}}`;
const errorCode = (text: string) => (JSON.parse(text.replace(/^event: message\ndata: /, '').trim()) as { error?: { code: number } }).error?.code;

describe('the raw body read on the MCP route', () => {
  it('answers 413 for a chunked body over limits.bodyBytes (no Content-Length to go by)', async () => {
    async function* chunks() {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(1024, 0x20);
    }
    const { status, text } = await post(Readable.from(chunks()));
    expect(status).toBe(413);
    expect(errorCode(text)).toBe(-32000);
  });

  it('answers 400/-32600 for a JSON scalar: valid JSON that is no request object (JSON-RPC 2.0 §5.1 Invalid Request)', async () => {
    const { status, text } = await post('42');
    expect(status).toBe(400);
    expect(errorCode(text)).toBe(-32600);
  });

  const NOT_AN_ID = (pointer: string) =>
    `${pointer} is not a string or an integer of at most 9007199254740991 in magnitude (a larger one cannot be echoed exactly: send it as a string)`;

  it.each([
    ['{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}', 9007199254740991],
    ['{"jsonrpc":"2.0","id":"9007199254740993","method":"ping"}', '9007199254740993'],
  ])('echoes the largest exact integer id and a big id sent as a string: %s', async (body, id) => {
    const { status, text } = await post(body);
    expect(status).toBe(200);
    // The 2025 leg answers as one SSE message event.
    expect(JSON.parse(/^data: (.*)$/m.exec(text)![1]!)).toMatchObject({ id, result: {} });
  });

  it.each([
    ['{"jsonrpc":"1.0","id":1,"method":"ping"}', '/jsonrpc is not "2.0"'],
    ['{"id":1,"method":"ping"}', '/jsonrpc is not "2.0"'],
    ['{"jsonrpc":"2.0","id":1}', '/method is missing (and it is no response: no result or error)'],
    // A response without its id (wire try-out: it was told it had no result).
    ['{"jsonrpc":"2.0","result":{}}', '/id is missing (a response carries the id of the request it answers)'],
    ['{"jsonrpc":"2.0","id":1,"method":5}', '/method is not a string'],
    ['{"jsonrpc":"2.0","id":null,"method":"ping"}', NOT_AN_ID('/id')],
    ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', NOT_AN_ID('/id')],
    ['{"jsonrpc":"2.0","id":{},"method":"ping"}', NOT_AN_ID('/id')],
    // Read rounded by JSON.parse (…993 becomes …992): echoing it would answer an id the caller never sent.
    ['{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', NOT_AN_ID('/id')],
    ['{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}', NOT_AN_ID('/id')],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":18446744073709551616}}}', NOT_AN_ID('/params/_meta/progressToken')],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}', '/params is not an object'],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}', '/params is not an object'],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":"x"}}', '/params/_meta is not an object'],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":true}}}', NOT_AN_ID('/params/_meta/progressToken')],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1.5}}}', NOT_AN_ID('/params/_meta/progressToken')],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":null}}}', NOT_AN_ID('/params/_meta/progressToken')],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":true}', '/extra is no member of a JSON-RPC request (jsonrpc, id, method, params)'],
    ['{"jsonrpc":"2.0","method":"notifications/initialized","a/b~c":1}', '/a~1b~0c is no member of a JSON-RPC request (jsonrpc, id, method, params)'],
  ])('answers 400/-32600 naming the malformed member of %s', async (body, named) => {
    const { status, text } = await post(body);
    expect(status).toBe(400);
    const answer = JSON.parse(text) as { id: unknown; error: { code: number; message: string } };
    expect(answer.error.code).toBe(-32600);
    expect(answer.error.message).toBe(`Invalid Request: the body is a message whose ${named}, not a JSON-RPC request object`);
    // JSON-RPC 2.0 §5: the id is echoed when it could be read, else null.
    const sent = (JSON.parse(body) as { id?: unknown }).id;
    expect(answer.id).toBe(typeof sent === 'string' || Number.isSafeInteger(sent) ? sent : null);
  });

  it.each([
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":5}]', '/1/method is not a string'],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"},7]', '/1 is not an object'],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}]', '/0/params is not an object'],
    [
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","x":0}]',
      '/1/x is no member of a JSON-RPC request (jsonrpc, id, method, params)',
    ],
  ])('answers a 2025-03-26 batch with a malformed element %s with 400/-32600 naming it', async (body, named) => {
    const { status, text } = await post(body, { 'mcp-protocol-version': '2025-03-26' });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: `Invalid Request: the body is a batch whose ${named}, not a JSON-RPC request object`, data: { kind: 'invalid_request' } },
    });
    const fine = await post('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]', { 'mcp-protocol-version': '2025-03-26' });
    expect(fine.status).toBe(200);
  });

  it.each([
    ['a __proto__ key', callBody('{"__proto__":{"polluted":true}}'), '/params/arguments/__proto__'],
    ['an escaped __proto__ key', callBody('{"\\u005f_proto__":{"polluted":true}}'), '/params/arguments/__proto__'],
    ['constructor.prototype', callBody('{"constructor":{"prototype":{"polluted":true}}}'), '/params/arguments/constructor/prototype'],
    ['a __proto__ key in an array', callBody('{"x":[1,{"__proto__":{"polluted":true}}]}'), '/params/arguments/x/1/__proto__'],
  ])('answers 400/-32600 naming prototype poisoning for %s, plain and gzipped', async (_what, body, at) => {
    for (const [sent, headers] of [
      [body, {}],
      [gzipSync(body), { 'content-encoding': 'gzip' }],
    ] as const) {
      const { status, text } = await post(sent, headers);
      expect(status).toBe(400);
      expect(errorCode(text)).toBe(-32600);
      expect(text).toContain('prototype poisoning');
    }
    // Read by the gateway itself (no Content-Encoding): the key is named and the request's id echoed.
    const { text } = await post(body);
    expect(JSON.parse(text)).toMatchObject({
      id: 7,
      error: { message: `Invalid Request: the body holds the key ${at} (refused: prototype poisoning); rename the key` },
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses an argument JSON.parse would not read as written (400/-32602 naming it, id echoed), nothing forwarded', async () => {
    const calls = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;
    const before = calls();
    for (const [args, named, path] of [
      ['{"n":12345678901234567890}', '/params/arguments/n is 12345678901234567890, a number JSON.parse reads as 12345678901234567000', '/params/arguments/n'],
      ['{"n":[1e400]}', '/params/arguments/n/0 is 1e400, a number JSON.parse reads as Infinity (sent on as null)', '/params/arguments/n/0'],
    ] as const) {
      const { status, text } = await post(callBody(args));
      expect(status).toBe(400);
      // The place in data.path too, as the input limits' refusals give it (client try-out: in the message only).
      expect(JSON.parse(text)).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32602, message: `Invalid params: ${named}: send it as a string`, data: { kind: 'inexact_number', path } },
      });
    }
    // A float id JSON.parse reads as an integer: named, and not echoed as the integer.
    const floatId = await post('{"jsonrpc":"2.0","id":1.0000000000000001,"method":"ping"}');
    expect(floatId.status).toBe(400);
    expect(JSON.parse(floatId.text)).toMatchObject({
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: /id is 1.0000000000000001, a number JSON.parse reads as 1: send it as a string',
        data: { path: '/id' },
      },
    });
    const zipped = await post(gzipSync(callBody('{"n":12345678901234567890}')), { 'content-encoding': 'gzip' });
    expect(zipped.status).toBe(400);
    expect(zipped.text).toContain('/params/arguments/n is 12345678901234567890');
    expect(calls()).toBe(before);
    // Exact however large, and digits in a string: forwarded as they are.
    const { status, text } = await post(callBody('{"n":1e300,"m":100000000000000000000,"s":"12345678901234567890"}'));
    expect(status).toBe(200);
    expect(text).toContain('{\\"n\\":1e+300,\\"m\\":100000000000000000000,\\"s\\":\\"12345678901234567890\\"}');
  });

  it('lists arguments over an input limit in _meta["ai.cpz/argument-errors"] by JSON Pointer, as the schema checks do', async () => {
    const { status, text } = await post(callBody(`{"x":${'['.repeat(70)}${']'.repeat(70)}}`));
    expect(status).toBe(200);
    const { result } = JSON.parse(text.replace(/^event: message\ndata: /, '').trim()) as {
      result: { isError: boolean; content: { text: string }[]; _meta: Record<string, unknown> };
    };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toBe('Invalid arguments for echo: JSON nesting deeper than limits.jsonDepth (64) at /arguments/x/0/0/0/0/0/0/….');
    // In _meta the whole pointer (the text shows it cut): a client may resolve it.
    expect(result._meta['ai.cpz/argument-errors']).toEqual([{ path: `/x${'/0'.repeat(63)}`, message: 'JSON nesting deeper than limits.jsonDepth (64)' }]);
  });

  it('forwards a string argument that only mentions __proto__ and constructor', async () => {
    const { status, text } = await post(callBody('{"note":"__proto__ and constructor are words"}'));
    expect(status).toBe(200);
    expect(text).toContain('__proto__ and constructor are words');
  });

  it('inflates a gzip-encoded request body', async () => {
    const { status, text } = await post(gzipSync(callBody('{"zipped":true}')), { 'content-encoding': 'gzip' });
    expect(status).toBe(200);
    expect(text).toContain('zipped');
  });

  it.each([
    ['a plain body', Buffer.from(callBody('{}'))],
    ['a truncated gzip body', gzipSync(callBody('{"zipped":true}')).subarray(0, 20)],
  ])('answers 400/-32700 naming the coding for %s sent as gzip', async (_what, body) => {
    const { status, text } = await post(body, { 'content-encoding': 'gzip' });
    expect(status).toBe(400);
    expect(errorCode(text)).toBe(-32700);
    expect(text).toContain('not valid gzip data');
  });
});
