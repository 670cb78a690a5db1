import type { ServerContext } from '@modelcontextprotocol/server';
import { GatewayError, classifyUpstreamFailure } from './errors.ts';
import type { ForwardMethod, ForwardOptions, UpstreamClient } from './upstream-client.ts';

/** Result fields that belong to the upstream hop; cache hints are kept for modern callers only. */
const HOP_RESULT_FIELDS = ['resultType'];
const CACHE_HINT_FIELDS = ['ttlMs', 'cacheScope'];
const HOP_META_PREFIX = 'io.modelcontextprotocol/';

/**
 * The caller's `_meta` as it should reach the upstream: trace context and custom keys pass, the
 * envelope keys of this hop (`io.modelcontextprotocol/*`) and `progressToken` (re-issued by the
 * upstream client and mapped back in {@link forwardOptions}) do not.
 */
export function forwardedMeta(ctx: ServerContext): Record<string, unknown> | undefined {
  const meta = Object.entries(ctx.mcpReq._meta ?? {}).filter(([key]) => key !== 'progressToken' && !key.startsWith(HOP_META_PREFIX));
  return meta.length ? Object.fromEntries(meta) : undefined;
}

/** Cancellation follows the caller; upstream progress is re-sent under the caller's own progressToken. */
export function forwardOptions(ctx: ServerContext): ForwardOptions {
  const token = ctx.mcpReq._meta?.progressToken;
  return {
    signal: ctx.mcpReq.signal,
    onprogress:
      token === undefined
        ? undefined
        : (progress) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(() => {}),
  };
}

/**
 * An upstream result as this gateway answers it: the upstream's hop fields (its serverInfo,
 * resultType) removed, and its cache hints kept only for a modern caller (a 2025-era answer must not
 * carry 2026 fields; the SDK does not strip what a handler returns).
 */
export function relayedResult<T extends Record<string, unknown>>(result: T, era: 'modern' | 'legacy'): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result)) {
    if (HOP_RESULT_FIELDS.includes(key) || (era === 'legacy' && CACHE_HINT_FIELDS.includes(key))) continue;
    out[key] = value;
  }
  const meta = result._meta as Record<string, unknown> | undefined;
  if (meta) {
    const kept = Object.entries(meta).filter(([key]) => !key.startsWith(HOP_META_PREFIX));
    if (kept.length) out._meta = Object.fromEntries(kept);
    else delete out._meta;
  }
  return out as T;
}

/** The JSON-RPC error for a failed forward: the upstream's own code when it answered one, else ours (-32603). */
export function forwardError(error: unknown, upstream: string): GatewayError {
  const failure = classifyUpstreamFailure(error, upstream);
  if (failure.kind === 'upstream_rejected') return new GatewayError('upstream_rejected', failure.message, { upstream, upstreamData: failure.data }, failure.code);
  return new GatewayError(failure.kind, failure.message, { upstream });
}

/**
 * Forwards resources/read, prompts/get or completion/complete with the caller's credential, `_meta`,
 * progress and cancellation; failures become JSON-RPC errors (these methods have no isError form).
 */
export async function forwardRequest(client: UpstreamClient, method: ForwardMethod, params: Record<string, unknown>, ctx: ServerContext, era: 'modern' | 'legacy'): Promise<Record<string, unknown>> {
  const { _meta: _ignored, ...rest } = params;
  const meta = forwardedMeta(ctx);
  try {
    return relayedResult(await client.forward(method, meta ? { ...rest, _meta: meta } : rest, forwardOptions(ctx)), era);
  } catch (error) {
    throw forwardError(error, client.name);
  }
}
