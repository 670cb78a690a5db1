import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayConfig } from '../../config/types.ts';

/**
 * A caller's credential as presented: the headers to forward upstream unchanged, and the SHA-256
 * digest every cache is keyed by. The raw values never leave this object (not logged, not labelled).
 */
export interface Credential {
  kind: 'bearer' | 'key';
  headers: Readonly<Record<string, string>>;
  /** Hex SHA-256 over the credential headers; the only form of the credential that is stored. */
  digest: string;
  /**
   * From an OAuth access token (gateway/auth/oauth/credential.ts): the scopes it grants. The caller's
   * effective scopes are the credential's own (scope endpoint) intersected with these, or these alone
   * when `replacesLookup` (an external identity provider's token: no lookup at all).
   */
  granted?: { scopes: readonly string[]; replacesLookup: boolean };
}

/**
 * Reads the credential from request headers: `Authorization: Bearer <token>` (when enabled) and/or the
 * key + secret pair. Both forms present are forwarded together. Returns undefined when neither is complete.
 */
export function extractCredential(headers: IncomingHttpHeaders, config: GatewayConfig['credentials']): Credential | undefined {
  const forwarded: Record<string, string> = {};
  const authorization = single(headers.authorization);
  const hasBearer = config.bearer && /^Bearer\s+\S+/i.test(authorization ?? '');
  if (hasBearer) forwarded.authorization = authorization!;
  const key = single(headers[config.keyHeader.toLowerCase()]);
  const secret = single(headers[config.secretHeader.toLowerCase()]);
  const hasKey = Boolean(key && secret);
  if (hasKey) {
    forwarded[config.keyHeader.toLowerCase()] = key!;
    forwarded[config.secretHeader.toLowerCase()] = secret!;
  }
  if (!hasBearer && !hasKey) return undefined;
  return { kind: hasBearer ? 'bearer' : 'key', headers: forwarded, digest: credentialDigest(forwarded) };
}

/** SHA-256 over the sorted header pairs: stable for the same credential, never reversible to it. */
export function credentialDigest(headers: Readonly<Record<string, string>>): string {
  const canonical = JSON.stringify(Object.entries(headers).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256').update(canonical).digest('hex');
}

/** RFC 6750 §3 challenge pointing at the RFC 9728 metadata document. */
export function bearerChallenge(resourceMetadataUrl: string, error?: 'invalid_token'): string {
  return `Bearer resource_metadata="${resourceMetadataUrl}"${error ? `, error="${error}"` : ''}`;
}

function single(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v && v.trim() ? v.trim() : undefined;
}
