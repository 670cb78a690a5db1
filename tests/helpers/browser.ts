import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (installed by .ci/run); playwright-core drives it, it downloads no browser of its own. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Skipped only outside CI: under CI=true a missing chromium fails the suite instead of hiding it. */
export const hasChromium = existsSync(CHROMIUM) || process.env.CI === 'true';

/** Headless Chromium; `--no-sandbox` because CI runs as root. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export interface SignInOptions {
  key: string;
  secret: string;
  /** Scopes to untick on the consent page. */
  untick?: readonly string[];
  /** Save the sign-in and consent pages as PNG (docs/). */
  screenshots?: { signIn: string; consent: string };
}

/**
 * Does what a person does on the gateway's pages: opens `authorizationUrl`, types the key and secret,
 * signs in, unticks `untick` on the consent page, and allows. Resolves with the URL the browser was sent
 * back to (the client's redirect URI with `code`, `state`, `iss`), without loading it.
 */
export async function signInWithBrowser(browser: Browser, authorizationUrl: string, options: SignInOptions): Promise<URL> {
  const context = await browser.newContext({ viewport: { width: 720, height: 860 }, deviceScaleFactor: 1 });
  const page: Page = await context.newPage();
  try {
    const redirectUri = new URL(authorizationUrl).searchParams.get('redirect_uri')!;
    let callback: URL | undefined;
    await page.route(`${redirectUri}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!DOCTYPE html><title>Signed in</title><p>You can close this window.</p>' });
    });
    await page.goto(authorizationUrl);
    await page.getByLabel('API key').fill(options.key);
    await page.getByLabel('API secret').fill(options.secret);
    if (options.screenshots) await page.screenshot({ path: options.screenshots.signIn, fullPage: true });
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Allow / }).waitFor();
    for (const scope of options.untick ?? []) await page.locator(`input[type=checkbox][name=scope][value="${scope}"]`).uncheck();
    if (options.screenshots) await page.screenshot({ path: options.screenshots.consent, fullPage: true });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${redirectUri}**`);
    if (!callback) throw new Error('the browser was not sent back to the redirect URI');
    return callback;
  } finally {
    await context.close();
  }
}
