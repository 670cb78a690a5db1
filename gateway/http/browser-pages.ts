import type { Context } from 'koa';
import type { GatewayConfig } from '../../config/types.ts';
import { NO_ICON, html, type Html } from './console/html.ts';
import type { Exchange } from './exchange.ts';

/**
 * What every answer for a person carries (the console's, whatever its status, and these pages): no
 * framing (CSP `frame-ancestors`, and `X-Frame-Options` for a browser without it: a 401 page framed by
 * another site was shown), no sniffing, no caching. The console's own pages add their CSP's sources.
 */
export const PERSON_HEADERS: Readonly<Record<string, string>> = {
  // img-src data: for the page's empty icon (html.ts NO_ICON), which 'none' made a CSP error per page (try-out).
  'content-security-policy': "default-src 'none'; img-src data:; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** A page for a person, in place of the JSON-RPC 404 an MCP client gets. */
export interface BrowserPage {
  status: number;
  /** The route label of http_request_duration_seconds (bounded whatever the path). */
  route: string;
  body: string;
}

/** Console paths: `/console` and below. */
const CONSOLE = /^\/console(\/|$)/;

/** Whether `path` is the console's (a person's browser is its client). */
export const isConsolePath = (path: string): boolean => CONSOLE.test(path);

/** Answers a person with a page saying why the request was refused (`status`), with {@link PERSON_HEADERS}. */
export function refusalPage(ctx: Exchange | Context, status: number, title: string, why: string): void {
  ctx.status = status;
  ctx.set({ ...PERSON_HEADERS, 'content-type': 'text/html; charset=utf-8' });
  ctx.body = page(title, html`<p>${why}</p>`);
}

/**
 * What a browser gets for `/` and for a `/console` path nothing else answered (the console off, or an
 * unknown page of it): `/` says this is an MCP server, names its endpoints and links the console (or says
 * it is off); a console path links `/console`, or says the console is off and how to turn it on
 * (`console.adminToken`). Only for a GET or HEAD whose `Accept` names text/html (a browser navigating):
 * MCP clients, scripts and every other path keep the JSON-RPC 404. Undefined when the request is none of these.
 */
export function browserPage(ctx: Context, config: GatewayConfig, mcpPaths: readonly string[]): BrowserPage | undefined {
  // A navigation names text/html itself; `*/*` alone (curl, fetch) is not a browser asking for a page.
  if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !/\btext\/html\b/i.test(ctx.get('accept'))) return undefined;
  const on = config.console.adminToken !== undefined;
  const consoleLine = on
    ? html`<p>The operator console: <a href="/console">/console</a> (sign in with the admin token).</p>`
    : html`<p>The operator console is off. To turn it on, set <code>console.adminToken</code> in the configuration (or <code>GATEWAY_CONSOLE_ADMIN_TOKEN</code>, at least 16 characters) and restart or reload the gateway; it is then at <code>/console</code>.</p>`;
  if (ctx.path === '/') {
    const endpoints = mcpPaths.map((path) => html`<li><code>${path}</code></li>`);
    return {
      status: 200,
      route: '/',
      body: page(
        'MCP catalog gateway',
        html`<p>This is an MCP server: MCP clients connect to one of its endpoints with a credential, not a browser.</p><ul>${endpoints}</ul>${consoleLine}`,
      ),
    };
  }
  if (!CONSOLE.test(ctx.path)) return undefined;
  return {
    status: 404,
    route: '/console/{*rest}',
    body: page(on ? 'Not a console page' : 'The console is off', on ? html`<p>Nothing is at <code>${ctx.path}</code>.</p>${consoleLine}` : consoleLine),
  };
}

function page(title: string, content: Html): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${NO_ICON}</head><body><h1>${title}</h1>${content}</body></html>`
    .value;
}
