import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  authorizeUrl,
  csrfOf,
  Jar,
  openSignInPage,
  pkce,
  probe,
  registerClient,
  REDIRECT_URI,
  signInFlow,
  startOAuthHarness,
  step,
  tokenRequest,
  type OAuthHarness,
} from '../../helpers/oauth-harness.ts';

const SCOPES = ['profile:read', 'accounts:read', 'positions:read', 'orders:read', 'trade', 'market-data:read'];
let h: OAuthHarness;
let clientId: string;
beforeAll(async () => {
  h = await startOAuthHarness({ oauth: { tokenSecret: 'test-secret-0123456789abcdef-0123456789', scopes: SCOPES } });
  clientId = (await registerClient(h.url)).client_id;
});
afterAll(async () => h?.close());
afterEach(() => vi.useRealTimers());

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  tokenRequest(h.url, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    resource: `${h.url}/mcp`,
    ...extra,
  });
const refresh = (refreshToken: string) =>
  tokenRequest(h.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, resource: `${h.url}/mcp` });

async function tokens() {
  const flow = await signInFlow(h.url, { clientId });
  const answer = await exchange(flow.code, flow.pkce.verifier);
  expect(answer.status).toBe(200);
  return { flow, access: String(answer.body.access_token), refresh: String(answer.body.refresh_token) };
}

/** The authorization endpoint's answer to `params` (a redirect back to the client, or a page). */
async function authorize(params: Record<string, string | undefined>) {
  const response = await step(
    new Jar(),
    authorizeUrl(h.url, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'accounts:read',
      resource: `${h.url}/mcp`,
      state: 's1',
      ...params,
    }),
  );
  const location = response.headers.get('location');
  return { status: response.status, location: location ? new URL(location, h.url) : undefined, text: await response.text() };
}

/** A refusal on the gateway's own page: 400, no redirect, the RFC 6749 code named. */
function refusedHere(answer: { status: number; location?: URL; text: string }, code: string): void {
  expect(answer.status).toBe(400);
  expect(answer.location).toBeUndefined();
  expect(answer.text).toContain(code);
}

// Refused at /oauth/authorize itself, before anyone signed in: the gateway's error page, never a redirect to the
// client (RFC 9700 §4.11.2: registration is open, so the redirect URI may be anyone's; security try-out).
describe('authorization endpoint refusals (RFC 6749 §4.1.2.1, RFC 7636 §4.4.1, OAuth 2.1, RFC 9700 §4.11.2)', () => {
  it('refuses a request without a PKCE challenge: invalid_request, on its own page', async () => {
    refusedHere(await authorize({}), 'invalid_request');
  });

  it('refuses code_challenge_method plain: invalid_request naming code_challenge_method', async () => {
    const p = pkce();
    const answer = await authorize({ code_challenge: p.verifier, code_challenge_method: 'plain' });
    refusedHere(answer, 'invalid_request');
    expect(answer.text).toMatch(/code_challenge_method/);
  });

  it('never sends a request refused before a sign-in to the redirect URI: no response_type, prompt=none, form_post', async () => {
    const p = pkce();
    const challenge = { code_challenge: p.challenge, code_challenge_method: 'S256' };
    refusedHere(await authorize({ ...challenge, response_type: undefined }), 'invalid_request');
    refusedHere(await authorize({ ...challenge, prompt: 'none' }), 'login_required');
    const posted = await authorize({ response_mode: 'form_post' });
    refusedHere(posted, 'invalid_request');
    expect(posted.text).not.toContain(REDIRECT_URI);
  });

  it('refuses a redirect URI that is not registered exactly, without redirecting anywhere', async () => {
    const p = pkce();
    for (const redirect of ['http://127.0.0.1:8976/callback/other', 'http://127.0.0.1:8976/callback?x=1', 'https://attacker.example/callback']) {
      const answer = await authorize({ redirect_uri: redirect, code_challenge: p.challenge, code_challenge_method: 'S256' });
      expect(answer.status).toBe(400);
      expect(answer.location).toBeUndefined();
      expect(answer.text).toContain('invalid_redirect_uri');
    }
  });

  it('takes a loopback redirect URI on another port (RFC 8252 §7.3: a native client listens where it can), nothing else of it changed', async () => {
    // Registered as MCP clients do, without application_type (web): oidc-provider alone allowed other ports to native clients only.
    const web = (await registerClient(h.url, { application_type: undefined })).client_id;
    const p = pkce();
    const answer = await authorize({
      client_id: web,
      redirect_uri: 'http://127.0.0.1:5555/callback',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    });
    expect(answer.text ?? '').not.toContain('invalid_redirect_uri');
    expect(answer.status).toBe(303);
    // localhost too, as MCP clients register it.
    const local = (await registerClient(h.url, { application_type: undefined, redirect_uris: ['http://localhost:8976/callback'] })).client_id;
    const onLocalhost = await authorize({
      client_id: local,
      redirect_uri: 'http://localhost:7777/callback',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    });
    expect(onLocalhost.status).toBe(303);
    // A host spelled otherwise, another path, https, user info: not the registered URI.
    for (const redirect of [
      'http://localhost:8976/callback',
      'http://127.1:5555/callback',
      'http://127.0.0.1:5555/callback/other',
      'http://127.0.0.1:5555/./callback',
      'https://127.0.0.1:8976/callback',
      'http://127.0.0.1:5555@evil.example/callback',
    ]) {
      const refused = await authorize({ client_id: web, redirect_uri: redirect, code_challenge: p.challenge, code_challenge_method: 'S256' });
      expect(refused.status, redirect).toBe(400);
      expect(refused.text).toContain('invalid_redirect_uri');
    }
  });

  it('refuses a resource that is not an MCP endpoint of this gateway: invalid_target', async () => {
    const p = pkce();
    const answer = await authorize({ resource: 'https://elsewhere.example/mcp', code_challenge: p.challenge, code_challenge_method: 'S256' });
    refusedHere(answer, 'invalid_target');
  });
});

