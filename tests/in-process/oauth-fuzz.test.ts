/**
 * A bounded, deterministic fuzz of the built-in authorization server (issue 28, Done when), through the
 * real handler in process: malformed registration documents (wrong types, huge and odd values, bad
 * redirect URIs, not JSON), authorization requests (PKCE variants, redirect URIs, resource indicators,
 * response types, scopes), token requests (every grant type, real and forged codes, verifiers, refresh
 * tokens, resources, wrong content types) and revocations, from a fixed seed. For every case: no HTTP
 * 5xx, no hang (10 s), and every refusal names an RFC 6749 / RFC 7591 (or RFC 7009, 8707, 6750) error
 * code: in a JSON body, in the redirect back to the client, or on the error page a person sees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { seeded } from '../../search/semantic/seeded-random.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { oauthClient, pkce, REDIRECT_URI } from '../helpers/oauth-harness.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const SEED = 0x28_2026;
const CASES = 1200;
const HANG_MS = 10_000;

/**
 * The codes a refusal may carry: RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1, RFC 8707
 * §2, RFC 6750 §3.1; and the registered extension codes for a request object the server does not take
 * (OpenID Connect Core §3.1.2.6, RFC 9101), which oidc-provider answers to `request` / `request_uri`.
 */
const CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'unsupported_response_type',
  'temporarily_unavailable',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'invalid_software_statement',
  'unapproved_software_statement',
  'unsupported_token_type',
  'invalid_target',
  'invalid_token',
  'request_not_supported',
  'request_uri_not_supported',
  'invalid_request_object',
]);

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let base: string;
let clientId: string;
/** A real authorization code, refresh token and access token, for the cases that reach past the parsers. */
const real = { codes: [] as { code: string; verifier: string }[], refresh: [] as string[], access: [] as string[] };

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: ['ledger:read'] });
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-oauth-fuzz', scopes: ['ledger:read', 'orders:read'] },
      rateLimits: { registrations: { perAddress: { points: 100_000, durationMs: 3_600_000 }, total: { points: 100_000, durationMs: 3_600_000 } } },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'read_ledger', inputSchema: { type: 'object' } } as Tool }] } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  base = gateway.gatewayUrl;
  const oauth = oauthClient(base, gateway.fetch);
  clientId = (await oauth.register()).client_id;
  for (let i = 0; i < 4; i++) {
    const issued = await oauth.tokens(clientId, { key: 'alice', secret: 'x', scope: 'ledger:read' });
    real.refresh.push(String(issued.body.refresh_token));
    real.access.push(String(issued.body.access_token));
  }
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const maybe = (random: Random, p = 0.5) => random() < p;

/** Odd values: wrong types, empty, huge, control characters, look-alike URLs, nested structures. */
function oddValue(random: Random): unknown {
  return pick(random, [
    () => '',
    () => ' ',
    () => 'x'.repeat(Math.floor(random() * 20_000)),
    () => '\u0000\u0001\u007f',
    () => '🙂'.repeat(50),
    () => 0,
    () => -1,
    () => 1e308,
    () => true,
    () => null,
    () => [],
    () => [[[[]]]],
    () => ({}),
    () => ({ nested: { deeper: ['x'] } }),
    () => 'javascript:alert(1)',
    () => 'http://attacker.example/cb',
    () => 'https://127.0.0.1.attacker.example/cb',
    () => 'http://127.0.0.1:8976/callback#frag',
    () => 'urn:ietf:wg:oauth:2.0:oob',
    () => 'data:text/html,hi',
    () => '../../etc/passwd',
    () => '%00%zz',
  ])();
}

const URIS = [
  REDIRECT_URI,
  'https://app.example/cb',
  'http://localhost:9/cb',
  'http://[::1]:9/cb',
  'http://attacker.example/cb',
  'cursor://oauth/cb',
  'javascript:alert(1)',
  'https://app.example/cb#x',
  'not a url',
  '',
];
const RESOURCES = () => [
  `${base}/mcp`,
  `${base}/mcp/compact`,
  `${base}/MCP`,
  `${base}/mcp/`,
  `${base}/mcp#frag`,
  'https://elsewhere.example/mcp',
  `http://localhost:${new URL(base).port}/mcp`,
  'not a url',
  'urn:x',
  '',
];

