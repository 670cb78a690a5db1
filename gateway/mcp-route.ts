import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { isJsonContentType, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import { requestScopes } from './caller.ts';
import { authInfoFor, bearerChallenge, extractCredential } from './credentials.ts';
import { rejectAtEdge } from './edge.ts';
import { withJsonForLegacyClients } from './legacy-json.ts';
import type { RpcMessage, Surface } from './mcp-server.ts';
import { protectedResourceMetadataUrl } from './protected-resource.ts';
import { currentRequest } from './request-context.ts';
import type { GatewayRuntime } from './runtime.ts';

/** First protocol revision without JSON-RPC batching (2025-06-18 removed it; 2026-07-28 keeps it out). */
const FIRST_REVISION_WITHOUT_BATCHES = '2025-06-18';

/**
 * The MCP endpoint of one surface, mounted in Koa: POST is checked at the edge and handed to the
 * SDK handler (`createMcpHandler` + `toNodeHandler`) with the parsed body and the caller's AuthInfo,
 * with `ctx.respond = false` so Koa leaves the response to the SDK. In order:
 * 415 for a non-JSON Content-Type; 401 with the RFC 9728 challenge without a credential (before any
 * body is read); 413 over `limits.bodyBytes` and 400/-32700 for malformed JSON; 400/-32600 for a batch
 * under a revision without batching; for messages that need scopes (tools/list), a 401 when the scope
 * endpoint refuses the credential. GET and DELETE go to the SDK as they are (405: no sessions).
 */
export function mcpRoute(runtime: GatewayRuntime, surface: Surface, handler: McpHttpHandler): Middleware {
  const { config, log } = runtime;
  const node = toNodeHandler(withJsonForLegacyClients(handler), {
    maxRequestBodySize: config.limits.bodyBytes,
    onerror: (error) => log.error({ err: error.message, surface: surface.name }, 'MCP handler failed'),
  });
  const parseJson = bodyParser({ enableTypes: ['json'], jsonLimit: config.limits.bodyBytes, encoding: 'utf-8' });
  return async (ctx) => {
    if (ctx.method !== 'POST') return handOff(ctx, node);
    if (!isJsonContentType(ctx.get('content-type'))) return rejectAtEdge(ctx, 'unsupported_media_type', 'Unsupported Media Type: Content-Type must be application/json');
    const credential = extractCredential(ctx.req.headers, config.credentials);
    if (!credential) {
      const how = `${config.credentials.keyHeader} and ${config.credentials.secretHeader}${config.credentials.bearer ? ', or Authorization: Bearer <token>' : ''}`;
      return challenge(ctx, runtime, surface, `Unauthorized: send ${how}`);
    }
    currentRequest()!.credential = credential;
    const body = await readBody(ctx, parseJson, config.limits.bodyBytes);
    if (body === undefined) return;
    const messages: RpcMessage[] = Array.isArray(body) ? body : [body as RpcMessage];
    const version = ctx.get('mcp-protocol-version');
    if (Array.isArray(body) && version && version >= FIRST_REVISION_WITHOUT_BATCHES) {
      return rejectAtEdge(ctx, 'batch_not_supported', `Invalid Request: JSON-RPC batches are not supported by protocol revision ${version}`);
    }
    if (messages.some((m) => m && typeof m === 'object' && surface.needsScopes(m))) {
      const scopes = await requestScopes(runtime, credential);
      if (scopes.kind === 'unauthorized') return challenge(ctx, runtime, surface, 'Unauthorized: the credential was refused', 'invalid_token');
    }
    return handOff(ctx, node, body, authInfoFor(credential));
  };
}

type NodeHandler = ReturnType<typeof toNodeHandler>;

async function handOff(ctx: Context, node: NodeHandler, body?: unknown, auth?: AuthInfo): Promise<void> {
  ctx.respond = false;
  const req = ctx.req as IncomingMessage & { auth?: AuthInfo };
  if (auth) req.auth = auth;
  await node(req, ctx.res, body);
}

async function readBody(ctx: Context, parseJson: Middleware, limit: number): Promise<unknown> {
  try {
    await parseJson(ctx, async () => {});
    return (ctx.request as { body?: unknown }).body ?? {};
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 413) rejectAtEdge(ctx, 'payload_too_large', `Payload Too Large: the body exceeds ${limit} bytes`);
    else rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is not a JSON object or array');
    return undefined;
  }
}

function challenge(ctx: Context, runtime: GatewayRuntime, surface: Surface, message: string, error?: 'invalid_token'): void {
  ctx.set('www-authenticate', bearerChallenge(protectedResourceMetadataUrl(runtime.config, ctx, surface.path), error));
  rejectAtEdge(ctx, 'unauthorized', message);
}
