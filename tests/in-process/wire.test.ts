/**
 * One case per wire rule the SDK owns, answered by the fast path and by the SDK path (a second gateway
 * with `dispatch.fastPath: false`) in process: the same status, content type and bytes, framing
 * included. The fast path encodes through the SDK's own codecs (gateway/wire/server-codec.ts); these
 * cases hold the gateway's use of them (the cases: tests/helpers/wire-cases.ts, which the SDK-oracle test
 * tests/in-process/wire-oracle.test.ts also runs). The SDK's encode contract (SDK 2.4 core wire codecs):
 * - cache hints: ttlMs/cacheScope on a 2026-07-28 tools/list only (fillCacheFields), the per-answer ttlMs
 *   set on the result (the caller's scope entry and the catalogue copy: mcp/server.ts privateTtlMs), the
 *   gzip answer's tail included (listing-gzip.ts); the clock is faked (`Date` only) so both gateways,
 *   fetching at the same instant, owe the same ttlMs;
 * - result type and identity: resultType stamped, `input_required` kept on tools/call (stampResultType),
 *   serverInfo added to `_meta` beside the result's own keys (stampServerInfoMeta);
 * - deleted fields: a tool's `execution` is not sent on 2026-07-28 (enforceDeletedFields);
 * - projection by era: a non-object structuredContent gets a text block, and `{ result }` on 2025
 *   (projectCallToolResult); a non-object outputSchema root is wrapped as `{ result }` on 2025, its
 *   `$schema` hoisted and its `$ref`s rewritten (SEP-2106, wrapOutputSchemaForLegacy);
 * - the CallToolResult schema: `content` defaulted, schema key order, unknown fields kept;
 * - error framing: JSON-RPC errors with code, message and data in the SDK's key order; -32002 sent as
 *   -32602 (encodeErrorCode); -32021 under HTTP 400 on 2026-07-28;
 * - SSE framing: the 2025 stateless leg answers one SSE `message` event; 2026-07-28 answers JSON;
 * - serialisation: string ids, escapes and non-ASCII text.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inMemoryFakeUpstream, inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { CASES, LEGACY_TOOLS, SCOPE_TTL_MS, T0, TOOLS, request } from '../helpers/wire-cases.ts';

interface Answer {
  status: number;
  type: string;
  fastPath: boolean;
  text: string;
}

async function answer(gateway: InProcessGateway, req: Request): Promise<Answer> {
  const response = await gateway.fetch(req);
  // The fast path sends a Content-Length; the SDK handler streams.
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    fastPath: response.headers.get('content-length') !== null,
    text: await response.text(),
  };
}

/** The JSON-RPC message of an answer: the body, or the data of its one SSE `message` event. */
function messageOf(a: Answer): Record<string, unknown> {
  const json = a.type.startsWith('text/event-stream') ? /^event: message\ndata: (.*)\n\n$/s.exec(a.text)?.[1] : a.text;
  return JSON.parse(json ?? 'null') as Record<string, unknown>;
}

/** A gateway pair in front of one upstream: the fast path, and the SDK path only; callers' scopes from the endpoint. */
function pair(options: Parameters<typeof inMemoryFakeUpstream>[0]) {
  // A lookup on a loaded machine can take seconds: the default 3 s budget answered 503 under load.
  const scopes = { endpoint: scopeEndpoint.url, ttlMs: SCOPE_TTL_MS, timeoutMs: 30_000 };
  return {
    fast: inProcessGateway({ scopes }, { upstreams: { up: inMemoryFakeUpstream(options) } }),
    sdk: inProcessGateway({ scopes, dispatch: { fastPath: false } }, { upstreams: { up: inMemoryFakeUpstream(options) } }),
  };
}

let scopeEndpoint: ScopeEndpoint;
let modernUpstream: ReturnType<typeof pair>;
let legacyUpstream: ReturnType<typeof pair>;
beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
  scopeEndpoint = await startScopeEndpoint({ 'wire-caller': ['wire:read'], 'wire-aged': ['wire:read'], 'wire-late': ['wire:read'] });
  modernUpstream = pair({ tools: TOOLS });
  legacyUpstream = pair({ era: 'legacy', tools: LEGACY_TOOLS });
});
afterAll(async () => {
  vi.useRealTimers();
  for (const p of [modernUpstream, legacyUpstream]) await Promise.all([p?.fast.close(), p?.sdk.close()]);
  await scopeEndpoint?.close();
});

describe('the wire rules the SDK owns: fast path and SDK path give the same bytes', () => {
  for (const era of ['legacy', 'modern'] as const) {
    for (const c of CASES.filter((c) => c.era === undefined || c.era === era)) {
      it(`${era}: ${c.rule}`, async () => {
        const { fast, sdk } = c.legacyUpstream ? legacyUpstream : modernUpstream;
        const caller: Record<string, string> = c.clock ? { authorization: `Bearer ${c.clock.caller}` } : {};
        if (c.clock) {
          vi.setSystemTime(T0 + c.clock.primeAt);
          for (const gateway of [fast, sdk]) expect((await answer(gateway, request(era, c.method, c.params, c.id, c.capabilities, caller))).status).toBe(200);
          vi.setSystemTime(T0 + c.clock.at);
        }
        const a = await answer(fast, request(era, c.method, c.params, c.id, c.capabilities, caller));
        const b = await answer(sdk, request(era, c.method, c.params, c.id, c.capabilities, caller));
        expect(a.fastPath).toBe(true);
        expect(b.fastPath).toBe(false);
        expect({ status: a.status, type: a.type, text: a.text }).toEqual({ status: b.status, type: b.type, text: b.text });
        expect(a.type.startsWith(era === 'legacy' ? 'text/event-stream' : 'application/json')).toBe(true);
        c.check(messageOf(a), era, a.status);
      });
    }
  }
});