/** One registration case: a document (or not JSON), with a content type. */
function registration(random: Random): Request {
  const fields = [
    'client_name',
    'redirect_uris',
    'grant_types',
    'response_types',
    'token_endpoint_auth_method',
    'application_type',
    'scope',
    'contacts',
    'client_uri',
    'logo_uri',
    'jwks',
    'jwks_uri',
    'software_statement',
    'client_secret',
    'extra_field',
  ];
  const document: Record<string, unknown> = { redirect_uris: [pick(random, URIS)], token_endpoint_auth_method: 'none' };
  for (const field of fields)
    if (maybe(random, 0.25))
      document[field] = maybe(random)
        ? oddValue(random)
        : field === 'redirect_uris'
          ? [pick(random, URIS), pick(random, URIS)]
          : pick(random, ['web', 'native', 'none', 'client_secret_basic', 'authorization_code', 'code token', 'ledger:read', 'bogus:scope']);
  const clean = { client_name: 'fuzz', redirect_uris: [pick(random, URIS.slice(0, 4))], token_endpoint_auth_method: 'none' };
  const body = pick(random, [
    () => JSON.stringify(clean),
    () => JSON.stringify(document),
    () => JSON.stringify(document),
    () => JSON.stringify(oddValue(random)),
    () => '{"redirect_uris":',
    () => 'not json',
    () => JSON.stringify([document]),
  ])();
  const type = pick(random, ['application/json', 'application/json', 'application/x-www-form-urlencoded', 'text/plain', '']);
  return new Request(`${base}/oauth/register`, { method: 'POST', headers: type ? { 'content-type': type } : {}, body });
}

/** One authorization request: the parameters a client (or an attacker) might send. */
function authorization(random: Random): Request {
  const p = pkce();
  const params = new URLSearchParams();
  const set = (name: string, value: () => string) => maybe(random, 0.85) && params.append(name, value());
  set('client_id', () => pick(random, [clientId, clientId, 'unknown-client', '', 'https://client.example/metadata.json', String(oddValue(random))]));
  set('response_type', () => pick(random, ['code', 'code', 'token', 'code id_token', 'none', '']));
  set('redirect_uri', () => pick(random, URIS));
  set('scope', () => pick(random, ['ledger:read', 'ledger:read orders:read', 'openid offline_access ledger:read', 'bogus', '', 'x'.repeat(5000)]));
  set('state', () => pick(random, ['s', '', 'x'.repeat(3000)]));
  set('code_challenge', () => pick(random, [p.challenge, p.challenge, 'short', '', p.verifier]));
  set('code_challenge_method', () => pick(random, ['S256', 'S256', 'plain', 'S512', '']));
  if (maybe(random, 0.7)) params.append('resource', pick(random, RESOURCES()));
  if (maybe(random, 0.1)) params.append('resource', pick(random, RESOURCES()));
  if (maybe(random, 0.05)) params.append('request', 'eyJhbGciOiJub25lIn0.e30.');
  if (maybe(random, 0.05)) params.append('prompt', pick(random, ['none', 'login', 'consent']));
  return new Request(`${base}/oauth/authorize?${params}`, { redirect: 'manual' });
}

