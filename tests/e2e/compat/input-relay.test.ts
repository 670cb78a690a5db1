/**
 * Server-to-client requests of a 2025-era upstream relayed to a 2026-07-28 caller (issue 18): the
 * upstream (tests/fixtures/asking-upstream.ts, sessionful, v1 SDK) asks for an elicitation, a sampling
 * or the roots in the middle of a call, on the call's stream; the gateway answers the caller with an
 * InputRequiredResult (spec 2026-07-28 basic/patterns/mrtr) and the caller's retry resumes the same
 * upstream call with the answers. Driven by the v2 client, which fulfils input requests through its
 * registered handlers and retries by itself.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { fetchWithHeaders } from '../../helpers/clients.ts';
import { startAskingUpstream } from '../../fixtures/asking-upstream.ts';
import { FULL_KEY } from '../../helpers/raw-mcp.ts';
import { startGatewayOver } from '../../helpers/stack.ts';

let upstream: Awaited<ReturnType<typeof startAskingUpstream>>;
let gateway: RunningGateway;
const url = () => `${gateway.url.replace(/\/mcp$/, '')}/mcp`;

beforeAll(async () => {
  upstream = await startAskingUpstream();
  gateway = await startGatewayOver(upstream.url);
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function modernClient(capabilities: Record<string, unknown>, seen: { method: string; params: unknown }[]): Promise<Client> {
  const client = new Client({ name: 'relay-tests', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  // The v2 client accepts a handler only for a capability it declares.
  if (capabilities.elicitation)
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push({ method: 'elicitation/create', params: request.params });
      return { action: 'accept', content: { name: 'Ada' } };
    });
  if (capabilities.sampling)
    client.setRequestHandler('sampling/createMessage', async (request) => {
      seen.push({ method: 'sampling/createMessage', params: request.params });
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'gateways relay' } };
    });
  if (capabilities.roots)
    client.setRequestHandler('roots/list', async () => {
      seen.push({ method: 'roots/list', params: {} });
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    });
  await client.connect(new StreamableHTTPClientTransport(new URL(url()), { fetch: fetchWithHeaders(FULL_KEY) }));
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('a 2025-era upstream asking mid-call, a 2026-07-28 caller answering in band', () => {
  it('relays elicitation, sampling and roots, and the one upstream call finishes with the answers', async () => {
    const seen: { method: string; params: unknown }[] = [];
    const client = await modernClient({ elicitation: { form: {} }, sampling: {}, roots: {} }, seen);
    try {
      expect(text(await client.callTool({ name: 'ask_name', arguments: {} }))).toBe('hello Ada');
      expect(text(await client.callTool({ name: 'summarise', arguments: {} }))).toBe('summary: gateways relay');
      expect(text(await client.callTool({ name: 'count_roots', arguments: {} }))).toBe('1 roots: file:///work');
    } finally {
      await client.close();
    }
    expect(seen.map((s) => s.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
    expect(seen[0]!.params).toMatchObject({ message: 'What is your name?', requestedSchema: { properties: { name: { type: 'string' } } } });
    expect(upstream.answers.map((a) => a.tool)).toEqual(['ask_name', 'summarise', 'count_roots']);
    expect(upstream.answers[0]!.answer).toEqual({ action: 'accept', content: { name: 'Ada' } });
  });

  it('never asks a caller for what its capabilities do not offer: the upstream gets a refusal instead', async () => {
    const seen: { method: string; params: unknown }[] = [];
    const client = await modernClient({}, seen);
    try {
      const result = (await client.callTool({ name: 'ask_name', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
    expect(seen).toEqual([]);
  });
});
