import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Standing } from './authenticate.ts';
import type { Credential } from './credentials.ts';

/**
 * A POST the edge has authenticated (authenticate.ts), as every later layer receives it, explicitly:
 * the caller's credential, the request id the upstream hop forwards, and the caller's standing (its
 * scopes, or why they are not known), resolved once at the edge before the body was read. Never changed.
 */
export interface AuthenticatedRequest {
  readonly credential: Credential;
  readonly requestId: string;
  readonly standing: Standing;
  /** The request's trace id (its span's, or the incoming traceparent's with tracing off; obs/tracing.ts), for audit events. */
  readonly traceId?: string;
  /** The client address (http/client-address.ts), for audit events. */
  readonly address?: string;
}

/** The {@link AuthenticatedRequest} of `credential` in request `requestId` with its `standing`. */
export function authenticatedRequest(credential: Credential, requestId: string, standing: Standing, traceId?: string, address?: string): AuthenticatedRequest {
  // One literal, one shape for every request (spreads took V8's slow define path per call).
  return Object.freeze({ credential, requestId, standing, traceId, address });
}

/**
 * The SDK's pass-through AuthInfo for an authenticated request (`createMcpHandler` hands it to the
 * per-request factory). `token` holds the credential digest, not the secret, so nothing that logs an
 * AuthInfo can leak it; the factory gets the request back with {@link authenticatedOf}.
 */
export function authInfoFor(request: AuthenticatedRequest): AuthInfo {
  return { token: request.credential.digest, clientId: `credential:${request.credential.digest.slice(0, 12)}`, scopes: [], extra: { request } };
}

/** The request an AuthInfo from {@link authInfoFor} carries. */
export function authenticatedOf(authInfo: AuthInfo | undefined): AuthenticatedRequest | undefined {
  return authInfo?.extra?.request as AuthenticatedRequest | undefined;
}

const ANSWERED_AS_JSON = 'answeredAsJson';

/**
 * `authInfo` marked as that of an exchange answered with JSON (http/negotiated-answer.ts collapses a 2025-era
 * SSE answer to its response), so nothing but the response reaches the caller: the handler must not
 * ask it anything on the stream ({@link answeredAsJson}). Carried in the SDK's pass-through `extra`.
 */
export function markedAnsweredAsJson<T extends { extra?: Record<string, unknown> }>(authInfo: T): T {
  return { ...authInfo, extra: { ...authInfo.extra, [ANSWERED_AS_JSON]: true } };
}

/** Whether {@link markedAnsweredAsJson} marked `authInfo`. */
export function answeredAsJson(authInfo: { extra?: Record<string, unknown> } | undefined): boolean {
  return authInfo?.extra?.[ANSWERED_AS_JSON] === true;
}

const REVISION = 'revision';

/**
 * `authInfo` carrying the request's MCP-Protocol-Version header (`''` when it has none) for the factory:
 * within the 2025 era, whether tools/list and tools/call answers may carry outputSchema and
 * structuredContent depends on it (wire/server-codec.ts definesStructuredContent). Carried in the SDK's
 * pass-through `extra`.
 */
export function withRevision<T extends { extra?: Record<string, unknown> }>(authInfo: T, revision: string): T {
  return { ...authInfo, extra: { ...authInfo.extra, [REVISION]: revision } };
}

/** The revision {@link withRevision} put on `authInfo`. */
export function revisionOf(authInfo: { extra?: Record<string, unknown> } | undefined): string | undefined {
  const revision = authInfo?.extra?.[REVISION];
  return typeof revision === 'string' ? revision : undefined;
}
