/**
 * The console's operator pages (issue 33): the configuration in force (redacted), the scopes with what
 * each unlocks, and the built-in authorization server's clients and grants. Pure: page data in, HTML out.
 */
import type { ClientSummary, GrantSummary } from '../../auth/oauth/admin.ts';
import { html } from './html.ts';
import { layout } from './pages.ts';

export interface ConfigData {
  /** The loaded configuration, redacted (obs/redact.ts), as indented JSON. */
  json: string;
  /** How many values were replaced. */
  redacted: number;
}

/** `/console/config`: the effective configuration, every secret replaced. */
export function configPage(data: ConfigData): string {
  const content = html`
<p class="lead">The configuration in force: the file, the <code>GATEWAY_*</code> variables and the defaults, merged (after the last reload).
Secrets are replaced by <code>[redacted]</code> (${data.redacted} value${data.redacted === 1 ? '' : 's'}): keys, tokens, passwords, header and
environment values, and the user name, password and query string of every URL. What each key means: <code>docs/config.md</code>.</p>
<pre class="config" tabindex="0" aria-label="Effective configuration">${data.json}</pre>`;
  return layout('config', 'Configuration', content);
}

export interface ScopeRow {
  scope: string;
  /** `oauth.scopeDescriptions`. */
  description?: string;
  /** In `oauth.scopes`: a token may carry it. */
  offered: boolean;
  /** Tools that list it among their required scopes (any one of which suffices). */
  tools: { name: string; upstream: string; readOnly: boolean }[];
}

export interface ScopesData {
  rows: ScopeRow[];
  /** Tools every caller sees (no required scope). */
  publicTools: string[];
  /** Upstreams whose resources, prompts and completions need a scope (`upstreams[].scopes.required`). */
  upstreamScopes: { upstream: string; scopes: string[] }[];
  several: boolean;
  error?: string;
}

/** `/console/scopes`: every scope the gateway knows, what it means, and the tools each unlocks. */
export function scopesPage(data: ScopesData): string {
  const content = html`
<p class="lead">A tool needs any one of its required scopes (<code>scopeRules</code>, else the upstream's
<code>scopes.required</code>, and any one of its <code>_meta</code> scopes as well when it declares them: the Catalogue page shows both). "Offered" scopes are in <code>oauth.scopes</code>: a client may ask for them at sign-in, where the
description is shown. Without a required scope a tool is public.</p>
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<table class="scopes">
<thead><tr><th>Scope</th><th>Description</th><th>Offered</th><th class="num">Tools</th><th>Tools it unlocks</th></tr></thead>
<tbody>${data.rows.map(
    (r) => html`<tr data-scope="${r.scope}">
<td><span class="scope">${r.scope}</span></td>
<td>${r.description ?? html`<span class="sub">no description (oauth.scopeDescriptions)</span>`}</td>
<td>${r.offered ? 'yes' : html`<span class="sub">no</span>`}</td>
<td class="num" data-count="${r.tools.length}">${r.tools.length}</td>
<td>${r.tools.length ? r.tools.map((t) => html`<code title="${t.readOnly ? 'read' : 'write'}">${t.name}</code>${data.several ? html`<span class="sub"> (${t.upstream})</span>` : ''} `) : html`<span class="sub">none</span>`}</td>
</tr>`,
  )}</tbody>
</table>
<h2>Public tools <small>${data.publicTools.length}</small></h2>
<p>${data.publicTools.length ? data.publicTools.map((n) => html`<code>${n}</code> `) : html`<span class="sub">none: every tool needs a scope</span>`}</p>
${
  data.upstreamScopes.length
    ? html`<h2>Resources, prompts and completions</h2><ul>${data.upstreamScopes.map((u) => html`<li><strong>${u.upstream}</strong>: ${u.scopes.map((s) => html`<span class="scope">${s}</span> `)}</li>`)}</ul>`
    : ''
}`;
  return layout('scopes', 'Scopes', content);
}

export interface OAuthData {
  mode: 'off' | 'builtin' | 'external';
  clients: ClientSummary[];
  grants: GrantSummary[];
  now: number;
  notice?: string;
  error?: string;
}

/** `/console/oauth`: the built-in authorization server's registered clients and live grants, each grant revocable. */
export function oauthPage(data: OAuthData): string {
  if (data.mode !== 'builtin')
    return layout(
      'oauth',
      'OAuth clients and grants',
      html`<p class="lead">The built-in authorization server is off (<code>oauth.mode: ${data.mode}</code>)${data.mode === 'external' ? ': clients and grants live at the identity provider' : ''}. Nothing to list here.</p>`,
    );
  const names = new Map(data.clients.map((c) => [c.clientId, c.name]));
  const content = html`
<p class="lead">Clients registered with the built-in authorization server (RFC 7591; an unused registration is forgotten after
<code>oauth.clients.unusedTtlSeconds</code>) and the grants accounts gave them. Revoking a grant ends every token issued from it at once, on
every replica sharing the store: its refresh tokens are deleted and its access tokens refused from the next request; the client must
send its user through sign-in again. Each revocation writes one <code>auth_decision</code> audit line (<code>endpoint: console_revoke</code>).</p>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<h2>Grants <small data-count="grants">${data.grants.length}</small></h2>
${
  data.grants.length === 0
    ? html`<p class="hint">No live grant.</p>`
    : html`<table class="grants">
<thead><tr><th>Client</th><th>Account</th><th>Scopes by endpoint</th><th>Granted</th><th>Expires</th><th></th></tr></thead>
<tbody>${data.grants.map(
        (g) => html`<tr data-grant="${g.grantId}">
<td>${names.get(g.clientId) ?? html`<span class="sub">unnamed</span>`}<div class="sub mono">${g.clientId}</div></td>
<td class="mono">${g.account}</td>
<td>${Object.entries(g.resources).map(([url, scopes]) => html`<div><code>${new URL(url).pathname}</code> ${scopes.map((s) => html`<span class="scope">${s}</span> `)}</div>`)}</td>
<td class="nowrap sub">${stamp(g.issuedAt)}</td>
<td class="nowrap sub">${stamp(g.expiresAt)}</td>
<td><form method="post" action="/console/oauth/revoke" class="inline bare"><input type="hidden" name="grant" value="${g.grantId}"><button type="submit" class="danger" aria-label="Revoke the grant of ${names.get(g.clientId) ?? g.clientId} for ${g.account}">Revoke</button></form></td>
</tr>`,
      )}</tbody></table>`
}
<h2>Registered clients <small data-count="clients">${data.clients.length}</small></h2>
${
  data.clients.length === 0
    ? html`<p class="hint">No registered client.</p>`
    : html`<table class="clients">
<thead><tr><th>Client</th><th>Redirect URIs</th><th>Registered</th><th>Forgotten unless used by</th><th class="num">Live grants</th></tr></thead>
<tbody>${data.clients.map(
        (c) => html`<tr data-client="${c.clientId}">
<td>${c.name ?? html`<span class="sub">unnamed</span>`}<div class="sub mono">${c.clientId}</div></td>
<td>${c.redirectUris.map((u) => html`<div class="mono">${u}</div>`)}</td>
<td class="nowrap sub">${stamp(c.registeredAt)}</td>
<td class="nowrap sub">${stamp(c.expiresAt)}</td>
<td class="num">${data.grants.filter((g) => g.clientId === c.clientId).length}</td>
</tr>`,
      )}</tbody></table>`
}`;
  return layout('oauth', 'OAuth clients and grants', content);
}

function stamp(at: number | undefined): string {
  return at ? `${new Date(at).toISOString().replace('T', ' ').slice(0, 19)} UTC` : '–';
}
