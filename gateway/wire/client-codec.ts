import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { isPlainObject, type RequestId } from './jsonrpc.ts';
import { mcpNameValue } from './param-value.ts';

/**
 * The gateway as an MCP client on the wire (spec basic/transports/streamable-http, both eras): what the
 * undici hop (upstream/http-hop.ts) writes to an upstream and how it reads the answer, as the SDK
 * client writes and reads them. The hop moves the bytes; the bytes are decided here. Its SSE reader
 * is sse.ts's, its `Mcp-Name` encoder param-value.ts's. The result decoding mirrors the SDK client
 * codec's `decodeResult` for the rules the gateway relies on (2026-07-28: `resultType` required,
 * `complete` lifted off) without its per-result schema parse (a measured tenth of a forwarded call);
 * tests/in-process/wire-oracle.test.ts holds it to the SDK's verdicts.
 */

/** What one upstream connection fixes for every request on it (see upstream/http-hop.ts `HopSession`). */
export interface ClientSession {
  era: 'modern' | 'legacy';
  protocolVersion: string;
  sessionId?: string;
  /** 2026-07-28: the `_meta` envelope this client sends on every request. */
  envelope?: Record<string, unknown>;
}

/** The `_meta` a request carries: 2026-07-28's envelope under the caller's keys, and the progress token. */
export function requestMeta(
  session: ClientSession,
  meta: Record<string, unknown> | undefined,
  progressToken: RequestId | undefined,
): Record<string, unknown> | undefined {
  if (session.envelope === undefined && progressToken === undefined) return meta;
  const out: Record<string, unknown> = session.envelope ? { ...session.envelope, ...meta } : { ...meta };
  if (progressToken !== undefined) out.progressToken = progressToken;
  return out;
}

/**
 * One request as the client sends it: its JSON body, and the headers its revision adds (2026-07-28:
 * `Mcp-Method`, and `Mcp-Name` for the methods that carry one, SEP-2243).
 */
export function encodeRequest(
  session: ClientSession,
  id: RequestId,
  method: string,
  params: Record<string, unknown>,
  progressToken?: RequestId,
): { body: string; headers: Record<string, string> } {
  const meta = requestMeta(session, params._meta as Record<string, unknown> | undefined, progressToken);
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: meta === undefined ? params : { ...params, _meta: meta } });
  if (session.era !== 'modern') return { body, headers: {} };
  const name = mcpNameValue(method, params);
  return { body, headers: name === undefined ? { 'mcp-method': method } : { 'mcp-method': method, 'mcp-name': name } };
}

/** A bare `ping` request body (no session, no revision headers): the health probe's, answered by any MCP server. */
export function pingRequest(id: RequestId): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
}

/** The headers of every POST on a connection: content negotiation, the revision, the session. */
export function sessionHeaders(session: ClientSession): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  headers['mcp-protocol-version'] = session.protocolVersion;
  if (session.sessionId !== undefined) headers['mcp-session-id'] = session.sessionId;
  return headers;
}

/** `notifications/cancelled` for request `id` (2025-11-25 basic/utilities/cancellation). */
export function cancellation(id: RequestId, reason: string): string {
  return JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
}

/** The client's answer to a server-to-client request: a result, or a JSON-RPC error. */
export function answer(id: unknown, outcome: { result: unknown } | { error: { code: number; message: string } }): string {
  return JSON.stringify({ jsonrpc: '2.0', id, ...outcome });
}

/** A message received: a server-to-client request, a notification, or a response (by its id). */
export type Received =
  | { kind: 'request'; message: Record<string, unknown> }
  | { kind: 'notification'; method: string; params: Record<string, unknown> | undefined }
  | { kind: 'response'; message: Record<string, unknown> };

/** An SSE event's data read as a JSON-RPC message; undefined when it is not JSON or no message. */
export function receivedMessage(data: string): Received | undefined {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (!isPlainObject(message)) return undefined;
  if (typeof message.method === 'string') {
    if (message.id !== undefined && message.id !== null) return { kind: 'request', message };
    return { kind: 'notification', method: message.method, params: message.params as Record<string, unknown> | undefined };
  }
  return { kind: 'response', message };
}

/** The message answering `id` in a JSON body (a single message or a batch). */
export function responseFor(parsed: unknown, id: RequestId): Record<string, unknown> | undefined {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  for (const message of messages) if (isPlainObject(message) && message.id === id) return message;
  return undefined;
}

/** What a request may accept besides a complete result (2026-07-28 multi-round-trip; the tasks extension). */
export interface AcceptedResults {
  allowInputRequired?: boolean;
  allowTaskResult?: boolean;
}

/**
 * A response as the SDK client settles it: `[error]` or `[undefined, result]`. A JSON-RPC error is a
 * `ProtocolError` with the server's code, message and data; a result is decoded for the era (the SDK
 * client codec's `decodeResult`: on 2026-07-28 `resultType` is required, `complete` is lifted off,
 * `input_required` is handed back only when accepted and must carry inputRequests or requestState, and a
 * `task` only when accepted; 2025 results pass as they are).
 */