describe('token endpoint refusals', () => {
  it('refuses a wrong or missing code_verifier: invalid_grant', async () => {
    const flow = await signInFlow(h.url, { clientId });
    const wrong = await exchange(flow.code, pkce().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    const missing = await tokenRequest(h.url, {
      grant_type: 'authorization_code',
      code: flow.code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: `${h.url}/mcp`,
    });
    expect(missing.body.error).toBe('invalid_grant');
  });

  it('refuses a reused code: invalid_grant, and revokes the tokens issued from it (RFC 6749 §4.1.2)', async () => {
    const flow = await signInFlow(h.url, { clientId });
    const first = await exchange(flow.code, flow.pkce.verifier);
    expect(first.status).toBe(200);
    expect(await probe(h.url, String(first.body.access_token))).toMatchObject({ kind: 'ok' });
    const again = await exchange(flow.code, flow.pkce.verifier);
    expect(again.body.error).toBe('invalid_grant');
    expect(await probe(h.url, String(first.body.access_token))).toEqual({
      kind: 'invalid',
      error: 'invalid_token',
      description: 'The access token was revoked',
    });
    expect((await refresh(String(first.body.refresh_token))).body.error).toBe('invalid_grant');
  });

  it('refuses an expired code: invalid_grant', async () => {
    const flow = await signInFlow(h.url, { clientId });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + (h.config.oauth.authorizationCodeTtlSeconds + 5) * 1000);
    const late = await exchange(flow.code, flow.pkce.verifier);
    expect(late.body.error).toBe('invalid_grant');
  });

  it('rotates refresh tokens; a reused one is invalid_grant and revokes the whole family', async () => {
    const { access, refresh: first } = await tokens();
    const rotated = await refresh(first);
    expect(rotated.status).toBe(200);
    const second = String(rotated.body.refresh_token);
    expect(second).not.toBe(first);
    expect(await probe(h.url, String(rotated.body.access_token))).toMatchObject({ kind: 'ok', scopes: ['accounts:read', 'positions:read', 'orders:read'] });
    const reused = await refresh(first);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await refresh(second)).body.error).toBe('invalid_grant');
    for (const token of [access, String(rotated.body.access_token)])
      expect(await probe(h.url, token)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
  });

  it('refuses a token request for another resource than the one granted: invalid_target', async () => {
    const flow = await signInFlow(h.url, { clientId });
    const answer = await exchange(flow.code, flow.pkce.verifier, { resource: `${h.url}/mcp/compact` });
    expect(answer.body.error).toBe('invalid_target');
  });
});

