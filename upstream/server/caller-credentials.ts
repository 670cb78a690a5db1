import { randomUUID } from 'node:crypto';

/**
 * The credential headers this server forwards to the platform, read once per MCP request from the
 * inbound HTTP request. The server never interprets them: the platform authenticates and authorises.
 */
export const FORWARDED_CREDENTIAL_HEADERS = ['x-cpz-key', 'x-cpz-secret', 'authorization'] as const;

export function callerCredentials(request: Request | undefined): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const name of FORWARDED_CREDENTIAL_HEADERS) {
    const value = request?.headers.get(name);
    if (value) forwarded[name] = value;
  }
  return forwarded;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** `inbound` when it is a well-formed request id (1-128 of `[A-Za-z0-9_.:-]`), else a fresh UUID. */
export function requestIdFrom(inbound: string | null | undefined): string {
  return inbound && REQUEST_ID.test(inbound) ? inbound : randomUUID();
}

/** The request's `X-Request-Id` (see requestIdFrom); sent on every platform call of the request. */
export function requestIdOf(request: Request | undefined): string {
  return requestIdFrom(request?.headers.get('x-request-id'));
}
