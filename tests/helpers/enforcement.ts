import { expect } from 'vitest';
import type { HeldRequest } from './holding-proxy.ts';

/** A credential no scope source knows (key form). */
export const UNKNOWN_KEY = { 'x-cpz-key': 'cpz_made_up', 'x-cpz-secret': 'not-a-secret' } as const;
/** A bearer token no scope source knows. */
export const UNKNOWN_BEARER = { authorization: 'Bearer nobody' } as const;

export type Era = 'modern' | 'legacy';
export const ERAS: readonly Era[] = ['modern', 'legacy'];

/** One MCP request of the six the enforcement tests send, and the surface path it goes to. */
export interface MethodCase {
  label: string;
  path: '/mcp' | '/mcp/compact';
  method: string;
  params: Record<string, unknown>;
}

/**
 * The six requests every surface must authenticate (issue 13, Done when): tools/list, a direct
 * tools/call, resources/read and prompts/get on /mcp; search_tools and call_tool on /mcp/compact.
 */
export function sixMethods(names: { tool: string; args?: Record<string, unknown>; uri: string; prompt: string }): MethodCase[] {
  return [
    { label: 'tools/list', path: '/mcp', method: 'tools/list', params: {} },
    { label: 'tools/call', path: '/mcp', method: 'tools/call', params: { name: names.tool, arguments: names.args ?? {} } },
    { label: 'resources/read', path: '/mcp', method: 'resources/read', params: { uri: names.uri } },
    { label: 'prompts/get', path: '/mcp', method: 'prompts/get', params: { name: names.prompt } },
    { label: 'search_tools', path: '/mcp/compact', method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'read a file' } } },
    {
      label: 'call_tool',
      path: '/mcp/compact',
      method: 'tools/call',
      params: { name: 'call_tool', arguments: { name: names.tool, arguments: names.args ?? {} } },
    },
  ];
}

/**
 * POSTs one JSON-RPC request as a client of `era` sends it (2026-07-28: the `_meta` envelope and the
 * MCP-Protocol-Version / Mcp-Method / Mcp-Name headers; 2025-11-25: the version header) with `headers`.
 */
