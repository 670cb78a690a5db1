/**
 * One audit line per decision of the built-in authorization server (issue 28), against the reference
 * stack over HTTP: each kind of refusal (a registration refused for its document, its redirect URI or the
 * registration budget; an authorization request refused; a wrong key or secret; a page's guessing limit;
 * consent denied; refresh token reuse; invalid_target) and a revocation leaves exactly one `auth_decision`
 * line, found by the X-Request-Id the test sent, with its reason, and nothing secret in it. The file
 * lives in .tmp/audit/, which .ci/run's secret grep covers.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeUrl, csrfOf, Jar, pkce, REDIRECT_URI, registerClient, redeemCode, signInFlow, step } from '../../helpers/oauth-harness.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { waitFor } from '../../helpers/wait.ts';

const AUDIT_FILE = `.tmp/audit/oauth-${process.pid}.log`;
const REGISTRATIONS = 6;

let stack: Stack;
let base: string;
let clientId: string;

beforeAll(async () => {
  mkdirSync('.tmp/audit', { recursive: true });
  rmSync(AUDIT_FILE, { force: true });
  stack = await startStack({
    gateway: {
      audit: { destination: AUDIT_FILE, digestKey: 'oauth-audit-digest-key-0123456789' },
      rateLimits: { registrations: { perAddress: { points: REGISTRATIONS, durationMs: 3_600_000 } } },
    },
  });
  base = stack.gatewayUrl;
  clientId = (await registerClient(base)).client_id;
});
afterAll(async () => {
  await stack?.close();
});

const readLines = (file = AUDIT_FILE): Record<string, unknown>[] => {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
};

/** The auth_decision lines of one request id: waits for the first, then 100 ms for a second that would be a defect. */
async function decisionsOf(requestId: string, file = AUDIT_FILE): Promise<Record<string, unknown>[]> {
  const of = () => readLines(file).filter((e) => e.event === 'auth_decision' && e.requestId === requestId);
  await waitFor(`an auth_decision of ${requestId}`, () => of().length > 0, { timeoutMs: 3000 }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 100));
  return of();
}

