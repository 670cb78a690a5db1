import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Credential } from './credentials.ts';
import type { ScopeCache, ScopeResult } from './scope-cache.ts';

/**
 * A POST the edge has authenticated, as every later layer receives it, explicitly: the caller's
 * credential, the request id the upstream hop forwards, and the caller's scope lookup, started at most
 * once for the whole HTTP request (the edge pre-check and the handlers share it). Built once at the
 * edge and never changed.
 */
export interface AuthenticatedRequest {
  readonly credential: Credential;
  readonly requestId: string;
  /** The request's trace id (its span's, or the incoming traceparent's with tracing off; obs/tracing.ts), for audit events. */
  readonly traceId?: string;
  /** The caller's scopes (ScopeCache.lookup), looked up on first use only. */
  scopes(): Promise<ScopeResult>;
}

/** The {@link AuthenticatedRequest} of `credential` in request `requestId`, its scope lookup lazy and shared. */
export function authenticatedRequest(credential: Credential, requestId: string, scopeCache: ScopeCache, traceId?: string): AuthenticatedRequest {
  let scopes: Promise<ScopeResult> | undefined;
  return Object.freeze({ credential, requestId, ...(traceId ? { traceId } : {}), scopes: () => (scopes ??= scopeCache.lookup(credential, requestId)) });
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
