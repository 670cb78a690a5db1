/**
 * The console in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) against
 * the reference stack (config/cpzai.yaml, whose demo admin token enables /console): the pages load,
 * "what does this credential see" shows the data key 10 tools on /mcp and 6 on /mcp/compact, the
 * playground ranks list_cash_flows first for "unsettled", and without the admin token every console
 * route is 401. CONSOLE_SCREENSHOTS=1 writes the screenshots to docs/console-*.png (else a temp dir).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway } from '../../../gateway/gateway.ts';
import { TOOL_LIST, TOOL_META_KEY } from '../../../upstream/server/tools/index.ts';
import { DEMO_KEYS, DEMO_SECRETS } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const DEFAULTS = loadConfig({ env: {} });
const TOKEN = DEFAULTS.console.adminToken!;
const ANCHORS = DEFAULTS.upstreams[0]!.anchors;
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? new URL('../../../docs/', import.meta.url).pathname : mkdtempSync(join(tmpdir(), 'console-'));
const ROUTES: [method: string, path: string][] = [
  ['GET', '/console'],
  ['GET', '/console/catalog'],
  ['GET', '/console/credential'],
  ['POST', '/console/credential'],
  ['GET', '/console/search?q=unsettled'],
  ['GET', '/console/counters'],
  ['GET', '/console/scopes'],
  ['GET', '/console/oauth'],
  ['POST', '/console/oauth/revoke'],
  ['GET', '/console/config'],
  ['GET', '/console/console.css'],
  ['GET', '/console/console.js'],
  ['GET', '/console/no-such-page'],
];

let stack: Stack;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  // The 401 checks below send 20 wrong admin tokens from one address: more than the default budget
  // (rateLimits.consoleSignIns, tests/in-process/oauth-sign-in-limits.test.ts) would let through.
  stack = await startStack({ gateway: { rateLimits: { consoleSignIns: { perAddress: { points: 1000, durationMs: 900_000 } } } } });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, httpCredentials: { username: 'admin', password: TOKEN } });
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const url = (path: string) => `${stack.gatewayUrl}${path}`;

describe('the console without the admin token', () => {
  it.each(ROUTES)('%s %s is 401 with a Basic challenge, and with a wrong token too', async (method, path) => {
    const body = method === 'POST' ? new URLSearchParams({ key: 'cpz_demo_data', secret: 'x' }) : undefined;
    const none = await fetch(url(path), { method, body });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="MCP gateway console"/);
    const wrong = await fetch(url(path), { method, body, headers: { authorization: `Basic ${Buffer.from(`admin:${TOKEN}x`).toString('base64')}` } });
    expect(wrong.status).toBe(401);
    const bearer = await fetch(url(path), { method, body, headers: { authorization: 'Bearer not-the-token' } });
    expect(bearer.status).toBe(401);
  });

  it('is not mounted at all without console.adminToken', async () => {
    const config = loadConfig({
      env: {},
      overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams: [{ url: stack.upstreamUrl }], log: { level: 'silent' } },
    });
    delete config.console.adminToken;
    const plain = await startGateway(config);
    try {
      expect((await fetch(`${plain.url}/console`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('the console in Chromium', () => {
  it('overview: the upstream is up with its catalogue, and the live counters refresh', async () => {
    const response = await page.goto(url('/console'), { waitUntil: 'networkidle' });
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await page.title()).toBe('Overview · MCP gateway console');
    const row = await page.$eval('tbody tr', (tr) => tr.textContent ?? '');
    expect(row).toContain('cpzai');
    expect(row).toContain('up');
    expect(row).toContain('34');
    // A tool call elsewhere shows up in the counters without a reload (console.js polls every 2 s).
    const before = Number((await page.$eval('#counter-tool_calls', (el) => el.textContent ?? '')).replace(/,/g, ''));
    for (const name of ['list_accounts', 'list_positions', 'list_orders', 'get_market_data', 'place_order']) await callTool(name);
    await page.waitForFunction((n) => Number(document.getElementById('counter-tool_calls')!.textContent!.replace(/,/g, '')) > n, before, { timeout: 6000 });
    await page.screenshot({ path: join(SHOTS, 'console-overview.png') });
  });

  it('catalogue: every tool with category, required scopes, read/write and output schema', async () => {
    await page.goto(url('/console/catalog'), { waitUntil: 'networkidle' });
    const rows = await page.$$eval('table.catalog tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td, i) => (i === 0 ? td.querySelector('code')! : td).textContent!.trim())),
    );
    expect(rows).toHaveLength(34);
    // Expected from the upstream's own definitions, not from the gateway.
    const expected = TOOL_LIST.map((tool) => {
      const meta = (tool._meta as Record<string, { category: string; requiredScopes: string[] }>)[TOOL_META_KEY]!;
      const readOnly = (tool.annotations as { readOnlyHint?: boolean } | undefined)?.readOnlyHint === true;
      return [
        tool.name,
        meta.category,
        [...meta.requiredScopes].sort().join(' ') || 'public',
        readOnly ? 'read' : 'write',
        tool.outputSchema ? 'yes' : 'no',
        !readOnly || ANCHORS.includes(tool.name) ? 'listed' : 'via search',
      ];
    });
    const shown = rows.map((cells) => cells.map((cell, i) => (i === 2 ? cell.split(/\s+/).sort().join(' ') : cell)));
    expect(shown.sort()).toEqual(expected.sort());
    expect(shown.find((r) => r[0] === 'place_order')).toEqual(['place_order', 'orders', 'trade', 'write', 'no', 'listed']);
    await page.screenshot({ path: join(SHOTS, 'console-catalog.png'), fullPage: false });
  });

  it('what does this credential see: the data key gets 10 tools on /mcp and 6 on /mcp/compact; the secret is not echoed or logged', async () => {
    await page.goto(url('/console/credential'), { waitUntil: 'networkidle' });
    await page.fill('input[name=key]', DEMO_KEYS.data['x-cpz-key']);
    await page.fill('input[name=secret]', DEMO_KEYS.data['x-cpz-secret']);
    await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle' }), page.click('button[type=submit]')]);
    expect(page.url()).toBe(url('/console/credential'));
    const counts = await page.$$eval('.view', (views) =>
      views.map((v) => [v.getAttribute('data-path'), v.querySelector('.count')?.getAttribute('data-count')]),
    );
    expect(counts).toEqual([
      ['/mcp', '10'],
      ['/mcp/compact', '6'],
    ]);
    const html = await page.content();
    for (const secret of DEMO_SECRETS) expect(html).not.toContain(secret);
    expect(html).not.toContain(DEMO_KEYS.data['x-cpz-key']);
    expect(await page.$eval('input[name=secret]', (el) => (el as HTMLInputElement).value)).toBe('');
    for (const secret of DEMO_SECRETS) expect(stack.logs.text).not.toContain(secret);
    await page.screenshot({ path: join(SHOTS, 'console-credential.png'), fullPage: true });
  });

  it('a refused credential shows the status on each surface', async () => {
    await page.goto(url('/console/credential'), { waitUntil: 'networkidle' });
    await page.fill('input[name=key]', 'cpz_demo_data');
    await page.fill('input[name=secret]', 'wrong-secret-value');
    await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle' }), page.click('button[type=submit]')]);
    const errors = await page.$$eval('.view .error', (els) => els.map((e) => e.textContent));
    expect(errors).toEqual(['HTTP 401: the credential was refused', 'HTTP 401: the credential was refused']);
    expect(await page.content()).not.toContain('wrong-secret-value');
  });

  it('a cross-origin form post is refused', async () => {
    const response = await fetch(url('/console/credential'), {
      method: 'POST',
      body: new URLSearchParams({ key: 'cpz_demo_data', secret: 'demo' }),
      headers: { authorization: `Bearer ${TOKEN}`, referer: 'http://evil.example/page' },
    });
    expect(response.status).toBe(403);
  });

  it('search playground: list_cash_flows ranks first for "unsettled", with the fields that matched', async () => {
    await page.goto(url('/console/search'), { waitUntil: 'networkidle' });
    await page.fill('input[name=q]', 'unsettled');
    await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle' }), page.click('form.search button')]);
    expect(new URL(page.url()).searchParams.get('q')).toBe('unsettled');
    const first = await page.$eval('table.results tbody tr', (tr: Element) => ({
      rank: tr.getAttribute('data-rank'),
      name: tr.getAttribute('data-name'),
      matched: tr.lastElementChild!.textContent,
    }));
    expect(first).toMatchObject({ rank: '1', name: 'list_cash_flows' });
    expect(first.matched).toContain('params unsettled');
    await page.goto(url('/console/search?q=order+status&limit=8'), { waitUntil: 'networkidle' });
    await page.screenshot({ path: join(SHOTS, 'console-search.png'), fullPage: true });
  });
});

async function callTool(name: string): Promise<void> {
  const response = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...DEMO_KEYS.data },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
  });
  expect(response.status).toBe(200);
  await response.text();
}
