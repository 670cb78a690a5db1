import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggingMessageNotificationParams } from '@modelcontextprotocol/client';
import type { Credential } from '../auth/credentials.ts';
import { outsideTrace } from '../obs/tracing.ts';
import type { UpstreamInputRequest } from './input-bridge.ts';

/**
 * Who an upstream request is sent for, given explicitly to the upstream client by its caller
 * (`forward(..., { credential, requestId })`, `listAll(method, { credential, requestId })`). Background
 * work (catalogue warm-up, reconnects, listen streams) sends for nobody: `{}`.
 */
export interface OnBehalfOf {
  readonly credential?: Credential;
  readonly requestId?: string;
}

/** What one upstream request carries across the SDK's awaits to the transport's fetch and to notification handlers. */
export interface ForwardScope extends OnBehalfOf {
  /** Log messages (`notifications/message`) the upstream sends on this request's response stream. */
  onlog?: (message: LoggingMessageNotificationParams) => void;
  /**
   * Answers a request the upstream sends its client during this request (2025 wire: sampling,
   * elicitation, roots on the request's own stream); absent: the upstream is refused (-32601).
   */
  oninputrequest?: (request: UpstreamInputRequest) => Promise<Record<string, unknown>>;
  /** A 2025-11-25 `notifications/tasks/status` the upstream sends on this request's response stream. */
  ontaskstatus?: (params: Record<string, unknown>) => void;
  /** The JSON-RPC error code of this request's response as the upstream sent it (client.ts keepWireErrorCodes). */
  wireErrorCode?: number;
}

/**
 * The upstream client's own narrow context: set around one SDK `client.request(...)` so that the
 * transport's `fetch` hook can add the credential and request id (the SDK's per-request `headers`
 * option drops `authorization` and `mcp-*`), and a log notification read from that request's response
 * stream finds its caller. Nothing outside gateway/upstream reads it.
 */
export const forwardScope = new AsyncLocalStorage<ForwardScope>();

/** Runs `fn` on behalf of nobody (no forward scope, no request): for work that outlives any caller. */
export function runInBackground<T>(fn: () => T): T {
  return forwardScope.exit(() => outsideTrace(fn));
}
