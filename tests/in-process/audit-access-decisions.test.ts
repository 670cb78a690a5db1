/**
 * One `access_decision` audit line per prompt, resource or completion request and per resource
 * subscription (obs/audit.ts AccessDecision; a security try-out found refused resources/read, prompts/get,
 * completion/complete and resources/subscribe left no line): who asked, for what, where it went and what
 * came of it. A URI's userinfo and query never reach the line (a signed link's token); the credential is a
 * keyed digest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryFakeUpstream, inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc } from '../helpers/raw-mcp.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { waitFor } from '../helpers/wait.ts';

const audit = new LogCapture();
let gateway: InProcessGateway;
beforeAll(() => {
  gateway = inProcessGateway(
    { anonymous: true, audit: { digestKey: 'access-decisions-key-0123456789' } },
    {
      fake: {
        era: 'legacy',
        tools: [],
        resources: {
          'file:///notes.txt': 'the notes',
          'file:///vanished.txt': { error: { code: -32002, message: 'Resource not found', data: { uri: 'file:///vanished.txt' } } },
        },
      },
      // A second upstream: a URI neither lists is routed to none, and the gateway itself answers it unknown.
      upstreams: { other: inMemoryFakeUpstream({ era: 'legacy', tools: [], resources: { 'file:///other.txt': 'other' } }) },
      audit,
    },
  );
});
afterAll(async () => {
  await gateway?.close();
});

let sent = 0;
/** One request with its own X-Request-Id: the answer's message, and that request's audit lines once written. */
async function ask(era: 'modern' | 'legacy', path: string, method: string, params: Record<string, unknown>) {
  const requestId = `access-${++sent}`;
  const { headers, body } = rpc(era, 1, method, params);
  const [message] = await messagesOf(await post(`${gateway.gatewayUrl}${path}`, body, { ...headers, 'x-request-id': requestId }));
  const lines = () => audit.records().filter((line) => line.requestId === requestId);
  await waitFor(`an audit line of ${requestId}`, () => lines().length > 0, { timeoutMs: 2000 }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { message: message!, lines: lines() };
}

describe('prompt, resource and completion decisions', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: a resource read is one ok line naming the upstream and the URI`, async () => {
      const { message, lines } = await ask(era, '/mcp', 'resources/read', { uri: 'file:///notes.txt' });
      expect(message.result).toBeDefined();
      expect(lines).toEqual([
        expect.objectContaining({
          event: 'access_decision',
          surface: 'full',
          method: 'resources/read',
          upstream: 'fake',
          target: 'file:///notes.txt',
          outcome: 'ok',
          credential: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      ]);
    });

    // Any scheme, parseable or not (review: a URI without `//`, or one URL cannot parse, passed whole).
    it.each([
      ['file:///nothing.txt?token=s3cr3t-link', 'file:///nothing.txt?…'],
      ['urn:x:y?sig=s3cr3t', 'urn:x:y?…'],
      ['custom:thing#s3cr3t', 'custom:thing?…'],
      ['https://user:s3cr3t@h:99999/x?token=s3cr3t', 'https://***@h:99999/x?…'],
    ])(`${era}: an unknown URI (%s) is one not_found line without its userinfo, query or fragment, and no upstream`, async (uri, target) => {
      const { message, lines } = await ask(era, '/mcp/compact', 'resources/read', { uri });
      expect(message.error).toBeDefined();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ event: 'access_decision', surface: 'compact', method: 'resources/read', target, outcome: 'not_found' });
      expect(lines[0]!.upstream).toBeUndefined();
      expect(JSON.stringify(lines[0])).not.toContain('s3cr3t');
    });

    // 2025-11-25 server/resources §Error Handling: -32002; 2026-07-28 basic/index §Error Codes: -32602, never -32002 (a try-out got -32602 on 2025).
    it(`${era}: an unknown URI is answered resource-not-found in the caller's revision, naming the URI`, async () => {
      const { message } = await ask(era, '/mcp', 'resources/read', { uri: 'file:///nowhere.txt' });
      expect(message.error).toMatchObject({
        code: era === 'legacy' ? -32002 : -32602,
        message: 'Resource not found: file:///nowhere.txt',
        data: { kind: 'resource_not_found', uri: 'file:///nowhere.txt' },
      });
    });

    it(`${era}: an upstream's refusal is one error line with its code`, async () => {
      const { message, lines } = await ask(era, '/mcp', 'resources/read', { uri: 'file:///vanished.txt' });
      expect(message.error).toBeDefined();
      expect(lines).toEqual([
        // The code the caller was answered: -32002, which 2026-07-28 names -32602 (error-translation.ts).
        expect.objectContaining({
          event: 'access_decision',
          method: 'resources/read',
          upstream: 'fake',
          outcome: 'error',
          reason: era === 'modern' ? 'upstream_rejected -32602' : 'upstream_rejected -32002',
        }),
      ]);
    });
  }

  it('a 2025-era resources/subscribe is one line, as a read of the same URI', async () => {
    const { message, lines } = await ask('legacy', '/mcp', 'resources/subscribe', { uri: 'file:///notes.txt' });
    expect(message.result).toEqual({});
    expect(lines).toEqual([
      expect.objectContaining({ event: 'access_decision', method: 'resources/subscribe', upstream: 'fake', target: 'file:///notes.txt', outcome: 'ok' }),
    ]);
  });
});

describe("a 2026-07-28 upstream's resource not found (-32602 with data.uri)", () => {
  it('reaches a 2025-era caller as -32002, its message and uri kept, and a 2026-07-28 caller as -32602 (protocol try-out)', async () => {
    const modern = inProcessGateway(
      { anonymous: true },
      {
        fake: {
          era: 'modern',
          tools: [],
          resources: { 'file:///gone.txt': { error: { code: -32602, message: 'Resource not found: file:///gone.txt', data: { uri: 'file:///gone.txt' } } } },
        },
      },
    );
    try {
      for (const era of ['legacy', 'modern'] as const) {
        const { headers, body } = rpc(era, 1, 'resources/read', { uri: 'file:///gone.txt' });
        const [message] = await messagesOf(await post(`${modern.gatewayUrl}/mcp`, body, headers));
        expect(message?.error).toMatchObject({
          code: era === 'legacy' ? -32002 : -32602,
          message: 'Resource not found: file:///gone.txt',
          data: { uri: 'file:///gone.txt' },
        });
      }
    } finally {
      await modern.close();
    }
  });
});
