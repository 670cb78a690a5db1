/**
 * Credential normalisation and keyed digests (issue 13): variants of one credential (scheme case,
 * spaces, header-name case) are one credential, forwarded in one form and cached under one key; every
 * digest is an HMAC-SHA-256 under the server key (`cache.key` / GATEWAY_CACHE_KEY), so what a store
 * holds cannot confirm a guessed credential without that key.
 */
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { credentialDigest, extractCredential, serverKey } from '../../../gateway/auth/credentials.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { rawRequest } from '../../helpers/enforcement.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const CREDENTIALS = { keyHeader: 'X-CPZ-Key', secretHeader: 'x-cpz-secret', bearer: true, apiKeys: [] };
const KEY = Buffer.from('a-server-key-of-at-least-thirty-two-bytes');

describe('extractCredential', () => {
  it('normalises the bearer scheme and spacing: one credential, forwarded as `Bearer <token>`', () => {
    const variants = ['Bearer tok-1', 'bearer tok-1', 'BEARER     tok-1', '  Bearer\ttok-1  '].map((authorization) =>
      extractCredential({ authorization }, CREDENTIALS, KEY),
    );
    for (const credential of variants) {
      expect(credential?.headers).toEqual({ authorization: 'Bearer tok-1' });
      expect(credential?.digest).toBe(variants[0]!.digest);
    }
  });

  it('takes header names case-insensitively, as configured, and keeps the values exact', () => {
    const a = extractCredential({ 'x-cpz-key': 'k', 'x-cpz-secret': 's' }, CREDENTIALS, KEY);
    expect(a?.headers).toEqual({ 'x-cpz-key': 'k', 'x-cpz-secret': 's' });
    expect(extractCredential({ 'x-cpz-key': 'K', 'x-cpz-secret': 's' }, CREDENTIALS, KEY)?.digest).not.toBe(a?.digest);
  });

  it('refuses what is not one bearer token (another scheme, two tokens, an empty one)', () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer a b', 'Bearer', 'Bearer '])
      expect(extractCredential({ authorization }, CREDENTIALS, KEY)).toBeUndefined();
  });

  it('digests with HMAC-SHA-256 under the server key: not the plain SHA-256, and different under another key', () => {
    const credential = extractCredential({ authorization: 'Bearer tok-1' }, CREDENTIALS, KEY)!;
    const canonical = JSON.stringify([['authorization', 'Bearer tok-1']]);
    expect(credential.digest).toBe(createHmac('sha256', KEY).update(canonical).digest('hex'));
    expect(credential.digest).not.toBe(createHash('sha256').update(canonical).digest('hex'));
    expect(credentialDigest(credential.headers, Buffer.from('another-server-key-of-thirty-two-bytes'))).not.toBe(credential.digest);
  });

  it('uses the configured server key, else one random key per process (the same for every gateway in it)', () => {
    expect(serverKey('configured-key-of-at-least-32-bytes!!')).toEqual(Buffer.from('configured-key-of-at-least-32-bytes!!'));
    expect(serverKey(undefined)).toEqual(serverKey(undefined));
    expect(serverKey(undefined)).toHaveLength(32);
  });
});

describe('normalised credentials through the gateway', () => {
  let endpoint: ScopeEndpoint;
  let stack: Stack;
  beforeAll(async () => {
    endpoint = await startScopeEndpoint({ 'tok-variants': ['a'] });
    stack = await startStack({ upstream: { tools: [] }, scopeEndpoint: endpoint.url });
  });
  afterAll(async () => {
    await stack?.close();
    await endpoint?.close();
  });

  it('looks one token up once, however its variants are written', async () => {
    const before = endpoint.hits;
    for (const authorization of ['Bearer tok-variants', 'bearer tok-variants', 'BEARER   tok-variants']) {
      const response = await rawRequest(stack.gatewayUrl, '/mcp', 'modern', 'tools/list', {}, { authorization });
      expect(response.status).toBe(200);
      await response.text();
    }
    expect(endpoint.hits - before).toBe(1);
  });
});

describe.skipIf(!hasRedis)('keyed digests in Redis', () => {
  let redis: RedisServer;
  let redisUrl: string;
  let endpoint: ScopeEndpoint;
  const gateways: RunningGateway[] = [];
  const SERVER_KEY = 'replicas-share-this-key-0123456789abcdef';
  beforeAll(async () => {
    redis = await startRedis();
    redisUrl = redis.url;
    endpoint = await startScopeEndpoint({ 'tok-redis': ['a'] });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await endpoint?.close();
    await redis?.kill();
  });

  const start = async (key: string) => {
    const upstream = await startStack({ upstream: { tools: [] }, scopeEndpoint: endpoint.url });
    const gateway = await startGateway(
      loadConfig({
        env: { GATEWAY_CACHE_KEY: key },
        overrides: { listen: { port: 0 }, upstreams: [{ url: upstream.upstreamUrl }], scopes: { endpoint: endpoint.url }, cache: { redisUrl } },
      }),
      { logDestination: new LogCapture() },
    );
    gateways.push(gateway, { url: '', close: () => upstream.close() } as RunningGateway);
    return gateway;
  };

  it('stores scopes under the HMAC of the credential only: not its SHA-256, not the token; replicas with one key share entries', async () => {
    const first = await start(SERVER_KEY);
    const second = await start(SERVER_KEY);
    const other = await start('a-different-key-0123456789abcdef-xyz');
    const before = endpoint.hits;
    for (const gateway of [first, second])
      await (await rawRequest(gateway.url, '/mcp', 'modern', 'tools/list', {}, { authorization: 'Bearer tok-redis' })).text();
    expect(endpoint.hits - before).toBe(1);
    await (await rawRequest(other.url, '/mcp', 'modern', 'tools/list', {}, { authorization: 'Bearer tok-redis' })).text();
    expect(endpoint.hits - before).toBe(2);

    const keys = spawnSync('redis-cli', ['-u', redisUrl, '--scan'], { encoding: 'utf8' }).stdout;
    const canonical = JSON.stringify([['authorization', 'Bearer tok-redis']]);
    expect(keys).not.toContain('tok-redis');
    expect(keys).not.toContain(createHash('sha256').update(canonical).digest('hex'));
    expect(keys).toContain(createHmac('sha256', SERVER_KEY).update(canonical).digest('hex'));
  });
});
