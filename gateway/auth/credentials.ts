import { createHash, createHmac, hash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../../config/types.ts';
import type { CredentialForm, OAuthHolder } from '../obs/audit.ts';

/**
 * A caller's credential as presented, normalised: the headers to forward upstream, and the keyed digest
 * every cache and store is keyed by. The raw values never leave this object (not logged, not labelled).
 */
export interface Credential {
  /** `anonymous`: no credential was sent (`anonymous: true`); its headers are empty. */
  kind: 'bearer' | 'key' | 'anonymous';
  /** Lower-case header names as configured; `authorization` always as `Bearer <token>`. */
  headers: Readonly<Record<string, string>>;
  /** Hex HMAC-SHA-256 under the server key over the normalised headers: the only stored form. */
  digest: string;
  /** The same under the previous server key (`cache.keyPrevious`) during a rotation: what was keyed by it is still found. */
  previousDigest?: string;
  /**
   * Keyed digest of the account behind the credential ({@link accountDigest}), set once authenticated:
   * one account whatever the credential's form (key pair, bearer, an OAuth token's grant). Rate budgets count per account.
   */
  account?: string;
  /** The `credentials.apiKeys[].name` of the configured key it is (never secret: it names the key in the audit log). */
  apiKey?: string;
  /**
   * From an OAuth access token (gateway/auth/oauth/credential.ts): the scopes it grants. The caller's
   * effective scopes are the credential's own (scope endpoint) intersected with these, or these alone
   * when `replacesLookup` (an external identity provider's token: no lookup at all).
   */
  granted?: {
    scopes: readonly string[];
    replacesLookup: boolean;
    /** The account id the token names (external: issuer + `sub`): its calls count against it, not the forwarded key's. */
    account?: string;
    /** When the token expires (its `exp` claim, epoch ms), if it says. */
    expiresAt?: number;
  };
  /** From an OAuth access token: who holds it, for the audit lines of its calls ({@link OAuthHolder}). */
  oauth?: OAuthHolder;
}

/**
 * What an upstream with `forwardCredentials` is sent of the caller's credential: its headers (a platform
 * key pair or token; an OAuth token's service credential, oauth/credential.ts), or undefined for a key of
 * `credentials.apiKeys` (`apiKey` set, directly or behind a built-in sign-in): the gateway's own credential,
 * issued for the gateway and not for any upstream, which could act as that caller here with it (MCP security
 * best practices, "Token Passthrough"; upstream try-out). Such a caller's requests carry the upstream's
 * static `headers` only.
 */
export function forwardedHeaders(credential: Credential | undefined): Readonly<Record<string, string>> | undefined {
  return credential === undefined || credential.apiKey !== undefined ? undefined : credential.headers;
}

/**
 * Whether a credential header (`Authorization`, `keyHeader`, `secretHeader`) was sent more than once. None of
 * them is a list (RFC 9110 §5.3): node:http keeps the first Authorization and joins a repeated other header
 * with ", ", so a proxy in front that reads another of the values and the gateway would act on different
 * credentials. Such a request is refused whatever else it carries (mcp-endpoint.ts). Built once per
 * configuration (the names lowered once); reads `rawHeaders`, names compared by length first.
 */
export function credentialHeaderRepeats(config: GatewayConfig['credentials']): (req: Pick<IncomingMessage, 'rawHeaders'>) => boolean {
  return headerRepeats(['authorization', config.keyHeader, config.secretHeader]);
}

/** Whether a request sends one of `names` (any case) more than once, read from its raw header lines. */
export function headerRepeats(names: readonly string[]): (req: Pick<IncomingMessage, 'rawHeaders'>) => boolean {
  const lowered = names.map((name) => name.toLowerCase());
  return (req) => {
    const seen = lowered.map(() => 0);
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      for (let n = 0; n < lowered.length; n++) {
        if (name.length === lowered[n]!.length && name.toLowerCase() === lowered[n] && ++seen[n]! > 1) return true;
      }
    }
    return false;
  };
}

/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces or tabs, one b64token, nothing else. */
const BEARER = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * Reads and normalises the credential in request headers: `Authorization: Bearer <token>` (when
 * `bearer` is on; the scheme in any case, any run of spaces, surrounding whitespace ignored, forwarded
 * as `Bearer <token>`) and/or the `keyHeader` + `secretHeader` pair (names matched case-insensitively,
 * values trimmed, otherwise exact). Both forms present are forwarded together. Returns undefined when
 * neither is complete, or when a credential header is sent twice (ambiguous).
 * @param key - the server key of the digest ({@link serverKey}); `previousKey` the one being rotated out, if any.
 */
export function extractCredential(
  headers: IncomingHttpHeaders,
  config: GatewayConfig['credentials'],
  key: Buffer,
  previousKey?: Buffer,
): Credential | undefined {
  const forwarded: Record<string, string> = {};
  const token = config.bearer ? BEARER.exec(single(headers.authorization) ?? '')?.[1] : undefined;
  if (token) forwarded.authorization = `Bearer ${token}`;
  const keyName = config.keyHeader.toLowerCase();
  const secretName = config.secretHeader.toLowerCase();
  const id = single(headers[keyName]);
  const secret = single(headers[secretName]);
  const hasKey = Boolean(id && secret);
  if (hasKey) {
    forwarded[keyName] = id!;
    forwarded[secretName] = secret!;
  }
  if (!token && !hasKey) return undefined;
  return {
    kind: token ? 'bearer' : 'key',
    headers: forwarded,
    digest: credentialDigest(forwarded, key),
    ...(previousKey ? { previousDigest: credentialDigest(forwarded, previousKey) } : {}),
  };
}

