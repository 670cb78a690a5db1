import type { FetchLikeMcpHandler } from '@modelcontextprotocol/node';
import { PROTOCOL_VERSION_META_KEY, Server, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import type { GatewayMetrics } from '../obs/metrics.ts';
import type { SurfaceName } from './types.ts';
import { isPlainObject } from '../wire/jsonrpc.ts';

type Era = 'modern' | 'legacy';
type Outcome = 'ok' | 'error';
type RequestId = string | number;

/**
 * The `method` label's values: the client-to-server requests and notifications of the revisions the
 * gateway serves (2024-10-07 to 2026-07-28, tasks included). Any other method is `unknown`, which keeps
 * the label bounded whatever a client sends.
 */
export const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
  'tasks/update',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
]);

/** The bounded `method` label of a message's method. */
export function methodLabel(method: unknown): string {
  return typeof method === 'string' && MCP_METHODS.has(method) ? method : 'unknown';
}

/**
 * Counts one MCP message in `mcp_requests_total`: the only place that increments it. Callers: the
 * {@link MeteredServer} (messages a server instance handled), {@link countMessages} (messages answered
 * at the edge or by the SDK before dispatch) and the fast path (fast-path.ts).
 */
export function countMessage(metrics: GatewayMetrics, labels: MessageLabels & { method: string }, outcome: Outcome): void {
  metrics.mcpRequests.inc({ endpoint: labels.endpoint, era: labels.era, method: labels.method, outcome });
}

/** Labels `mcp_requests_total` needs besides method and outcome. */
export interface MessageLabels {
  endpoint: SurfaceName;
  era: Era;
}

/**
 * The messages of one POST a server instance received, filled by {@link MeteredServer} and read by
 * {@link withMessageCounting} once the exchange is answered (which counts only the others). Handed
 * from the one to the other through the SDK's pass-through `authInfo.extra.dispatched`.
 */
export type DispatchRecord = string[];

/** The dispatch record an AuthInfo carries (see {@link withMessageCounting}). */
export function dispatchRecordOf(authInfo: { extra?: Record<string, unknown> } | undefined): DispatchRecord | undefined {
  return authInfo?.extra?.dispatched as DispatchRecord | undefined;
}

/**
 * A low-level Server that counts every message its exchange handles in `mcp_requests_total`: each
 * request once, when its response is sent (outcome `error` for a JSON-RPC error, whichever layer
 * produced it: our handlers, the SDK's built-in initialize/ping/server/discover, its -32601 for an
 * unknown method), or as `error` when the exchange closes without one (the caller went away); each
 * notification when it arrives (`ok`). It only observes: messages pass unchanged. Messages it received
 * are noted in its {@link DispatchRecord}, so {@link withMessageCounting} counts only the rest.
 */
export class MeteredServer extends Server {
  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1],
    private readonly metrics: GatewayMetrics,
    protected readonly labels: MessageLabels,
    private readonly dispatched?: DispatchRecord,
  ) {
    super(info, options);
  }

  override async connect(transport: Transport): Promise<void> {
    const pending = new Map<RequestId, string>();
    const count = (method: string, outcome: Outcome) => countMessage(this.metrics, { ...this.labels, method }, outcome);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const answered = responseOf(message);
      const method = answered && pending.get(answered.id);
      if (answered && method !== undefined) {
        pending.delete(answered.id);
        count(method, answered.outcome);
      }
      return send(message, options);
    };
    await super.connect(transport);
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if ('method' in message) {
        const method = methodLabel(message.method);
        this.dispatched?.push(dispatchKey(message.method, 'id' in message ? message.id : undefined));
        if ('id' in message && (typeof message.id === 'string' || typeof message.id === 'number')) pending.set(message.id, method);
        else count(method, 'ok');
      }
      onmessage?.(message, extra);
    };
    const onclose = transport.onclose;
    transport.onclose = () => {
      for (const method of pending.values()) count(method, 'error');
      pending.clear();
      onclose?.();
    };
  }
}

/**
 * Wraps the SDK handler so messages answered before any server instance saw them are counted too:
 * the SDK's entry rejections (unsupported revision -32022, header checks, missing client capabilities,
 * a malformed message) and `subscriptions/listen` (served by the SDK's listen router). Their outcome is
 * the HTTP status: below 400 is `ok`.
 */
export function withMessageCounting(handler: FetchLikeMcpHandler, endpoint: SurfaceName, metrics: GatewayMetrics): FetchLikeMcpHandler {
  return {
    fetch: async (request, options) => {
      const dispatched: DispatchRecord = [];
      const authInfo = options?.authInfo && { ...options.authInfo, extra: { ...options.authInfo.extra, dispatched } };
      const response = await handler.fetch(request, authInfo ? { ...options, authInfo } : options);
      if (request.method === 'POST') {
        const unseen = messagesOf(options?.parsedBody).filter((m) => {
          const at = dispatched.indexOf(dispatchKey(m.method, m.id));
          if (at < 0) return true;
          dispatched.splice(at, 1);
          return false;
        });
        countMessages(metrics, endpoint, unseen, response.status < 400 ? 'ok' : 'error');
      }
      return response;
    },
  };
}

/** Counts messages the edge answered itself (refused before the SDK), or that the SDK answered before dispatch. */
export function countMessages(metrics: GatewayMetrics, endpoint: SurfaceName, messages: readonly Record<string, unknown>[], outcome: Outcome): void {
  for (const message of messages) {
    // A posted JSON-RPC response (a client answering the server) is not a request or notification.
    if (message.method === undefined && ('result' in message || 'error' in message)) continue;
    countMessage(metrics, { endpoint, era: eraOf(message), method: methodLabel(message.method) }, outcome);
  }
}

/** The JSON-RPC messages of a parsed body (one object or a batch array); anything else is none. */
export function messagesOf(body: unknown): Record<string, unknown>[] {
  const list: unknown[] = Array.isArray(body) ? body : [body];
  return list.filter(isPlainObject);
}

/** A message's era as the SDK classifies it: a `_meta` protocol-version claim makes it modern. */
function eraOf(message: { params?: unknown }): Era {
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return meta && typeof meta === 'object' && meta[PROTOCOL_VERSION_META_KEY] !== undefined ? 'modern' : 'legacy';
}

function dispatchKey(method: unknown, id: unknown): string {
  return `${String(method)}\u0000${typeof id}\u0000${String(id)}`;
}

/** The id and outcome of a JSON-RPC response (result or error); undefined for requests and notifications. */
function responseOf(message: JSONRPCMessage): { id: RequestId; outcome: Outcome } | undefined {
  if ('method' in message || !('id' in message)) return undefined;
  const id = message.id;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  return { id, outcome: 'error' in message ? 'error' : 'ok' };
}