/** One token request, for every grant type, with real or forged artifacts. */
function token(random: Random): Request {
  const params = new URLSearchParams();
  const grant = pick(random, [
    'authorization_code',
    'refresh_token',
    'refresh_token',
    'client_credentials',
    'password',
    'urn:ietf:params:oauth:grant-type:device_code',
    '',
    'bogus',
  ]);
  if (grant) params.append('grant_type', grant);
  if (maybe(random, 0.9)) params.append('client_id', pick(random, [clientId, clientId, 'unknown-client', '']));
  if (maybe(random, 0.6)) params.append('code', pick(random, ['forged-code', '', 'x'.repeat(5000)]));
  if (maybe(random, 0.6)) params.append('code_verifier', pick(random, [pkce().verifier, 'short', '']));
  if (maybe(random, 0.6)) params.append('redirect_uri', pick(random, URIS));
  if (maybe(random, 0.7)) params.append('refresh_token', pick(random, [...real.refresh, 'forged-refresh', '']));
  if (maybe(random, 0.5)) params.append('resource', pick(random, RESOURCES()));
  if (maybe(random, 0.1)) params.append('resource', pick(random, RESOURCES()));
  if (maybe(random, 0.3)) params.append('scope', pick(random, ['ledger:read', 'orders:read', 'bogus', '']));
  if (maybe(random, 0.1)) params.append('grant_type', 'refresh_token');
  const body = maybe(random, 0.9) ? params.toString() : JSON.stringify(Object.fromEntries(params));
  const type = pick(random, ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', 'application/json', '']);
  const headers: Record<string, string> = type ? { 'content-type': type } : {};
  if (maybe(random, 0.1)) headers.authorization = pick(random, ['Basic Zm9vOmJhcg==', 'Basic ###', 'Bearer x']);
  return new Request(`${base}/oauth/token`, { method: 'POST', headers, body });
}

/** One revocation, of real or forged tokens, by the right or another client. */
function revocation(random: Random): Request {
  const params = new URLSearchParams();
  if (maybe(random, 0.9))
    params.append('token', pick(random, [...real.access, ...real.refresh, 'forged', '', 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z']));
  if (maybe(random, 0.4)) params.append('token_type_hint', pick(random, ['access_token', 'refresh_token', 'bogus']));
  if (maybe(random, 0.9)) params.append('client_id', pick(random, [clientId, 'unknown-client', '']));
  return new Request(`${base}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: params.toString() });
}

/** The RFC error code a refusal names, wherever it puts it; undefined when it names none. */
async function codeOf(response: Response): Promise<string | undefined> {
  const location = response.headers.get('location');
  if (location) return URL.parse(location, base)?.searchParams.get('error') ?? undefined;
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('json')) return (JSON.parse(text) as { error?: string }).error;
  // The error page a person sees names the code: "(invalid_request: ...)" or "(invalid_client)".
  return /\((\w+)(?::|\))/.exec(text)?.[1];
}

describe('the built-in authorization server under a fuzz', () => {
  it(`answers ${CASES} malformed registrations, authorizations, token requests and revocations with no 5xx, no hang, and an RFC error code for every refusal`, async () => {
    const random = seeded(SEED);
    const failures: string[] = [];
    const outcomes = new Map<string, number>();
    for (let i = 0; i < CASES; i++) {
      const build = pick(random, [registration, authorization, authorization, token, token, revocation]);
      const request = build(random);
      const label = `#${i} ${request.method} ${new URL(request.url).pathname}`;
      let timer: NodeJS.Timeout | undefined;
      const response = await Promise.race([
        gateway.fetch(request),
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), HANG_MS))),
      ]).finally(() => clearTimeout(timer));
      if (!response) {
        failures.push(`${label}: no answer in ${HANG_MS} ms`);
        continue;
      }
      if (response.status >= 500) failures.push(`${label}: ${response.status} ${await response.text()}`);
      const refused = response.status >= 400 || new URL(response.headers.get('location') ?? '/', base).searchParams.has('error');
      const code = refused ? await codeOf(response) : (await response.body?.cancel(), undefined);
      if (refused && (!code || !CODES.has(code))) failures.push(`${label}: ${response.status} refused without an RFC error code (${code})`);
      const key = `${new URL(request.url).pathname} ${response.status}${code ? ` ${code}` : ''}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
    expect(failures).toEqual([]);
    // The fuzz reached every endpoint and both sides of each: some accepted, some refused.
    const seen = [...outcomes.keys()].join('\n');
    for (const expected of [
      '/oauth/register 201',
      '/oauth/register 400 invalid_client_metadata',
      '/oauth/register 400 invalid_redirect_uri',
      '/oauth/authorize 303',
      '/oauth/token 400 invalid_grant',
      '/oauth/revoke 200',
    ])
      expect(seen, expected).toContain(expected);
    // 1,200 requests one after another: ~10 s on a quiet machine, 35 s at a load of 25 on 2 cores (a hang is HANG_MS per case).
  }, 300_000);
});
