/**
 * Guessing limits (issue 28), through the real handler in process: every attempt on the OAuth sign-in
 * page spends a point of the key's, the client's and the address's budgets before the key is checked
 * (atomically), so 40 concurrent wrong secrets check no more than the budget and the rest get a 429
 * page saying when to try again; a right key gives its points back; wrong console admin tokens have a
 * per-address budget that never locks out the right token. Each decision is one audit line; the consent page shows the configured
 * scope descriptions and folds the scopes the key does not hold.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, csrfOf, oauthClient, openSignInPage, step, type OAuthClient } from '../helpers/oauth-harness.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const PER_KEY = 6;
const PER_CLIENT = 12;
const CONSOLE_TOKEN = 'console-admin-token-sign-in-limits';
const CONSOLE_BUDGET = 3;

let audit: LogCapture;
let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let oauth: OAuthClient;
let clientId: string;

beforeAll(async () => {
  endpoint = await startScopeEndpoint(
    { alice: ['ledger:read'], bob: ['ledger:read'], carol: ['ledger:read'] },
    { secrets: { alice: 'alice-secret', bob: 'bob-secret', carol: 'carol-secret' } },
  );
});
// A gateway (its budgets) and an audit trail of each test's own: each test spends budgets and counts audit lines.
beforeEach(async () => {
  audit = new LogCapture();
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url, unauthorizedTtlMs: 0 },
      oauth: {
        mode: 'builtin',
        tokenSecret: 'test-secret-0123456789abcdef-sign-in-limits',
        scopes: ['ledger:read', 'orders:read', 'trade'],
        scopeDescriptions: { 'ledger:read': 'Read your ledger', trade: 'Place and cancel orders' },
      },
      rateLimits: {
        signIns: {
          perKey: { points: PER_KEY, durationMs: 900_000 },
          perClient: { points: PER_CLIENT, durationMs: 900_000 },
          perAddress: { points: 1000, durationMs: 900_000 },
        },
        consoleSignIns: { perAddress: { points: CONSOLE_BUDGET, durationMs: 900_000, blockMs: 1_800_000 } },
      },
      console: { adminToken: CONSOLE_TOKEN },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'read_ledger', inputSchema: { type: 'object' } } as Tool }] }, audit },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
  clientId = (await oauth.register()).client_id;
});
afterEach(async () => {
  await gateway?.close();
});
afterAll(async () => {
  await endpoint?.close();
});

/** Opens a sign-in page of `client`: its jar, interaction URL and CSRF token. */
async function openSignIn(client = clientId, scope = 'ledger:read') {
  return openSignInPage(gateway.gatewayUrl, { clientId: client, scope, state: 's', fetch: oauth.send });
}

const signIn = async (key: string, secret: string, client = clientId, headers: Record<string, string> = {}) => {
  const page = await openSignIn(client);
  return step(page.jar, `${page.interaction}/login`, { csrf: page.csrf, key, secret }, headers, oauth.send);
};

/** Replaces this test's gateway with one whose sign-in address budget is 3 (and `security`), and registers a client. */
async function restartWithAddressBudget(security: DeepPartial<GatewayConfig['security']> = {}): Promise<void> {
  await restartWith({ perAddress: { points: 3, durationMs: 900_000, blockMs: 1_800_000 } }, security);
}

/** Replaces this test's gateway with one of these sign-in budgets (and `security`), and registers a client. */
async function restartWith(signIns: DeepPartial<GatewayConfig['rateLimits']['signIns']>, security: DeepPartial<GatewayConfig['security']> = {}): Promise<void> {
  await gateway.close();
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url, unauthorizedTtlMs: 0 },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-sign-in-limits', scopes: ['ledger:read'] },
      rateLimits: { signIns },
      security,
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'read_ledger', inputSchema: { type: 'object' } } as Tool }] }, audit },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
  clientId = (await oauth.register()).client_id;
}