describe('access tokens at the resource', () => {
  it('refuses a token for another resource (RFC 8707: /mcp token at /mcp/compact, and elsewhere)', async () => {
    const { access } = await tokens();
    expect(await probe(h.url, access, `${h.url}/mcp`)).toMatchObject({ kind: 'ok' });
    expect(await probe(h.url, access, `${h.url}/mcp/compact`)).toEqual({
      kind: 'invalid',
      error: 'invalid_token',
      description: 'The access token was issued for another resource',
    });
    expect(await probe(h.url, access, 'https://other.example/mcp')).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
  });

  it('refuses an expired token', async () => {
    const { access } = await tokens();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + (h.config.oauth.accessTokenTtlSeconds + 10) * 1000);
    expect(await probe(h.url, access)).toEqual({ kind: 'invalid', error: 'invalid_token', description: 'The access token expired' });
  });

  it('refuses a tampered token and a token sealed by another secret', async () => {
    const { access } = await tokens();
    const parts = access.split('.');
    parts[3] = (parts[3]![0] === 'A' ? 'B' : 'A') + parts[3]!.slice(1);
    expect(await probe(h.url, parts.join('.'))).toEqual({ kind: 'invalid', error: 'invalid_token', description: 'The access token is not valid here' });
    expect(await probe(h.url, 'not-a-token')).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
    const other = await startOAuthHarness({ oauth: { tokenSecret: 'another-secret-0123456789abcdef-012345', scopes: SCOPES } }, h.platform);
    try {
      expect(await other.oauth.resolveBearer(access, `${h.url}/mcp`)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
    } finally {
      await other.close();
    }
  });

  it('is refused by another instance sharing GATEWAY_TOKEN_SECRET but not its store: that one cannot tell whether it was revoked', async () => {
    const { access } = await tokens();
    expect(await probe(h.url, access)).toMatchObject({ kind: 'ok' });
    const replica = await startOAuthHarness({ oauth: { tokenSecret: 'test-secret-0123456789abcdef-0123456789', scopes: SCOPES, issuer: h.url } }, h.platform);
    try {
      expect(await replica.oauth.resolveBearer(access, `${h.url}/mcp`)).toEqual({
        kind: 'invalid',
        error: 'invalid_token',
        description: 'The access token is no longer valid: its sign-in ended; sign in again',
      });
    } finally {
      await replica.close();
    }
  });

  it('RFC 7009: a revoked access token and a revoked refresh token stop working', async () => {
    const one = await tokens();
    const revoke = (token: string) =>
      fetch(`${h.url}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: clientId }),
      });
    expect((await revoke(one.access)).status).toBe(200);
    expect(await probe(h.url, one.access)).toEqual({ kind: 'invalid', error: 'invalid_token', description: 'The access token was revoked' });
    expect((await refresh(one.refresh)).status).toBe(200);
    const two = await tokens();
    expect((await revoke(two.refresh)).status).toBe(200);
    expect((await refresh(two.refresh)).body.error).toBe('invalid_grant');
    expect(await probe(h.url, two.access)).toMatchObject({ kind: 'invalid', description: 'The access token was revoked' });
  });
});

describe('sign-in page', () => {
  const openSignIn = (jar = new Jar()) => openSignInPage(h.url, { clientId, scope: 'accounts:read', state: 's', jar });

  it('is plain HTML that cannot be framed, with labelled fields and nothing pre-filled', async () => {
    const { page, html } = await openSignIn();
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('<label for="key">API key</label>');
    expect(html).toContain('<label for="secret">API secret</label>');
    expect(html).toContain('type="password"');
    expect(html).not.toContain('<script');
  });

  it('refuses a wrong key and a wrong secret with the same words, issues nothing, and keeps asking', async () => {
    const answers: string[] = [];
    for (const [key, secret] of [
      ['cpz_demo_data', 'wrong-secret'],
      ['cpz_unknown', 'demo-secret-data'],
    ] as const) {
      const { jar, interaction, html } = await openSignIn();
      const response = await step(jar, `${interaction}/login`, { csrf: csrfOf(html), key, secret });
      expect(response.status).toBe(401);
      expect(response.headers.get('location')).toBeNull();
      const text = await response.text();
      expect(text).not.toContain(secret);
      expect(text).not.toContain(key);
      answers.push(/role="alert"[^>]*>([^<]+)</.exec(text)![1]!);
      // Still the sign-in page: no consent, no code.
      expect(await (await step(jar, interaction)).text()).toContain('<label for="secret">');
    }
    expect(answers[0]).toBe('The API key or secret is not valid.');
    expect(answers[1]).toBe(answers[0]);
  });

  it('ends the authorization with access_denied after five wrong attempts on one sign-in page', async () => {
    const { jar, interaction, html } = await openSignIn();
    for (let i = 1; i < 5; i++)
      expect((await step(jar, `${interaction}/login`, { csrf: csrfOf(html), key: 'cpz_demo_data', secret: `wrong-${i}` })).status).toBe(401);
    let response = await step(jar, `${interaction}/login`, { csrf: csrfOf(html), key: 'cpz_demo_data', secret: 'wrong-5' });
    while (response.headers.get('location')?.startsWith('/') || response.headers.get('location')?.startsWith(h.url))
      response = await step(jar, new URL(response.headers.get('location')!, h.url).href);
    const callback = new URL(response.headers.get('location')!);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
    // The right secret no longer helps on that page.
    expect((await step(jar, `${interaction}/login`, { csrf: csrfOf(html), key: 'cpz_demo_data', secret: 'demo-secret-data' })).status).toBe(400);
  });

  it('refuses a form without the CSRF token, or posted from another origin', async () => {
    const { jar, interaction, html } = await openSignIn();
    expect((await step(jar, `${interaction}/login`, { key: 'cpz_demo_data', secret: 'demo-secret-data' })).status).toBe(403);
    expect(
      (
        await step(
          jar,
          `${interaction}/login`,
          { csrf: csrfOf(html), key: 'cpz_demo_data', secret: 'demo-secret-data' },
          { origin: 'https://attacker.example' },
        )
      ).status,
    ).toBe(403);
    // Without the interaction cookie (another browser): the page is not found for it.
    expect((await step(new Jar(), `${interaction}/login`, { csrf: csrfOf(html), key: 'cpz_demo_data', secret: 'demo-secret-data' })).status).toBe(400);
  });

  it('offers only the scopes the key holds and grants only those ticked', async () => {
    const { jar, interaction, html } = await openSignIn();
    await step(jar, `${interaction}/login`, { csrf: csrfOf(html), key: 'cpz_demo_identity', secret: 'demo-secret-identity' });
    const consent = await (await step(jar, interaction)).text();
    expect(consent).toContain('Test client');
    expect(consent).toContain('127.0.0.1:8976');
    expect([...consent.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1])).toEqual([]);
    // Nothing held: the page says so and lists what was asked, with no Allow to press (sign-in try-out).
    expect(consent).toMatch(/holds none of the permissions[^]*accounts:read/);
    expect(consent).not.toContain('value="allow"');
    const flow = await signInFlow(h.url, { clientId, scope: 'accounts:read positions:read trade', grant: ['positions:read'] });
    const answer = await exchange(flow.code, flow.pkce.verifier);
    expect(answer.body.scope).toBe('positions:read');
    expect(await probe(h.url, String(answer.body.access_token))).toMatchObject({ kind: 'ok', scopes: ['positions:read'] });
  });

  it('denying access sends access_denied back to the client', async () => {
    const { jar, interaction, html } = await openSignIn();
    await step(jar, `${interaction}/login`, { csrf: csrfOf(html), key: 'cpz_demo_data', secret: 'demo-secret-data' });
    const consent = await (await step(jar, interaction)).text();
    let response = await step(jar, `${interaction}/consent`, { csrf: csrfOf(consent), decision: 'deny' });
    while (response.headers.get('location')?.startsWith(h.url) || response.headers.get('location')?.startsWith('/'))
      response = await step(jar, new URL(response.headers.get('location')!, h.url).href);
    const callback = new URL(response.headers.get('location')!);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
  });

  it('logs no key, secret, code or token', async () => {
    const flow = await signInFlow(h.url, { clientId });
    const answer = await exchange(flow.code, flow.pkce.verifier);
    const text = h.logs.text;
    expect(h.logs.lines.length).toBeGreaterThan(0);
    for (const secret of [
      'demo-secret-data',
      'demo-secret-identity',
      'cpz_demo_data',
      flow.code,
      String(answer.body.access_token),
      String(answer.body.refresh_token),
    ])
      expect(text).not.toContain(secret);
  });
});