const id = () => `oauth-audit-${randomUUID()}`;
const json = (requestId: string) => ({ 'content-type': 'application/json', 'x-request-id': requestId });
const form = (requestId: string) => ({ 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': requestId });

/** Opens a sign-in page: its jar, interaction URL and CSRF token. */
async function openSignIn() {
  const jar = new Jar();
  const p = pkce();
  const authorize = await step(
    jar,
    authorizeUrl(base, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'accounts:read',
      resource: `${base}/mcp`,
      state: 's',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    }),
  );
  const interaction = new URL(authorize.headers.get('location')!, base).href;
  return { jar, interaction, csrf: csrfOf(await (await step(jar, interaction)).text()) };
}

async function tokens() {
  return (await redeemCode(base, await signInFlow(base, { clientId }), clientId)).body;
}

describe('auth_decision audit lines', () => {
  it('a registration refused for its document or its redirect URI: one line each, with the RFC 7591 code', async () => {
    for (const [document, reason] of [
      [{ client_name: 'x'.repeat(6000), redirect_uris: [REDIRECT_URI] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://attacker.example/cb'], application_type: 'web' }, 'invalid_redirect_uri'],
    ] as const) {
      const requestId = id();
      const response = await fetch(`${base}/oauth/register`, { method: 'POST', headers: json(requestId), body: JSON.stringify(document) });
      expect(response.status).toBe(400);
      expect(await decisionsOf(requestId)).toEqual([expect.objectContaining({ endpoint: 'register', outcome: 'refused', reason })]);
    }
  });

  it('an authorization request refused (no PKCE challenge): one line', async () => {
    const requestId = id();
    const url = authorizeUrl(base, { client_id: clientId, response_type: 'code', redirect_uri: REDIRECT_URI, state: 's' });
    await fetch(url, { redirect: 'manual', headers: { 'x-request-id': requestId } });
    expect(await decisionsOf(requestId)).toEqual([
      expect.objectContaining({ endpoint: 'authorize', outcome: 'refused', reason: 'invalid_request', client: clientId }),
    ]);
  });

  it('a wrong key or secret, then the page guessing limit: one line each, and the key never in it', async () => {
    const page = await openSignIn();
    for (let i = 0; i < 5; i++) {
      const requestId = id();
      expect(
        (await step(page.jar, `${page.interaction}/login`, { csrf: page.csrf, key: 'cpz_demo_data', secret: `wrong-${i}` }, { 'x-request-id': requestId }))
          .status,
      ).toBeGreaterThanOrEqual(300);
      expect(await decisionsOf(requestId)).toEqual([expect.objectContaining({ endpoint: 'sign_in', outcome: 'refused', reason: 'invalid_credentials' })]);
    }
    const limited = id();
    await step(page.jar, `${page.interaction}/login`, { csrf: page.csrf, key: 'cpz_demo_data', secret: 'wrong-6' }, { 'x-request-id': limited });
    expect(await decisionsOf(limited)).toEqual([
      expect.objectContaining({ endpoint: 'sign_in', outcome: 'refused', reason: 'rate_limited', budget: 'sign_ins_per_page' }),
    ]);
    expect(readFileSync(AUDIT_FILE, 'utf8')).not.toContain('cpz_demo_data');
  });

  it('consent denied: one line, and none when the authorization then goes back to the client', async () => {
    const page = await openSignIn();
    await step(page.jar, `${page.interaction}/login`, { csrf: page.csrf, key: 'cpz_demo_data', secret: 'demo-secret-data' });
    const consent = await (await step(page.jar, page.interaction)).text();
    const requestId = id();
    const denied = await step(page.jar, `${page.interaction}/consent`, { csrf: csrfOf(consent), decision: 'deny' }, { 'x-request-id': requestId });
    expect(await decisionsOf(requestId)).toEqual([expect.objectContaining({ endpoint: 'consent', outcome: 'refused', reason: 'access_denied' })]);
    const resumed = id();
    const back = await step(page.jar, new URL(denied.headers.get('location')!, base).href, undefined, { 'x-request-id': resumed });
    expect(new URL(back.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(readLines().filter((e) => e.requestId === resumed)).toEqual([]);
  });

  it('refresh token reuse, invalid_target and a revocation: one line each', async () => {
    const issued = await tokens();
    const refresh = (requestId: string, extra: Record<string, string> = {}) =>
      fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: form(requestId),
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(issued.refresh_token), client_id: clientId, ...extra }),
      });
    const target = id();
    expect(((await (await refresh(target, { resource: 'https://elsewhere.example/mcp' })).json()) as { error: string }).error).toBe('invalid_target');
    expect(await decisionsOf(target)).toEqual([expect.objectContaining({ endpoint: 'token', reason: 'invalid_target', grantType: 'refresh_token' })]);
    expect((await refresh(id())).status).toBe(200);
    const reuse = id();
    expect((await refresh(reuse)).status).toBe(400);
    expect(await decisionsOf(reuse)).toEqual([expect.objectContaining({ endpoint: 'token', outcome: 'refused', reason: 'refresh_token_reuse' })]);
    const other = await tokens();
    const revoked = id();
    const revocation = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: form(revoked),
      body: new URLSearchParams({ token: String(other.access_token), client_id: clientId }),
    });
    expect(revocation.status).toBe(200);
    expect(await decisionsOf(revoked)).toEqual([expect.objectContaining({ endpoint: 'revoke', outcome: 'ok', client: clientId })]);
  });

  it('registrations past the budget: one rate_limited line each', async () => {
    // A gateway of its own: spending the budget here must not refuse the other tests' registrations.
    const file = `.tmp/audit/oauth-budget-${process.pid}.log`;
    rmSync(file, { force: true });
    const own = await startStack({
      gateway: {
        audit: { destination: file, digestKey: 'oauth-audit-digest-key-0123456789' },
        rateLimits: { registrations: { perAddress: { points: REGISTRATIONS, durationMs: 3_600_000 } } },
      },
    });
    const answers: { status: number; requestId: string }[] = [];
    for (let i = 0; i < REGISTRATIONS + 1; i++) {
      const requestId = id();
      const response = await fetch(`${own.gatewayUrl}/oauth/register`, {
        method: 'POST',
        headers: json(requestId),
        body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
      });
      answers.push({ status: response.status, requestId });
    }
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    try {
      for (const { requestId } of refused)
        expect(await decisionsOf(requestId, file)).toEqual([
          expect.objectContaining({ endpoint: 'register', reason: 'rate_limited', budget: 'registrations_per_address' }),
        ]);
    } finally {
      await own.close();
    }
  });

  it('writes no key, secret or token', async () => {
    const text = readFileSync(AUDIT_FILE, 'utf8');
    for (const secret of ['demo-secret-data', 'cpz_demo_data', 'eyJ']) expect(text).not.toContain(secret);
  });
});
