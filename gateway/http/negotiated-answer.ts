import type { FetchLikeMcpHandler } from '@modelcontextprotocol/node';
import { isLegacyRequest, type McpHttpHandler } from '@modelcontextprotocol/server';
import { markedAnsweredAsJson } from '../auth/authenticated.ts';
import { chooseRepresentation, ANSWER_MEDIA_TYPES, type Representation } from '../wire/negotiation.ts';
import { LEGACY_SSE_HEADERS, sseEvents, sseMessageEvent } from '../wire/sse.ts';

/**
 * Wraps the SDK handler so an MCP POST is answered in the representation its Accept prefers
 * (wire/negotiation.ts `chooseRepresentation`, RFC 9110 §12.5.1), on both eras. The SDK decides on its
 * own: its 2025 stateless leg answers every request over SSE (and refuses, 406, an Accept not naming
 * both types as written), its 2026-07-28 leg in JSON unless the handler streams. So the SDK is asked
 * with both types accepted, and its answer converted when the caller prefers the other one: an SSE
 * answer collapsed to its JSON-RPC response(s) (request-scoped notifications, such as progress, are
 * dropped, as the SDK's JSON mode drops them; a 2025-era handler is told not to ask the caller anything
 * on the stream), a JSON answer sent as one SSE `message` event. A caller that accepts neither was
 * refused 406 at the edge (http/classify.ts); error statuses, 202s and `subscriptions/listen` streams
 * go out as they are.
 */
export function withNegotiatedAnswers(handler: McpHttpHandler): FetchLikeMcpHandler {
  return {
    fetch: async (request, options) => withoutConnectionHeader(await negotiated(handler, request, options)),
  };
}

/**
 * The answer without a `Connection` header: a hop-by-hop field (RFC 9110 §7.6.1), the connection's to
 * manage, not the handler's. The SDK sets `Connection: keep-alive` on its SSE answers, which node:http
 * obeys even when the request said `Connection: close` (client try-out: such a socket was held open for the
 * keep-alive timeout, against RFC 9112 §9.6); without it node:http keeps or closes the connection as the
 * request asks, streams included.
 */
function withoutConnectionHeader(response: Response): Response {
  if (!response.headers.has('connection')) return response;
  const headers = new Headers(response.headers);
  headers.delete('connection');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

async function negotiated(handler: McpHttpHandler, request: Request, options: Parameters<FetchLikeMcpHandler['fetch']>[1]): Promise<Response> {
  if (request.method !== 'POST') return handler.fetch(request, options);
  const accept = request.headers.get('accept') ?? undefined;
  const legacy = await isLegacyRequest(request, options?.parsedBody);
  // The 2025 leg's own check compares as written: ask it with both, as SDK clients send them.
  const literal = accept !== undefined && accept.includes('application/json') && accept.includes('text/event-stream');
  const asked = legacy && !literal ? new Request(request, { headers: withAccept(request.headers) }) : request;
  const jsonForLegacy = legacy && chooseRepresentation(accept, 'sse') === 'json';
  // Nothing but the response reaches such a caller: the handler must not ask it anything on the stream.
  const authInfo = jsonForLegacy && options?.authInfo ? markedAnsweredAsJson(options.authInfo) : options?.authInfo;
  const response = await handler.fetch(asked, authInfo ? { ...options, authInfo } : options);
  if (response.status !== 200 || isListen(options?.parsedBody)) return response;
  const produced = representationOf(response);
  const wanted = produced && chooseRepresentation(accept, produced);
  if (!produced || !wanted || wanted === produced) return response;
  return wanted === 'json' ? collapsed(response, Array.isArray(options?.parsedBody)) : asEvent(response);
}

function withAccept(headers: Headers): Headers {
  const copy = new Headers(headers);
  copy.set('accept', ANSWER_MEDIA_TYPES);
  return copy;
}

function representationOf(response: Response): Representation | undefined {
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'text/event-stream' ? 'sse' : type === 'application/json' ? 'json' : undefined;
}

/** A single 2026-07-28 `subscriptions/listen`: its answer is a stream, SSE whatever the caller prefers. */
function isListen(body: unknown): boolean {
  return body !== null && typeof body === 'object' && (body as { method?: unknown }).method === 'subscriptions/listen';
}

/**
 * An SSE answer as the JSON-RPC response(s) (not notifications) its events carry: the one response of a
 * single request, an array for a batch, even of one request (JSON-RPC 2.0 §6).
 */
async function collapsed(response: Response, batch: boolean): Promise<Response> {
  const answers = sseEvents(await response.text())
    .filter(Boolean)
    .map((data) => JSON.parse(data) as { id?: unknown; method?: string })
    .filter((message) => message.method === undefined);
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  return new Response(JSON.stringify(answers.length === 1 && !batch ? answers[0] : answers), { status: response.status, headers });
}

/** A JSON answer as one SSE `message` event, framed as the SDK frames its 2025 answers. */
async function asEvent(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(LEGACY_SSE_HEADERS)) headers.set(name, value);
  headers.delete('content-length');
  return new Response(sseMessageEvent([await response.text()]).join(''), { status: response.status, headers });
}
