import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The authorization server's symmetric keys, all derived from one root key with HKDF-SHA256
 * (RFC 5869), one `info` label per purpose so no key is used for two things:
 * - `accessToken`: 32 bytes, JWE `dir` + `A256GCM` (RFC 7516) sealing the access tokens, so any
 *   replica holding the root key resolves any token without shared storage;
 * - `credential`: 32 bytes, AES-256-GCM wrapping the platform credential kept in grants and tokens;
 * - `cookies`: signing keys for oidc-provider's cookies and our CSRF tokens;
 * - `records`: 32 bytes, the HMAC-SHA256 key naming the store's records of oidc-provider's artifacts
 *   (adapter.ts: a refresh token or a code is its own id, so the store keys it by a keyed digest);
 * - `recordIds`: 32 bytes, AES-256-GCM wrapping the artifact ids a uid or user-code lookup leads to.
 * Rotation: keys derived from a previous root key (`oauth.tokenSecretPrevious`) open what they sealed
 * (access tokens, wrapped credentials, cookies, CSRF tokens) and find the records they named, until
 * those expire; nothing new is sealed or named with them.
 */
export interface OAuthKeys {
  accessToken: Buffer;
  credential: Buffer;
  /** Current first (signs), then the previous root key's (verify only). */
  cookies: string[];
  csrf: Buffer;
  records: Buffer;
  recordIds: Buffer;
  /** Where the root key came from: `secret` (GATEWAY_TOKEN_SECRET), `store` (kept in Redis), `process` (random, this process only). */
  source: 'secret' | 'store' | 'process';
  /** The previous root key's keys (GATEWAY_TOKEN_SECRET_PREVIOUS), tried after the current ones. */
  previous?: Pick<OAuthKeys, 'accessToken' | 'credential' | 'csrf' | 'records' | 'recordIds'>;
}

const SALT = Buffer.from('mcp-catalog-gateway/oauth/v1');

/**
 * Derives every purpose key from `root` (any length; a configured secret should carry at least 32 bytes
 * of entropy), and from `previousRoot` the keys that still open what it sealed.
 */
export function deriveKeys(root: Buffer | string, source: OAuthKeys['source'], previousRoot?: Buffer | string): OAuthKeys {
  const derive = (from: Buffer | string, info: string) => Buffer.from(hkdfSync('sha256', from, SALT, info, 32));
  const previous =
    previousRoot === undefined
      ? undefined
      : {
          accessToken: derive(previousRoot, 'access-token-jwe'),
          credential: derive(previousRoot, 'credential-wrap'),
          csrf: derive(previousRoot, 'csrf'),
          records: derive(previousRoot, 'store-record-digest'),
          recordIds: derive(previousRoot, 'store-record-id-wrap'),
        };
  return {
    accessToken: derive(root, 'access-token-jwe'),
    credential: derive(root, 'credential-wrap'),
    cookies: [derive(root, 'cookies'), ...(previousRoot === undefined ? [] : [derive(previousRoot, 'cookies')])].map((k) => k.toString('base64url')),
    csrf: derive(root, 'csrf'),
    records: derive(root, 'store-record-digest'),
    recordIds: derive(root, 'store-record-id-wrap'),
    source,
    ...(previous ? { previous } : {}),
  };
}

/** A fresh random root key (32 bytes) for {@link deriveKeys}. */
export function randomRootKey(): Buffer {
  return randomBytes(32);
}

/**
 * Encrypts `value` (JSON) with AES-256-GCM under `key`: base64url of IV (12) | tag (16) | ciphertext.
 * `context` is bound as additional data, so a blob wrapped for one purpose does not open for another.
 */
export function wrap(key: Buffer, value: unknown, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Opens a {@link wrap} blob with the current credential key, else the previous one (rotation); undefined when neither opens it. */
export function unwrapCredential<T>(keys: Pick<OAuthKeys, 'credential' | 'previous'>, blob: string, context: string): T | undefined {
  return unwrap<T>(keys.credential, blob, context) ?? (keys.previous ? unwrap<T>(keys.previous.credential, blob, context) : undefined);
}

/** Opens a {@link wrap} blob; undefined when it was tampered with, wrapped under another key or another context. */
export function unwrap<T>(key: Buffer, blob: string, context: string): T | undefined {
  try {
    const raw = Buffer.from(blob, 'base64url');
    if (raw.length < 29) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