export async function rawRequest(
  baseUrl: string,
  path: string,
  era: Era,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
  send: (url: string, init: RequestInit) => Promise<Response> = fetch,
): Promise<Response> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
  const body: Record<string, unknown> = { jsonrpc: '2.0', id: 1, method, params: { ...params } };
  if (era === 'modern') {
    h['mcp-protocol-version'] = '2026-07-28';
    h['mcp-method'] = method;
    const name = params.name ?? params.uri;
    if (typeof name === 'string') h['mcp-name'] = name;
    (body.params as Record<string, unknown>)._meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'enforcement-tests', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
  } else {
    h['mcp-protocol-version'] = '2025-11-25';
  }
  return send(`${baseUrl}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body) });
}

/** The JSON-RPC message of a response: a JSON body, or the first `data:` event of an SSE one. */
export async function rpcMessage(
  response: Response,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } }> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').find((line) => line.startsWith('data:'));
    return data ? JSON.parse(data.slice(5)) : {};
  }
  return text ? JSON.parse(text) : {};
}

/**
 * Asserts an HTTP 401 with the RFC 6750 §3 challenge, `error="invalid_token"` when the credential `sent` (its
 * headers; none: nothing sent) held a bearer token, and no error attribute otherwise (a key pair is no token),
 * and a JSON-RPC error body (kind `unauthorized`): never a 200. The challenge agrees with the surface's
 * RFC 9728 document: where `<base>/.well-known/oauth-protected-resource<path>` is served (OAuth on offer)
 * it points there (`resource_metadata`); where it is a 404 (OAuth off) it names a `realm` and no document.
 */
export async function expectChallenge(response: Response, baseUrl: string, path: string, sent: Readonly<Record<string, string>> = {}): Promise<void> {
  const body = await response.text();
  expect({ status: response.status, body: body.slice(0, 300) }).toMatchObject({ status: 401 });
  const challenge = response.headers.get('www-authenticate') ?? '';
  const metadataUrl = `${baseUrl}/.well-known/oauth-protected-resource${path}`;
  const metadata = await fetch(metadataUrl);
  await metadata.body?.cancel();
  if (metadata.status === 200) expect(challenge).toContain(`Bearer resource_metadata="${metadataUrl}"`);
  else {
    expect(metadata.status).toBe(404);
    expect(challenge).toMatch(/^Bearer realm="[^"]+"/);
    expect(challenge).not.toContain('resource_metadata');
  }
  const token = Object.entries(sent).some(([name, value]) => name.toLowerCase() === 'authorization' && /^\s*bearer\s/i.test(value));
  if (token) expect(challenge).toContain('error="invalid_token"');
  else expect(challenge).not.toContain('error=');
  expect(JSON.parse(body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, data: { kind: 'unauthorized' } } });
}

/** The JSON-RPC methods and tool names in the bodies a recording proxy received (batches flattened). */
export function forwardedCalls(received: readonly HeldRequest[]): { method: string; name?: string; headers: HeldRequest['headers'] }[] {
  const out: { method: string; name?: string; headers: HeldRequest['headers'] }[] = [];
  for (const request of received) {
    if (!request.body) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.body);
    } catch {
      continue;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      const m = message as { method?: unknown; params?: { name?: unknown; uri?: unknown } };
      if (typeof m.method !== 'string') continue;
      const name = typeof m.params?.name === 'string' ? m.params.name : typeof m.params?.uri === 'string' ? m.params.uri : undefined;
      out.push({ method: m.method, name, headers: request.headers });
    }
  }
  return out;
}

/** The per-request methods that act on the upstream on a caller's behalf (lists and lifecycle excluded). */
export const ACTING_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get', 'completion/complete']);

/** What a recording proxy received that carried `credential`'s first header value (any method). */
export function withCredential(received: readonly HeldRequest[], credential: Record<string, string>): HeldRequest[] {
  const [name, value] = Object.entries(credential)[0]!;
  return received.filter((r) => String(r.headers[name] ?? '').includes(value.replace(/^Bearer\s+/i, '')));
}

/**
 * `mcp_upstream_request_duration_seconds_count{upstream,method}` from the gateway's /metrics: how many
 * requests of `method` the gateway sent `upstream` (the only view of a stdio upstream's traffic).
 */
export async function upstreamRequests(metricsUrl: string, upstream: string, method: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('mcp_upstream_request_duration_seconds_count{') && l.includes(`upstream="${upstream}"`) && l.includes(`method="${method}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** `mcp_scope_lookups_total{result}` from the gateway's /metrics. */
export async function scopeLookups(metricsUrl: string, result: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`mcp_scope_lookups_total{result="${result}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/**
 * An "unknown tool" refusal with the tool's name and any near-name hint taken out: two refusals are
 * indistinguishable when these are equal. Accepts a JSON-RPC error or an isError call_tool result.
 */
export function refusalShape(
  answer: { error?: { code: number; message: string; data?: Record<string, unknown> }; result?: Record<string, unknown> },
  name: string,
): unknown {
  // The hint ends the direct form (`X. Nearest names: a, b`) or sits mid-sentence in call_tool's (`... b. Use`).
  const strip = (text: string) =>
    text
      .split(name)
      .join('<name>')
      .replace(/\. Nearest names: [^.]*(\.|$)/, (_hint, end: string) => (end === '.' ? '.' : ''));
  if (answer.error) {
    const { nearest: _nearest, ...data } = answer.error.data ?? {};
    // A resource's refusal names the URI asked in its data too (`{ uri }`, spec server/resources §Error Handling).
    if (typeof data.uri === 'string') data.uri = strip(data.uri);
    return { code: answer.error.code, message: strip(answer.error.message), data };
  }
  const result = answer.result ?? {};
  const content = (result.content as { type: string; text?: string }[] | undefined) ?? [];
  const meta = { ...((result._meta as Record<string, unknown> | undefined) ?? {}) };
  delete meta['ai.cpz.gateway/nearest'];
  delete meta['io.modelcontextprotocol/serverInfo'];
  return { isError: result.isError, text: content.map((c) => strip(c.text ?? '')), meta };
}

/** The nearest names an unknown-tool refusal suggests (JSON-RPC error data or call_tool `_meta`). */
export function nearestOf(answer: { error?: { data?: Record<string, unknown> }; result?: Record<string, unknown> }): string[] {
  return (answer.error?.data?.nearest ?? (answer.result?._meta as Record<string, unknown> | undefined)?.['ai.cpz.gateway/nearest'] ?? []) as string[];
}

/** The answers of one era x surface round of {@link expectHiddenReadWriteRefused}. */
export interface HiddenReadWriteAnswers {
  era: Era;
  surface: '/mcp' | '/mcp/compact';
  read: Awaited<ReturnType<typeof rpcMessage>>;
  missing: Awaited<ReturnType<typeof rpcMessage>>;
  write: Awaited<ReturnType<typeof rpcMessage>>;
}

/**
 * The refusal loop of the file-upstream enforcement tests: in both eras, on both surfaces, `credential`
 * calls the read and the write tool it cannot see directly. Asserts the read is refused with -32602
 * exactly as a made-up name one letter longer (`<read>z`) is (refusalShape), the write is answered
 * "Unknown tool: <write>" (-32602), and no answer contains `secret`. `also` adds the test's own checks
 * per round (it may send more requests).
 */
export async function expectHiddenReadWriteRefused(options: {
  baseUrl: string;
  credential: Record<string, string>;
  read: { name: string; arguments: Record<string, unknown> };
  write: { name: string; arguments: Record<string, unknown> };
  secret: string;
  also?: (answers: HiddenReadWriteAnswers) => Promise<void> | void;
}): Promise<void> {
  const { baseUrl, credential, read, write, secret } = options;
  const call = async (era: Era, surface: string, name: string, args: Record<string, unknown>) =>
    rpcMessage(await rawRequest(baseUrl, surface, era, 'tools/call', { name, arguments: args }, credential));
  for (const era of ERAS) {
    for (const surface of ['/mcp', '/mcp/compact'] as const) {
      const answers: HiddenReadWriteAnswers = {
        era,
        surface,
        read: await call(era, surface, read.name, read.arguments),
        missing: await call(era, surface, `${read.name}z`, read.arguments),
        write: await call(era, surface, write.name, write.arguments),
      };
      expect(answers.read.error?.code).toBe(-32602);
      expect(refusalShape(answers.read, read.name)).toEqual(refusalShape(answers.missing, `${read.name}z`));
      expect(answers.write.error).toMatchObject({ code: -32602, message: expect.stringContaining(`Unknown tool: ${write.name}`) });
      for (const answer of [answers.read, answers.missing, answers.write]) expect(JSON.stringify(answer)).not.toContain(secret);
      await options.also?.(answers);
    }
  }
}

/**
 * `rateLimits.refusedCredentials.perKey` out of the way (as an environment variable of a config gateway): a
 * suite that sends one refused key pair per method and era, dozens from 127.0.0.1, tests what each refusal
 * answers, not the budget that bounds them (tests/in-process/refused-credentials.test.ts tests that).
 */
export const REFUSALS_UNBOUNDED = { GATEWAY_RATE_LIMITS_REFUSED_CREDENTIALS_PER_KEY: '{"points":100000,"durationMs":60000}' } as const;