export function settleResponse(message: Record<string, unknown>, era: 'modern' | 'legacy', accepted: AcceptedResults): [unknown, Record<string, unknown>?] {
  const error = message.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (error !== undefined) {
    if (typeof error?.code !== 'number') return [new SdkError(SdkErrorCode.InvalidResult, 'upstream answered a malformed JSON-RPC error')];
    return [new ProtocolError(error.code, typeof error.message === 'string' ? error.message : '', error.data)];
  }
  const result = message.result;
  if (!isPlainObject(result)) return [new SdkError(SdkErrorCode.InvalidResult, 'Invalid result: not an object')];
  if (era !== 'modern') return [undefined, result];
  const resultType = result.resultType;
  if (resultType === 'complete') {
    const { resultType: _complete, ...lifted } = result;
    return [undefined, lifted];
  }
  if (resultType === undefined) return [new SdkError(SdkErrorCode.InvalidResult, 'Invalid result: missing required resultType (protocol revision 2026-07-28)')];
  if (resultType === 'task' && accepted.allowTaskResult) return [undefined, result];
  if (resultType === 'input_required') {
    if (!accepted.allowInputRequired) return [new SdkError(SdkErrorCode.UnsupportedResultType, "Unsupported result type 'input_required'", { resultType })];
    const requests = result.inputRequests;
    if ((!isPlainObject(requests) || Object.keys(requests).length === 0) && typeof result.requestState !== 'string') {
      return [new SdkError(SdkErrorCode.InvalidResult, 'Invalid result: input_required carries neither inputRequests nor requestState')];
    }
    return [undefined, result];
  }
  return [new SdkError(SdkErrorCode.UnsupportedResultType, `Unsupported result type '${String(resultType)}'`, { resultType })];
}

/** A content block's required string members by its type (2025-11-25 and 2026-07-28 schema ContentBlock). */
const CONTENT_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
  resource: [],
};

/**
 * Whether `text` is base64 as a client reads it: the WHATWG forgiving-base64 decode that `atob` runs (ASCII
 * whitespace skipped, padding optional), which the SDK v1 client's schema applies to image and audio `data` and a
 * resource's `blob`, refusing the whole result otherwise.
 */
function isBase64(text: string): boolean {
  try {
    atob(text);
    return true;
  } catch {
    return false;
  }
}

/** At most this many problems are named: a result of 10,000 bad blocks is told by its first few. */
const MAX_RESULT_PROBLEMS = 3;

/**
 * What makes a tools/call result no CallToolResult (2025-11-25 and 2026-07-28 schema: `content` an array of
 * ContentBlocks, image and audio `data` and a resource's `blob` base64, `isError` a boolean), as JSON Pointers with the problem: `[]` when none. The SDK client's
 * schema parse (dropped from the hop for its cost) refused such a result; relayed as it was, it broke every
 * SDK client instead (v1: a ZodError; v2: "Invalid result"; run_code: an internal TypeError) where the
 * gateway should have failed loudly (adversarial-upstream try-out). A result without `content` passes (the SDK
 * clients read it as empty); so do results that are no answer yet (input_required, a task), members the
 * schema does not name, and a block's members beyond the required ones.
 */
export function callToolResultProblems(result: Record<string, unknown>): string[] {
  if (result.resultType === 'input_required' || result.resultType === 'task') return [];
  const problems: string[] = [];
  if (result.isError !== undefined && typeof result.isError !== 'boolean') problems.push('/isError is not a boolean');
  const content = result.content;
  if (content === undefined) return problems;
  if (!Array.isArray(content)) return [...problems, '/content is not an array'];
  for (let i = 0; i < content.length && problems.length < MAX_RESULT_PROBLEMS; i++) {
    const block = content[i] as unknown;
    if (!isPlainObject(block)) {
      problems.push(`/content/${i} is not an object`);
      continue;
    }
    const members = typeof block.type === 'string' ? CONTENT_MEMBERS[block.type] : undefined;
    if (!members) {
      problems.push(`/content/${i}/type is no content block type (text, image, audio, resource_link, resource)`);
      continue;
    }
    const missing = members.find((member) => typeof block[member] !== 'string');
    if (missing) problems.push(`/content/${i}/${missing} is not a string`);
    else if (block.type === 'resource') {
      const resource = block.resource;
      if (!isPlainObject(resource) || typeof resource.uri !== 'string' || (typeof resource.text !== 'string' && typeof resource.blob !== 'string'))
        problems.push(`/content/${i}/resource is no embedded resource (uri and text or blob)`);
      else if (typeof resource.text !== 'string' && !isBase64(resource.blob as string)) problems.push(`/content/${i}/resource/blob is not base64`);
    } else if ((block.type === 'image' || block.type === 'audio') && !isBase64(block.data as string)) problems.push(`/content/${i}/data is not base64`);
  }
  return problems;
}