describe('the sign-in page under guessing', () => {
  it(`checks no more than ${PER_KEY} of 40 concurrent wrong secrets for one key, and answers the rest 429 with when to try again`, async () => {
    const before = endpoint.hits;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn('alice', `wrong-${i}`)));
    const checked = endpoint.hits - before;
    expect(checked).toBeLessThanOrEqual(PER_KEY);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(checked);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited).toHaveLength(40 - checked);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(await limited[0]!.text()).toMatch(/Too many sign-in attempts[\s\S]*Nothing was checked\. Try again in \d+ minutes\./);
    // The right secret is not checked either until the key's window ends: guessing cannot be resumed by a lucky try.
    expect((await signIn('alice', 'alice-secret')).status).toBe(429);
    const decisions = authDecisionsOf(audit).filter((r) => r.endpoint === 'sign_in');
    expect(decisions.filter((r) => r.reason === 'invalid_credentials')).toHaveLength(checked);
    expect(decisions.filter((r) => r.reason === 'rate_limited' && r.budget === 'sign_ins_per_key')).toHaveLength(41 - checked);
    // The key is named by a keyed digest, never itself.
    expect(audit.text).not.toContain('alice');
  });

  it('answers a key or secret no header can carry "not valid" (401), not "could not be checked, try again" (503)', async () => {
    for (const [key, secret] of [
      ['alice', 'wrong\u200b'],
      ['alice\u200b', 'alice-secret'],
      ['\u{1f600}', 'x'],
    ]) {
      expect((await signIn(key!, secret!)).status, JSON.stringify([key, secret])).toBe(401);
      expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'sign_in', reason: 'invalid_credentials' });
    }
  });

  it('gives back the points of a right key and secret: a key that signs in often is never limited by it', async () => {
    for (let i = 0; i < PER_KEY + 2; i++) expect((await signIn('bob', 'bob-secret')).status, `sign-in ${i}`).toBe(303);
  });

  it('refuses even a right key from an address past its budget: that budget is the only bound on guessing many keys', async () => {
    await restartWithAddressBudget();
    const statuses = [];
    for (const key of ['guess-1', 'guess-2', 'guess-3']) statuses.push((await signIn(key, 'x')).status);
    expect(statuses).toEqual([401, 401, 401]);
    expect((await signIn('carol', 'carol-secret')).status).toBe(429);
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'sign_in', reason: 'rate_limited', budget: 'sign_ins_per_address' });
  });

  it('counts each client behind a trusted proxy in its own address budget (security.trustedProxies)', async () => {
    // In process every request comes from 127.0.0.1: the proxy here.
    await restartWithAddressBudget({ trustedProxies: ['127.0.0.1'] });
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const statuses = [];
    for (const key of ['guess-1', 'guess-2', 'guess-3', 'guess-4']) statuses.push((await signIn(key, 'x', clientId, from('198.51.100.1'))).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await signIn('carol', 'carol-secret', clientId, from('198.51.100.2'))).status).toBe(303);
    // A caller's own entry left of the one the proxy appended changes nothing.
    expect((await signIn('carol', 'carol-secret', clientId, from('198.51.100.2, 198.51.100.1'))).status).toBe(429);
  });

  it("does not lock a key's owner out where they signed in before; guesses elsewhere stay bounded by the key's budget", async () => {
    await restartWith({ perKey: { points: 3, durationMs: 900_000, blockMs: 1_800_000 } }, { trustedProxies: ['127.0.0.1'] });
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const owner = (address: string) => signIn('alice', 'alice-secret', clientId, from(address));
    expect((await owner('203.0.113.7')).status).toBe(303);
    const guesses = [];
    for (let i = 0; i < 4; i++) guesses.push((await signIn('alice', `wrong-${i}`, clientId, from('198.51.100.1'))).status);
    expect(guesses).toEqual([401, 401, 401, 429]);
    // The key's budget is spent for every address it has not signed in from: guessing from a fresh one waits too.
    expect((await signIn('alice', 'wrong-4', clientId, from('198.51.100.2'))).status).toBe(429);
    expect((await owner('203.0.113.9')).status).toBe(429);
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ reason: 'rate_limited', budget: 'sign_ins_per_key' });
    // Where the owner signed in before (an IPv6 /64 alike), the guesses elsewhere lock nothing.
    expect((await owner('203.0.113.7')).status).toBe(303);
  });

  it("counts every key's attempts through one client in that client's budget, but not an owner's where they signed in before", async () => {
    const other = (await oauth.register()).client_id;
    const owner = () => signIn('alice', 'alice-secret', other, { 'x-forwarded-for': '203.0.113.50' });
    expect((await owner()).status).toBe(303);
    const statuses = [];
    for (let i = 0; i < PER_CLIENT + 1; i++) statuses.push((await signIn(`guess-${i}`, 'x', other)).status);
    expect(statuses.slice(0, PER_CLIENT)).toEqual(Array(PER_CLIENT).fill(401));
    expect(statuses.at(-1)).toBe(429);
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'sign_in', reason: 'rate_limited', budget: 'sign_ins_per_client', client: other });
    // A client id is public: guesses through it did not lock out its users where they signed in before (try-out).
    expect((await owner()).status).toBe(303);
  });
});

