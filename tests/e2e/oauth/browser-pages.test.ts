/**
 * The sign-in and consent pages as a person meets them, in Debian's headless Chromium: labels, the
 * wrong-credential message, unticking a scope, the redirect back with code, state and iss.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { hasChromium, launchChromium, signInWithBrowser } from '../../helpers/browser.ts';
import { authorizeUrl, pkce, registerClient, REDIRECT_URI, startOAuthHarness, tokenRequest, type OAuthHarness } from '../../helpers/oauth-harness.ts';

describe.skipIf(!hasChromium)('sign-in pages in Chromium', () => {
  let h: OAuthHarness;
  let browser: Browser;
  let clientId: string;
  beforeAll(async () => {
    h = await startOAuthHarness({ oauth: { tokenSecret: 'test-secret-0123456789abcdef-0123456789' } });
    clientId = (await registerClient(h.url, { client_name: 'Desktop Assistant' })).client_id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('signs in, grants fewer scopes than the key holds, and sends the code back with state and iss', async () => {
    const p = pkce();
    const url = authorizeUrl(h.url, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'accounts:read positions:read orders:read market-data:read',
      resource: `${h.url}/mcp`,
      state: 'browser-state',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    });
    const callback = await signInWithBrowser(browser, url, { key: 'cpz_demo_data', secret: 'demo-secret-data', untick: ['orders:read'] });
    expect(callback.searchParams.get('state')).toBe('browser-state');
    expect(callback.searchParams.get('iss')).toBe(h.url);
    const tokens = await tokenRequest(h.url, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: `${h.url}/mcp`,
    });
    expect(tokens.body.scope).toBe('accounts:read positions:read market-data:read');
  });

  it('shows one message for a wrong secret, keeps the fields empty, and stays on the sign-in page', async () => {
    const p = pkce();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(
        authorizeUrl(h.url, {
          client_id: clientId,
          response_type: 'code',
          redirect_uri: REDIRECT_URI,
          scope: 'accounts:read',
          resource: `${h.url}/mcp`,
          state: 's',
          code_challenge: p.challenge,
          code_challenge_method: 'S256',
        }),
      );
      await page.getByLabel('API key').fill('cpz_demo_data');
      await page.getByLabel('API secret').fill('not-the-secret');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('The API key or secret is not valid.');
      expect(await page.getByLabel('API key').inputValue()).toBe('');
      expect(await page.getByLabel('API secret').inputValue()).toBe('');
      expect(page.url()).not.toContain('not-the-secret');
    } finally {
      await context.close();
    }
  });
});
