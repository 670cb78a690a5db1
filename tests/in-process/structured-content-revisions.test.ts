/**
 * A caller of a revision before 2025-06-18 (2025-03-26, 2024-11-05, or no MCP-Protocol-Version header,
 * served as 2025-03-26) is sent no `structuredContent` and no `outputSchema`, which those revisions do
 * not define (wire/server-codec.ts definesStructuredContent): a tools/call answer's JSON stays as a text
 * block when the upstream sent no text (2025-06-18 server/tools §Structured Content, backwards
 * compatibility). From 2025-06-18 on both are kept. A plain request (the fast path's from 2025-06-18 on)
 * and one with `_meta` (the SDK path's) answer alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { structuredTool } from '../fixtures/fake-upstream.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY, messagesOf, post } from '../helpers/raw-mcp.ts';

const DATA = { data: { id: 'd1', amount: '100' } };
const LINKED = [
  { type: 'text', text: 'two files' },
  { type: 'resource_link', uri: 'file:///exports/deals.csv', name: 'deals.csv', mimeType: 'text/csv', description: 'the deals' },
  { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav', annotations: { priority: 0.5 } },
] as const;
const LINK_AS_TEXT = { type: 'text', text: 'Resource link: file:///exports/deals.csv (deals.csv): text/csv; the deals' };
let stack: InProcessGateway;
beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: [
        structuredTool('with_text', () => ({ content: [{ type: 'text', text: 'deal d1: 100' }], structuredContent: DATA })),
        structuredTool('without_text', () => ({ content: [], structuredContent: DATA })),
        {
          definition: { name: 'linked', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
          call: () => ({ content: [...LINKED] }),
        },
      ],
    },
  });
});
afterAll(async () => {
  await stack?.close();
});

async function send(revision: string | undefined, method: string, params: Record<string, unknown>, path: 'plain' | 'meta') {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...FULL_KEY };
  if (revision) headers['mcp-protocol-version'] = revision;
  // `_meta` in a 2025-era request takes the SDK path (wire/requests.ts plainRequest).
  const sent = { ...params, ...(path === 'meta' ? { _meta: { 'example.com/k': 'v' } } : {}) };
  const [answer] = await messagesOf(await post(`${stack.gatewayUrl}/mcp`, { jsonrpc: '2.0', id: 1, method, params: sent }, headers));
  return answer?.result;
}

async function call(revision: string | undefined, name: string, path: 'plain' | 'meta') {
  return (await send(revision, 'tools/call', { name, arguments: {} }, path)) as
    | { content: { type: string; text?: string }[]; structuredContent?: unknown }
    | undefined;
}

async function outputSchemas(revision: string | undefined, path: 'plain' | 'meta') {
  const listed = (await send(revision, 'tools/list', {}, path)) as { tools: { outputSchema?: unknown }[] };
  return listed.tools.map((tool) => tool.outputSchema !== undefined);
}

describe.each(['plain', 'meta'] as const)('structuredContent and outputSchema by revision (%s request)', (path) => {
  it.each(['2024-11-05', '2025-03-26', undefined])('%s: dropped, the text kept or its JSON added as text', async (revision) => {
    expect(await outputSchemas(revision, path)).toEqual([false, false, false]);
    const withText = await call(revision, 'with_text', path);
    expect(withText).not.toHaveProperty('structuredContent');
    expect(withText?.content).toEqual([{ type: 'text', text: 'deal d1: 100' }]);
    const withoutText = await call(revision, 'without_text', path);
    expect(withoutText).not.toHaveProperty('structuredContent');
    expect(withoutText?.content).toEqual([{ type: 'text', text: JSON.stringify(DATA) }]);
  });

  // A resource_link (2025-06-18) or, before 2025-03-26, an audio block: not in the revision's content union (an SDK v1 client drops the whole result).
  it.each([
    [
      '2024-11-05',
      [
        LINKED[0],
        LINK_AS_TEXT,
        {
          type: 'text',
          text: '[audio content (audio/wav) left out: protocol revision 2024-11-05 has no audio content blocks]',
          annotations: { priority: 0.5 },
        },
      ],
    ],
    ['2025-03-26', [LINKED[0], LINK_AS_TEXT, LINKED[2]]],
    [undefined, [LINKED[0], LINK_AS_TEXT, LINKED[2]]],
    ['2025-06-18', LINKED],
  ])('%s: content blocks the revision does not define are told as text', async (revision, content) => {
    expect((await call(revision, 'linked', path))?.content).toEqual(content);
  });

  it.each(['2025-06-18', '2025-11-25'])('%s: kept', async (revision) => {
    expect(await outputSchemas(revision, path)).toEqual([true, true, false]);
    expect((await call(revision, 'with_text', path))?.structuredContent).toEqual(DATA);
    expect((await call(revision, 'without_text', path))?.structuredContent).toEqual(DATA);
  });
});
