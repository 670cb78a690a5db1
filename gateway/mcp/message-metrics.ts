import type { Outcomes } from '../obs/outcomes.ts';
import type { SurfaceName } from '../policy/tool-resolution.ts';
import { sdkRefusesBeforeDispatch } from '../wire/sdk-codec.ts';
import { MODERN_TASK_METHODS } from '../upstream/types.ts';
import type { Era } from '../wire/revisions.ts';

type Outcome = 'ok' | 'error';

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

/** Labels `mcp_requests_total` needs besides method and outcome. */
export interface MessageLabels {
  endpoint: SurfaceName;
  era: Era;
}

/**
 * Reports one MCP message answered (obs/outcomes.ts; `mcp_requests_total` subscribes). Callers: the
 * fast path, the server instance of the SDK path (gateway-server.ts), and the edge for what the SDK
 * answers without dispatching ({@link answeredWithoutDispatch}); the edge's own refusals are reported
 * as refusals (mcp/admission.ts `reportRefusal`).
 */
export function reportMessage(outcomes: Outcomes, labels: MessageLabels, method: unknown, outcome: Outcome): void {
  outcomes.emit({ kind: 'message', endpoint: labels.endpoint, era: labels.era, method: methodLabel(method), outcome });
}

/**
 * Whether the SDK answers a message handed to it without dispatching it to any handler of a server
 * instance, so no instance reports it (gateway-server.ts): `subscriptions/listen` (its listen router), a
 * request of a method the era does not have (-32601 before any handler is looked up), and on 2026-07-28 a
 * method no handler is registered for (the SDK's -32601 on `httpStatus` 404). The edge reports
 * these once the SDK has answered.
 */
export function answeredWithoutDispatch(era: Era, message: Record<string, unknown>, httpStatus: number): boolean {
  if (!('id' in message) || typeof message.method !== 'string') return false;
  // 2026-07-28: a method no handler serves is the SDK's -32601 on HTTP 404 (SEP-2575), never an instance's.
  if (era === 'modern' && httpStatus === 404) return true;
  // The tasks extension's methods are registered for 2026-07-28 callers served the extension (mcp/server.ts);
  // for any other caller they are answered 404, above.
  const registered = era === 'modern' && MODERN_TASK_METHODS.includes(message.method as never);
  return message.method === 'subscriptions/listen' || sdkRefusesBeforeDispatch(era, message.method, registered);
}
