/**
 * The built-in authorization server on two replicas sharing one real Redis (issue 28): concurrent
 * refreshes of one token across both rotate it at most once and leave the family dead; every key the
 * server writes carries a TTL; no key name, set member or value holds a code or token (the store names
 * them by keyed digests; a reviewer redeemed a refresh token read from SCAN); a revoked token and its
 * refresh token stay refused after both replicas restart; while Redis is unreachable a bearer token is answered 503 with Retry-After (the client keeps
 * it), never 401; a token secret and a cache key rotate without signing anyone out
 * (GATEWAY_TOKEN_SECRET_PREVIOUS, GATEWAY_CACHE_KEY_PREVIOUS). The replicas are two runtimes in this
 * process, each with its own Redis connections, served in process. Needs `redis-server` on PATH.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { DeepPartial } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { inProcessGateway, type InProcessGateway } from '../../helpers/in-process.ts';
import { oauthClient, redeemCode, signInFlow } from '../../helpers/oauth-harness.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';

const SECRET = 'test-secret-0123456789abcdef-replicas-one';
const NEXT_SECRET = 'test-secret-0123456789abcdef-replicas-two';
const CACHE_KEY = 'cache-key-0123456789abcdef-replicas-one';
const NEXT_CACHE_KEY = 'cache-key-0123456789abcdef-replicas-two';
const ISSUER = 'http://127.0.0.1:7';
const ALICE = { key: 'alice', secret: 'alice-secret', scope: 'ledger:read' };
const TOOLS = [{ definition: { name: 'read_ledger', inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } } } as Tool }];

describe.skipIf(!hasRedis)('two replicas sharing Redis', () => {
  let redis: RedisServer;
  let endpoint: ScopeEndpoint;
  let replicas: InProcessGateway[];

  /** A replica: every replica has the same issuer (the public URL), as behind a load balancer. */
  async function replica(overrides: DeepPartial<GatewayConfig> = {}): Promise<InProcessGateway> {
    const gateway = inProcessGateway(
      {
        publicUrl: ISSUER,
        scopes: { endpoint: endpoint.url, ...overrides.scopes },
        cache: { redisUrl: redis.url, key: CACHE_KEY, operationTimeoutMs: 2000, ...overrides.cache },
        oauth: { mode: 'builtin', tokenSecret: SECRET, scopes: ['ledger:read'], ...overrides.oauth },
        upstreams: [{ health: { intervalMs: 0 } }],
      },
      { fake: { tools: TOOLS } },
    );
    await gateway.runtime.startOAuth();
    replicas.push(gateway);
    return gateway;
  }
  /** Requests for the public URL go to `gateway` (the load balancer's choice). */
  const via = (gateway: InProcessGateway) => oauthClient(ISSUER, (request) => gateway.fetch(request));

  // A Redis, scope endpoint and two replicas of each test's own: tests restart the replicas, and one stops Redis.
  beforeEach(async () => {
    redis = await startRedis();
    endpoint = await startScopeEndpoint({ alice: ['ledger:read'] });
    replicas = [];
    await replica();
    await replica();
  });
  afterEach(async () => {
    await Promise.allSettled(replicas.map((r) => r.close()));
    await endpoint?.close();
    await redis?.kill();
  });

  it('rotates a refresh token at most once under 20 concurrent refreshes split across both, and the family is dead afterwards', async () => {
    const [a, b] = replicas as [InProcessGateway, InProcessGateway];
    const clientId = (await via(a).register()).client_id;
    for (let round = 0; round < 10; round++) {
      const signedIn = await via(a).tokens(clientId, ALICE);
      const refresh = String(signedIn.body.refresh_token);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => via(i % 2 ? a : b).refresh(clientId, refresh)));
      const won = answers.filter((x) => x.status === 200);
      expect(won.length, `round ${round}`).toBeLessThanOrEqual(1);
      for (const lost of answers.filter((x) => x.status !== 200)) expect(lost.body.error).toBe('invalid_grant');
      for (const gateway of [a, b]) {
        expect((await via(gateway).listTools(String(signedIn.body.access_token))).status).toBe(401);
        for (const w of won) {
          expect((await via(gateway).listTools(String(w.body.access_token))).status).toBe(401);
          expect((await via(gateway).refresh(clientId, String(w.body.refresh_token))).body.error).toBe('invalid_grant');
        }
      }
    }
    // Two replicas started and 10 rounds of 20 refreshes: past the default 30 s at a load of 25 on 2 cores.
  }, 180_000);

  it('writes every key with a TTL: clients, grants, codes, tokens, marks, sign-in pages', async () => {
    const [a] = replicas;
    const oauth = via(a!);
    const { client_id } = await oauth.register();
    await oauth.register();
    const one = await oauth.tokens(client_id, ALICE);
    await oauth.refresh(client_id, String(one.body.refresh_token));
    await oauth.refresh(client_id, String(one.body.refresh_token));
    const two = await oauth.tokens(client_id, ALICE);
    await oauth.revoke(client_id, String(two.body.access_token));
    await oauth.revoke(client_id, String(two.body.refresh_token));
    await oauth.tokens(client_id, ALICE);
    const keys = redis.cli('--scan', '--pattern', 'mcp-gateway:oauth:*').split('\n').filter(Boolean);
    expect(keys.length).toBeGreaterThan(10);
    const withoutTtl = keys.filter((key) => Number(redis.cli('TTL', key).trim()) < 0);
    expect(withoutTtl).toEqual([]);
    // The kinds of record the flows above wrote, each with its expiry.
    for (const kind of [
      'Client:',
      'Grant:',
      'RefreshToken:',
      'AuthorizationCode:',
      'consumed:',
      'revoked-at:',
      'revoked-grant:',
      'grant:',
      'grant-credential:',
    ])
      expect(
        keys.some((key) => key.startsWith(`mcp-gateway:oauth:${kind}`)),
        kind,
      ).toBe(true);
  });

  it('keeps no code or token in Redis (no key name, set member or value holds one), and refresh and reuse detection still work', async () => {
    const [a, b] = replicas as [InProcessGateway, InProcessGateway];
    const oauth = via(a);
    const { client_id } = await oauth.register();
    const flow = await signInFlow(ISSUER, { ...ALICE, clientId: client_id, fetch: oauth.send });
    const issued = await redeemCode(ISSUER, flow, client_id, { fetch: oauth.send });
    expect(issued.status).toBe(200);
    const rotated = await oauth.refresh(client_id, String(issued.body.refresh_token));
    expect(rotated.status).toBe(200);
    const secrets = {
      code: flow.code,
      refreshToken: String(issued.body.refresh_token),
      accessToken: String(issued.body.access_token),
      rotatedRefreshToken: String(rotated.body.refresh_token),
      rotatedAccessToken: String(rotated.body.access_token),
    };
    // Everything Redis holds: key names, set members, string values (what SCAN, MONITOR or a backup shows).
    const held: string[] = [];
    for (const key of redis.cli('--scan', '--pattern', '*').split('\n').filter(Boolean)) {
      held.push(key);
      const type = redis.cli('TYPE', key).trim();
      if (type === 'string') held.push(redis.cli('GET', key));
      else if (type === 'set') held.push(...redis.cli('SMEMBERS', key).split('\n'));
      // The shared keys' fingerprints (ops/shared-keys.ts): a digest of a constant under each secret, and a time.
      else if (type === 'hash') held.push(...redis.cli('HGETALL', key).split('\n'));
      else throw new Error(`unexpected ${type} at ${key}`);
    }
    expect(held.some((text) => text.startsWith('mcp-gateway:oauth:RefreshToken:'))).toBe(true);
    for (const [name, secret] of Object.entries(secrets))
      expect(
        held.filter((text) => text.includes(secret)),
        name,
      ).toEqual([]);
    // The rotated refresh token is redeemed on the other replica; the first one presented again is reuse: the family dies.
    const again = await via(b).refresh(client_id, secrets.rotatedRefreshToken);
    expect(again.status).toBe(200);
    expect((await via(b).refresh(client_id, secrets.refreshToken)).body.error).toBe('invalid_grant');
    expect((await via(a).refresh(client_id, String(again.body.refresh_token))).body.error).toBe('invalid_grant');
    expect((await via(a).listTools(String(again.body.access_token))).status).toBe(401);
  });

  it('keeps a revoked token and its refresh token refused after both replicas restart', async () => {
    const [a] = replicas;
    const oauth = via(a!);
    const { client_id } = await oauth.register();
    const signedIn = await oauth.tokens(client_id, ALICE);
    expect((await oauth.revoke(client_id, String(signedIn.body.access_token))).status).toBe(200);
    const other = await oauth.tokens(client_id, ALICE);
    expect((await oauth.revoke(client_id, String(other.body.refresh_token))).status).toBe(200);
    await Promise.all(replicas.splice(0).map((r) => r.close()));
    const [c, d] = [await replica(), await replica()];
    for (const gateway of [c, d]) {
      expect((await via(gateway).listTools(String(signedIn.body.access_token))).status).toBe(401);
      expect((await via(gateway).listTools(String(other.body.access_token))).status).toBe(401);
      expect((await via(gateway).refresh(client_id, String(other.body.refresh_token))).body.error).toBe('invalid_grant');
    }
    // A token of the same sign-in that was not revoked still works after the restart.
    expect((await via(d).refresh(client_id, String(signedIn.body.refresh_token))).status).toBe(200);
  });

  it('rotates GATEWAY_TOKEN_SECRET and GATEWAY_CACHE_KEY without signing anyone out: tokens and scope entries of the old ones still work', async () => {
    const [c] = replicas;
    const { client_id } = await via(c!).register();
    const signedIn = await via(c!).tokens(client_id, ALICE);
    expect((await via(c!).listTools(String(signedIn.body.access_token))).status).toBe(200);
    const lookups = endpoint.hits;
    const rotated = await replica({
      oauth: { tokenSecret: NEXT_SECRET, tokenSecretPrevious: SECRET },
      cache: { key: NEXT_CACHE_KEY, keyPrevious: CACHE_KEY },
    });
    // The access token sealed with the old secret opens; its scope entry (keyed with the old cache key) is found: no lookup.
    expect(await via(rotated).listTools(String(signedIn.body.access_token))).toEqual({ status: 200, tools: ['read_ledger'] });
    expect(endpoint.hits).toBe(lookups);
    // The refresh rotates under the new secret, and the new token opens there.
    const refreshed = await via(rotated).refresh(client_id, String(signedIn.body.refresh_token));
    expect(refreshed.status).toBe(200);
    expect((await via(rotated).listTools(String(refreshed.body.access_token))).status).toBe(200);
    // A replica that knows only the new secret does not open what the old one sealed: the previous value is what keeps it working.
    const onlyNew = await replica({ oauth: { tokenSecret: NEXT_SECRET }, cache: { key: NEXT_CACHE_KEY } });
    expect((await via(onlyNew).listTools(String(signedIn.body.access_token))).status).toBe(401);
  });

  it('answers a bearer token 503 with Retry-After while Redis is unreachable, never 401', async () => {
    const [c] = replicas;
    const { client_id } = await via(c!).register();
    const signedIn = await via(c!).tokens(client_id, ALICE);
    await redis.kill();
    const response = await c!.fetch(
      new Request(`${ISSUER}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          authorization: `Bearer ${signedIn.body.access_token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
    );
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(((await response.json()) as { error: { data: { kind: string } } }).error.data.kind).toBe('auth_unavailable');
  });
});