describe('the consent page', () => {
  it('names each scope by its configured description, folds the scopes the key does not hold, and a denial is one audit line', async () => {
    const page = await openSignIn(clientId, 'ledger:read orders:read trade');
    expect((await step(page.jar, `${page.interaction}/login`, { csrf: page.csrf, key: 'carol', secret: 'carol-secret' }, {}, oauth.send)).status).toBe(303);
    const consent = await (await step(page.jar, page.interaction, undefined, {}, oauth.send)).text();
    expect(consent).toContain('Read your ledger <code class="muted">ledger:read</code>');
    expect(consent).toMatch(
      /<details class="muted"><summary>2 more permissions asked for but not held by your key \(not granted\)<\/summary><ul><li>See your orders <code class="muted">orders:read<\/code><\/li><li>Place and cancel orders <code class="muted">trade<\/code><\/li><\/ul><\/details>/,
    );
    const denied = await step(page.jar, `${page.interaction}/consent`, { csrf: csrfOf(consent), decision: 'deny' }, {}, oauth.send);
    expect(denied.status).toBe(303);
    const consentLines = authDecisionsOf(audit).filter((r) => r.endpoint === 'consent' || r.endpoint === 'authorize');
    expect(consentLines).toEqual([expect.objectContaining({ endpoint: 'consent', outcome: 'refused', reason: 'access_denied' })]);
  });
});

describe("a client's self-declared name", () => {
  it('is shown on the sign-in and consent pages and the console without invisible characters (a U+202E override, zero-width ones)', async () => {
    const spoof = (await oauth.register({ client_name: 'Trusted App \u202eelgooG\u202c \u200bCl\u200bau\u200dde' })).client_id;
    const page = await openSignIn(spoof);
    const signInHtml = await (await step(page.jar, page.interaction, undefined, {}, oauth.send)).text();
    expect((await step(page.jar, `${page.interaction}/login`, { csrf: page.csrf, key: 'carol', secret: 'carol-secret' }, {}, oauth.send)).status).toBe(303);
    const consent = await (await step(page.jar, page.interaction, undefined, {}, oauth.send)).text();
    const clients = await (
      await gateway.fetch(new Request(`${gateway.gatewayUrl}/console/oauth`, { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } }))
    ).text();
    for (const html of [signInHtml, consent, clients]) {
      expect(html).toContain('Trusted App elgooG Claude');
      expect(html).not.toMatch(/[\u200b-\u200f\u202a-\u202e]/);
    }
  });
});

describe('the console admin token', () => {
  const console = (authorization: string) => gateway.fetch(new Request(`${gateway.gatewayUrl}/console`, { headers: { authorization } }));

  it(`allows ${CONSOLE_BUDGET} wrong tokens per address, then answers wrong ones 429 with Retry-After, and still lets the right one in`, async () => {
    expect((await console(`Bearer ${CONSOLE_TOKEN}`)).status).toBe(200);
    for (let i = 0; i < CONSOLE_BUDGET; i++) expect((await console(`Bearer wrong-token-${i}`)).status).toBe(401);
    const limited = await console('Bearer wrong-token-x');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(1000);
    expect(await limited.text()).toMatch(/<p>Too many wrong admin tokens from this address\. Try again in \d+ s\.<\/p>/);
    expect(limited.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(limited.headers.get('x-frame-options')).toBe('DENY');
    expect(limited.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // Wrong tokens of someone else at the address (everyone, behind a proxy not in security.trustedProxies)
    // do not lock out the token's holder: the token's length is what stops guessing, not the budget.
    expect((await console(`Bearer ${CONSOLE_TOKEN}`)).status).toBe(200);
    expect((await console(`Basic ${Buffer.from(`admin:${CONSOLE_TOKEN}`).toString('base64')}`)).status).toBe(200);
    expect((await console('Bearer wrong-token-y')).status).toBe(429);
    const lines = authDecisionsOf(audit).filter((r) => r.endpoint === 'console');
    expect(lines.map((r) => r.reason)).toEqual([...Array(CONSOLE_BUDGET).fill('invalid_token'), 'rate_limited', 'rate_limited']);
    // Who guessed, without a join on requestId with the access log (operator try-out): the address the budget counts.
    expect(new Set(lines.map((r) => r.address))).toEqual(new Set(['127.0.0.1']));
    const metrics = await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text();
    expect(metrics).toMatch(/^mcp_rate_limited_total\{budget="console_sign_ins_per_address"\} 2$/m);
  });
});
