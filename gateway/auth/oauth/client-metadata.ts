import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { bareHost, isLoopbackAddress, isLoopbackName, isSpecialUseAddress } from './fetched-urls.ts';

/** Why a client ID metadata document was not accepted; the message is safe to show (no secrets in it). */
export class ClientMetadataError extends Error {
  override readonly name = 'ClientMetadataError';
}

export interface ClientMetadataOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Upper bound of how long a document is cached; the document's own Cache-Control max-age may shorten it. */
  cacheTtlMs: number;
  /** Loopback hosts allowed (and plain http for them only): for tests and local development. */
  allowLoopback: boolean;
  /** Extra trusted CA certificates (PEM) for fetching documents, e.g. a private CA. */
  ca?: string;
}

/** The client metadata fields passed on to the authorization server (RFC 7591 §2); others are dropped. */
const KEPT_FIELDS = [
  'client_id',
  'client_name',
  'client_uri',
  'logo_uri',
  'tos_uri',
  'policy_uri',
  'redirect_uris',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
  'application_type',
  'scope',
  'contacts',
  'jwks_uri',
  'jwks',
];

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-00, as required by the MCP
 * authorization spec 2025-11-25 and 2026-07-28 "Client Registration"): a `client_id` that is an https
 * URL with a path names a JSON document of client metadata. The document is fetched with a time budget
 * and a size limit, no redirects, and cached (LRU) for min(Cache-Control max-age, `cacheTtlMs`); its
 * `client_id` must equal the URL exactly, it must list `redirect_uris`, and it may not carry a secret
 * (the client is public: `token_endpoint_auth_method` `none`). SSRF (draft §6.3): the address actually
 * connected to is checked (a DNS lookup hook, so rebinding cannot slip past): private, loopback,
 * link-local and other special-use ranges are refused unless `allowLoopback` (which admits loopback
 * only, and http only there).
 * @returns `resolve(url)`: the metadata to register, or throws {@link ClientMetadataError}.
 */
export function createClientMetadataResolver(options: ClientMetadataOptions) {
  const cache = new LRUCache<string, Record<string, unknown>>({ max: 1000 });
  const inflight = new Map<string, Promise<Record<string, unknown>>>();

  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !permitted(a.address));
      if (refused || list.length === 0) return callback(new ClientMetadataError('the client_id host resolves to an address that is not allowed'), '', 0);
      if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };

  function permitted(address: string): boolean {
    if (options.allowLoopback && isLoopbackAddress(address)) return true;
    return !isSpecialUseAddress(address);
  }

  /** Validates the URL form (draft §3): https (http for loopback when allowed), a path, no fragment, no userinfo, no dot segments. */
  function checkUrl(clientId: string): URL {
    const url = URL.parse(clientId);
    if (!url) throw new ClientMetadataError('client_id is not a URL');
    const host = bareHost(url);
    const isLoopback = isLoopbackName(host) || (isIP(host) !== 0 && isLoopbackAddress(host));
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowLoopback && isLoopback))
      throw new ClientMetadataError('client_id URL must use https');
    if (url.pathname === '/' || url.pathname === '') throw new ClientMetadataError('client_id URL must have a path');
    if (url.hash || clientId.includes('#')) throw new ClientMetadataError('client_id URL must not have a fragment');
    if (url.username || url.password) throw new ClientMetadataError('client_id URL must not have user information');
    if (/\/\.\.?(\/|$)/.test(clientId.replace(/%2e/gi, '.'))) throw new ClientMetadataError('client_id URL must not have dot segments');
    if (isIP(host) !== 0 && !permitted(host)) throw new ClientMetadataError('the client_id host is an address that is not allowed');
    if (isLoopbackName(host) && !options.allowLoopback) throw new ClientMetadataError('the client_id host is not allowed');
    return url;
  }

  function fetchDocument(url: URL): Promise<{ body: string; maxAgeMs?: number }> {
    return new Promise((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json' },
          lookup: guardedLookup,
          timeout: options.timeoutMs,
          ...(options.ca ? { ca: options.ca } : {}),
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new ClientMetadataError(`client ID metadata document fetch answered HTTP ${res.statusCode}`));
          }
          const declared = Number(res.headers['content-length']);
          if (Number.isFinite(declared) && declared > options.maxBytes) {
            res.destroy();
            return reject(new ClientMetadataError(`client ID metadata document exceeds ${options.maxBytes} bytes`));
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > options.maxBytes) {
              res.destroy();
              reject(new ClientMetadataError(`client ID metadata document exceeds ${options.maxBytes} bytes`));
            } else chunks.push(chunk);
          });
          res.on('end', () => {
            const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(String(res.headers['cache-control'] ?? ''))?.[1];
            resolve({ body: Buffer.concat(chunks).toString('utf8'), maxAgeMs: maxAge === undefined ? undefined : Number(maxAge) * 1000 });
          });
          res.on('error', (error) =>
            reject(error instanceof ClientMetadataError ? error : new ClientMetadataError('client ID metadata document fetch failed')),
          );
        },
      );
      // A budget for the whole exchange, not only idle time.
      const deadline = setTimeout(
        () => req.destroy(new ClientMetadataError(`client ID metadata document fetch exceeded ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      req.on('close', () => clearTimeout(deadline));
      req.on('timeout', () => req.destroy(new ClientMetadataError(`client ID metadata document fetch exceeded ${options.timeoutMs} ms`)));
      req.on('error', (error) => reject(error instanceof ClientMetadataError ? error : new ClientMetadataError('client ID metadata document fetch failed')));
      req.end();
    });
  }

  async function load(clientId: string): Promise<Record<string, unknown>> {
    const url = checkUrl(clientId);
    const { body, maxAgeMs } = await fetchDocument(url);
    let document: unknown;
    try {
      document = JSON.parse(body);
    } catch {
      throw new ClientMetadataError('client ID metadata document is not JSON');
    }
    if (!document || typeof document !== 'object' || Array.isArray(document)) throw new ClientMetadataError('client ID metadata document is not a JSON object');
    const doc = document as Record<string, unknown>;
    if (doc.client_id !== clientId) throw new ClientMetadataError('client ID metadata document client_id does not match its URL');
    if (!Array.isArray(doc.redirect_uris) || doc.redirect_uris.length === 0 || !doc.redirect_uris.every((u) => typeof u === 'string'))
      throw new ClientMetadataError('client ID metadata document must list redirect_uris');
    if ('client_secret' in doc || 'client_secret_expires_at' in doc)
      throw new ClientMetadataError('client ID metadata document must not contain a client_secret');
    const method = doc.token_endpoint_auth_method ?? 'none';
    if (method !== 'none' && method !== 'private_key_jwt')
      throw new ClientMetadataError('client ID metadata document must not use a shared-secret token_endpoint_auth_method');
    const kept = Object.fromEntries(KEPT_FIELDS.filter((f) => f in doc).map((f) => [f, doc[f]]));
    kept.token_endpoint_auth_method = method;
    const ttl = Math.max(1000, Math.min(options.cacheTtlMs, maxAgeMs ?? options.cacheTtlMs));
    cache.set(clientId, kept, { ttl });
    return kept;
  }

  return {
    /** The document's client metadata (cached), or throws {@link ClientMetadataError}. */
    async resolve(clientId: string): Promise<Record<string, unknown>> {
      const cached = cache.get(clientId);
      if (cached) return cached;
      const pending = inflight.get(clientId) ?? load(clientId).finally(() => inflight.delete(clientId));
      inflight.set(clientId, pending);
      return pending;
    },
  };
}