/** Whether the request sends an `Authorization: Bearer` token (RFC 6750 §2.1), whatever else it sends. */
export function sendsBearerToken(headers: IncomingHttpHeaders): boolean {
  return BEARER.test(single(headers.authorization) ?? '');
}

/**
 * The form of credential request headers present, never its value (audit lines name it): none of the
 * credential headers, a complete key pair, an `Authorization: Bearer` token (whether or not `bearer` is
 * on), both, or `incomplete` (a key without its secret or the reverse, a header sent twice, an
 * Authorization header that is no bearer token).
 */
export function credentialForm(headers: IncomingHttpHeaders, config: GatewayConfig['credentials']): CredentialForm {
  const keyName = config.keyHeader.toLowerCase();
  const secretName = config.secretHeader.toLowerCase();
  const sent = (name: string) => headers[name] !== undefined;
  if (!sent('authorization') && !sent(keyName) && !sent(secretName)) return 'none';
  const bearer = sent('authorization') ? sendsBearerToken(headers) : undefined;
  const pair = sent(keyName) || sent(secretName) ? Boolean(single(headers[keyName]) && single(headers[secretName])) : undefined;
  if (bearer === false || pair === false) return 'incomplete';
  return bearer && pair ? 'key_pair_and_bearer' : bearer ? 'bearer' : 'key_pair';
}

/**
 * HMAC-SHA-256 (RFC 2104) under the server key over the sorted header pairs: stable for one credential
 * on every replica sharing the key, and without the key a stored digest cannot be checked against a
 * guessed credential (a plain hash could be, offline). Remembered per server key for the
 * {@link DIGEST_MEMO_SIZE} credentials seen last: a caller sends the same credential on every request,
 * and a one-shot SHA-256 and a lookup cost less than a Node Hmac object per call (docs/performance.md).
 * The memo is keyed by the SHA-256 of the canonical pairs, so no map holds a raw credential.
 */
export function credentialDigest(headers: Readonly<Record<string, string>>, key: Buffer): string {
  const canonical = canonicalPairs(headers);
  let memo = digestMemo.get(key);
  if (!memo) digestMemo.set(key, (memo = new LRUCache({ max: DIGEST_MEMO_SIZE })));
  const id = hash('sha256', canonical, 'base64');
  let digest = memo.get(id);
  if (digest === undefined) {
    digest = createHmac('sha256', key).update(canonical).digest('hex');
    memo.set(id, digest);
  }
  return digest;
}

/** Credentials whose digest is remembered, per server key (about 200 bytes each). */
export const DIGEST_MEMO_SIZE = 4096;

/**
 * Per server key (a rotation keeps two): SHA-256 of the canonical pairs -> the HMAC, least recently used
 * dropped first. lru-cache, not a Map moved to its end on every hit: a Map's delete and set reallocate its
 * table, and the old table's link to the new one kept each table alive through the young generation's
 * collections (promoted, ~150 B a call, until a full collection).
 */
const digestMemo = new WeakMap<Buffer, LRUCache<string, string>>();

/**
 * The pairs as `JSON.stringify` of the entries sorted by name (the digest's input since it was
 * introduced: stored digests stay valid), written without the entries array.
 */
function canonicalPairs(headers: Readonly<Record<string, string>>): string {
  const names = Object.keys(headers);
  // One to three names: an insertion sort in place (the default sort's order, UTF-16 code units) spares
  // Array.prototype.sort's work array, most of this function's allocation.
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
  let text = '[';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    text += `${i === 0 ? '' : ','}[${JSON.stringify(name)},${JSON.stringify(headers[name])}]`;
  }
  return `${text}]`;
}

/**
 * The keyed digest of an account id (the key id behind a credential, as the scope source names it):
 * budgets and audit lines of one account correlate across its credential forms and replicas sharing the key.
 */
export function accountDigest(account: string, key: Buffer): string {
  return createHmac('sha256', key).update(`account\0${account}`).digest('hex');
}

let processKey: Buffer | undefined;

/**
 * The digest key: `cache.key` (GATEWAY_CACHE_KEY) as UTF-8 bytes, else 32 random bytes generated once
 * per process. Replicas sharing a Redis store must share a configured key, or none of them finds the
 * others' entries.
 */
export function serverKey(configured: string | undefined): Buffer {
  if (configured !== undefined) return Buffer.from(configured, 'utf8');
  return (processKey ??= randomBytes(32));
}

/** An id of this process's random server key (no `cache.key` set), for the shared-key check: a SHA-256 of it, never the key. */
export function processKeyId(): string {
  return createHash('sha256').update(serverKey(undefined)).digest('hex');
}

function single(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? single(value[0]) : undefined;
  return value?.trim() ? value.trim() : undefined;
}
