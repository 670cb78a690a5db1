import type { ApiKeyConfig, GatewayConfig } from '../../config/types.ts';
import { credentialDigest, type Credential } from './credentials.ts';

/** The API key a credential presented: its name (for logs) and scopes. */
export interface ApiKeyMatch {
  readonly name: string;
  readonly scopes: readonly string[];
}

/**
 * The config's own credential source (`credentials.apiKeys`): a table from the keyed digest of each
 * key's credential, in the exact normalised form {@link extractCredential} produces (the key id +
 * secret pair, or `Authorization: Bearer <token>`), to its name and scopes. Only digests are kept, so
 * the table (and any heap dump of it) cannot confirm a guessed secret without the server key; a lookup
 * is one map read, no network, no comparison that could leak timing about a secret.
 */
export class ApiKeySource {
  private readonly byDigest = new Map<string, ApiKeyMatch>();
  /** The key ids of the key pairs (ids only, never secrets): a refused pair names one of them, or none. */
  private readonly keyIds = new Set<string>();
  /** The digests of the bearer tokens' credentials (`Authorization: Bearer <token>` alone). */
  private readonly tokenDigests = new Set<string>();

  /**
   * @param apiKeys - as loaded (secrets already read from the environment by config/load.ts).
   * @param key - the server key of every credential digest (credentials.ts `serverKey`).
   */
  constructor(
    apiKeys: readonly ApiKeyConfig[],
    private readonly credentials: GatewayConfig['credentials'],
    private readonly key: Buffer,
  ) {
    for (const apiKey of apiKeys) {
      const match: ApiKeyMatch = { name: apiKey.name, scopes: [...new Set(apiKey.scopes)].sort() };
      const digest = credentialDigest(this.headersOf(apiKey), key);
      this.byDigest.set(digest, match);
      if (apiKey.key !== undefined) this.keyIds.add(apiKey.key);
      else this.tokenDigests.add(digest);
    }
  }

  /** How many keys the table holds (0: this source is not configured). */
  get size(): number {
    return this.byDigest.size;
  }

  /**
   * The key a credential presents, or undefined when it presents none of them. A credential carrying
   * both forms must name the same key with each (two keys at once identify nobody). An OAuth token's
   * credential (`granted`) is digested with its grant (oauth/credential.ts): its key is found by its headers.
   */
  resolve(credential: Credential): ApiKeyMatch | undefined {
    const whole = this.byDigest.get(credential.granted ? credentialDigest(credential.headers, this.key) : credential.digest);
    if (whole || this.byDigest.size === 0 || !('authorization' in credential.headers) || Object.keys(credential.headers).length === 1) return whole;
    const { authorization, ...pair } = credential.headers;
    const byPair = this.byDigest.get(credentialDigest(pair, this.key));
    const byToken = this.byDigest.get(credentialDigest({ authorization: authorization! }, this.key));
    return byPair && byPair === byToken ? byPair : undefined;
  }

  /**
   * Whether a credential carries one of this table's keys: a key id of its own (its key header), or one of its
   * bearer tokens beside a key pair. Then this table alone decides it, and a credential it does not accept is
   * refused, never asked of a later source: a configured token sent beside a platform key pair was vouched for
   * by the scope endpoint (for the pair) and went upstream with it (review; a configured key never goes upstream).
   */
  owns(credential: Credential): boolean {
    if (this.ownsKeyId(credential)) return true;
    const { authorization } = credential.headers;
    // A bearer alone was looked up whole by resolve(): only a bearer beside other headers needs its own digest.
    return authorization !== undefined && this.tokenDigests.size > 0 && Object.keys(credential.headers).length > 1
      ? this.tokenDigests.has(credentialDigest({ authorization }, this.key))
      : false;
  }

  private ownsKeyId(credential: Credential): boolean {
    const id = credential.headers[this.credentials.keyHeader.toLowerCase()];
    return id !== undefined && this.keyIds.has(id);
  }

  /**
   * Whether a credential this source does not know names one of its key ids with another secret (for the audit
   * trail's reason): its key pair alone matches no configured key. A right pair beside a bearer of another key is
   * refused too (two keys at once identify nobody), but its secret was not wrong (review).
   */
  wrongSecret(credential: Credential): boolean {
    if (!this.ownsKeyId(credential) || this.resolve(credential) !== undefined) return false;
    const { authorization: _bearer, ...pair } = credential.headers;
    return this.byDigest.get(credentialDigest(pair, this.key)) === undefined;
  }

  private headersOf(apiKey: ApiKeyConfig): Record<string, string> {
    if (apiKey.token !== undefined) return { authorization: `Bearer ${apiKey.token}` };
    return { [this.credentials.keyHeader.toLowerCase()]: apiKey.key!, [this.credentials.secretHeader.toLowerCase()]: apiKey.secret! };
  }
}
