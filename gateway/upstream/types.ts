import type { CallSignal } from '../wire/cancellation.ts';
import type { LoggingMessageNotificationParams, ServerCapabilities } from '@modelcontextprotocol/client';
import type { OnBehalfOf } from './forward-scope.ts';
import type { UpstreamInputRequest } from './input-bridge.ts';

/**
 * What the upstream layer offers the layers above it: the methods it carries, what an upstream
 * advertised, and the options of one forwarded request. Data only (the client is client.ts).
 */

/** The gateway as an MCP client of its upstreams (`clientInfo`). */
export const GATEWAY_CLIENT = { name: 'mcp-catalog-gateway', version: '0.1.0' };

/** The tasks extension (SEP-2663): a 2026-07-28 upstream declaring it in `capabilities.extensions` serves `tasks/*`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The paginated list methods an upstream serves, and the result key holding their items. */
export const LIST_ITEMS = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const;
export type ListMethod = keyof typeof LIST_ITEMS;

/**
 * The per-request methods forwarded with the caller's credential (`logging/setLevel` and the resource
 * subscriptions: 2025-era upstreams only), and the task methods: `tasks/result` and `tasks/list` of the
 * 2025-11-25 tasks utility, `tasks/update` of the 2026-07-28 extension (SEP-2663), get and cancel both.
 */
export type ForwardMethod =
  | 'tools/call'
  | 'resources/read'
  | 'prompts/get'
  | 'completion/complete'
  | 'logging/setLevel'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | TaskMethod;

/** The task methods the gateway relays (see {@link ForwardMethod}). */
export type TaskMethod = 'tasks/get' | 'tasks/result' | 'tasks/list' | 'tasks/cancel' | 'tasks/update';

/** The tasks extension's methods on 2026-07-28 (SEP-2663); tasks/result and tasks/list are the 2025-11-25 form's only. */
export const MODERN_TASK_METHODS: readonly TaskMethod[] = ['tasks/get', 'tasks/update', 'tasks/cancel'];

/** What the upstream advertised when the gateway connected. */
export interface UpstreamInfo {
  era: 'modern' | 'legacy';
  /** Legacy HTTP upstream that issued a session id: one session per credential digest. */
  sessionful: boolean;
  capabilities: ServerCapabilities;
  instructions?: string;
  /**
   * It declares `resources.subscribe` and can deliver the updates to the gateway (watchResource): a
   * 2026-07-28 upstream, a sessionful 2025-era one, or stdio; a stateless 2025-era HTTP one cannot.
   */
  resourceUpdates?: boolean;
  /**
   * The task forms it serves: `legacy` when a 2025-era upstream declares
   * `capabilities.tasks.requests.tools.call` (2025-11-25 basic/utilities/tasks; `cancel` when it also
   * declares `tasks.cancel`), `modern` when a 2026-07-28 upstream declares the
   * `io.modelcontextprotocol/tasks` extension (SEP-2663). Several upstreams: each form any of them serves.
   */
  tasks?: TaskForms;
}

/** The task forms served (see {@link UpstreamInfo.tasks}). */
export interface TaskForms {
  legacy?: { cancel: boolean };
  modern?: true;
}

/** All pages of one list, with the cache hints of the first page (2026-07-28 upstreams only). */
export interface ListResult {
  items: unknown[];
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

/** One forwarded request: on whose behalf (credential, request id) and how it is followed. */
export interface ForwardOptions extends OnBehalfOf {
  /** The caller giving up (an AbortSignal, or the fast path's Cancellation: wire/cancellation.ts). */
  signal?: CallSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Log messages (`notifications/message`) the upstream sends on this request's response stream. */
  onlog?: (message: LoggingMessageNotificationParams) => void;
  /** Extra HTTP headers of this request (`Mcp-Param-*`); the transport keeps the standard and auth ones its own. */
  headers?: Record<string, string>;
  /** Answers the upstream's own requests during this one (see ForwardScope.oninputrequest). */
  oninputrequest?: (request: UpstreamInputRequest) => Promise<Record<string, unknown>>;
  /** Hand an `input_required` result back instead of failing (2026-07-28 multi-round-trip, manual mode). */
  allowInputRequired?: boolean;
  /** Hand a 2026-07-28 `resultType: "task"` result (SEP-2663 CreateTaskResult) back instead of failing. */
  allowTaskResult?: boolean;
  /** `notifications/tasks/status` (2025-11-25) the upstream sends on this request's response stream. */
  ontaskstatus?: (params: Record<string, unknown>) => void;
}
