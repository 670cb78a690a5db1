/**
 * The console's pages: pure functions from page data (model.ts) to a complete HTML document. Server
 * rendered, one stylesheet (/console/console.css), one small script (/console/console.js) that only
 * refreshes the live counters; every page works without JavaScript (forms are plain GET/POST forms).
 */
import { NO_ICON, html, type Html } from './html.ts';
import type { CatalogData, Counter, CredentialData, OverviewData, SearchData, UpstreamStatus } from './model.ts';

export type ConsolePage = 'overview' | 'catalog' | 'credential' | 'search' | 'pins' | 'scopes' | 'oauth' | 'config';

const NAV: readonly { page: ConsolePage; path: string; label: string }[] = [
  { page: 'overview', path: '/console', label: 'Overview' },
  { page: 'catalog', path: '/console/catalog', label: 'Catalogue' },
  { page: 'credential', path: '/console/credential', label: 'What a credential sees' },
  { page: 'search', path: '/console/search', label: 'Search playground' },
  { page: 'pins', path: '/console/pins', label: 'Definition changes' },
  { page: 'scopes', path: '/console/scopes', label: 'Scopes' },
  { page: 'oauth', path: '/console/oauth', label: 'OAuth' },
  { page: 'config', path: '/console/config', label: 'Configuration' },
];

/** The document around a page's content: head, header with navigation, main. */
export function layout(page: ConsolePage, title: string, content: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · MCP gateway console</title>
${NO_ICON}
<link rel="stylesheet" href="/console/console.css">
<script src="/console/console.js" defer></script>
</head>
<body>
<header>
  <a class="brand" href="/console">MCP gateway <span>console</span></a>
  <nav>${NAV.map((n) => html`<a href="${n.path}"${n.page === page ? html` aria-current="page"` : ''}>${n.label}</a>`)}</nav>
</header>
<main>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`.value;
}

/** `/console`: readiness, each upstream's state and catalogue, live counters. */
export function overviewPage(data: OverviewData): string {
  const { readiness } = data;
  const content = html`
<section class="summary">
  <div class="card status-${readiness.status}"><div class="label">Readiness</div><div class="value">${readiness.status.replace('_', ' ')}</div></div>
  <div class="card"><div class="label">Catalogue version</div><div class="value mono" title="${data.catalog?.version ?? ''}">${data.catalog ? data.catalog.version.slice(0, 12) : '–'}</div></div>
  <div class="card"><div class="label">Tools</div><div class="value">${data.catalog?.tools ?? '–'}</div></div>
  <div class="card"><div class="label">Upstreams up</div><div class="value">${data.upstreams.filter((u) => u.state === 'up').length} / ${data.upstreams.length}</div></div>
</section>
${readiness.reasons.length ? html`<ul class="reasons">${readiness.reasons.map((r) => html`<li>${r}</li>`)}</ul>` : ''}
<h2>Upstreams</h2>
<table>
<thead><tr><th>Upstream</th><th>State</th><th>Transport</th><th>Catalogue</th><th class="num">Tools</th><th>Last refresh</th><th class="num">Reconnects</th></tr></thead>
<tbody>${data.upstreams.map((u) => upstreamRow(u, data.now))}</tbody>
</table>
<h2>Live counters <small id="counters-updated">as of ${clock(data.now)}</small></h2>
<section class="counters" data-live="/console/counters">${data.counters.map(counterCard)}</section>
<noscript><p class="hint">Reload the page for fresh figures (with JavaScript they refresh every 2 seconds).</p></noscript>
`;
  return layout('overview', 'Overview', content);
}

function upstreamRow(u: UpstreamStatus, now: number): Html {
  return html`<tr>
<td><strong>${u.name}</strong><div class="sub mono">${u.target}</div></td>
<td><span class="badge state-${u.state}">${u.state}</span>${u.since ? html`<div class="sub">since ${ago(u.since, now)}</div>` : ''}${u.state !== 'up' && u.reason ? html`<div class="sub error">${u.reason}</div>` : ''}</td>
<td>${u.transport}</td>
<td class="mono" title="${u.catalogVersion ?? ''}">${u.catalogVersion ? u.catalogVersion.slice(0, 12) : '–'}</td>
<td class="num">${u.tools ?? '–'}</td>
<td>${u.lastRefresh ? html`<span title="${new Date(u.lastRefresh).toISOString()}">${ago(u.lastRefresh, now)}</span>` : 'never'}${u.lastError ? html`<div class="sub error">${u.lastError}</div>` : ''}</td>
<td class="num">${u.reconnects}</td>
</tr>`;
}

function counterCard(c: Counter): Html {
  return html`<div class="card counter"><div class="label">${c.label}</div><div class="value" id="counter-${c.id}" data-counter="${c.id}">${formatCount(c.value)}</div></div>`;
}

/** `/console/catalog`: every tool of the merged catalogue with its policy data. */
export function catalogPage(data: CatalogData): string {
  if (data.error) return layout('catalog', 'Catalogue', html`<p class="error">${data.error}</p>`);
  const writes = data.rows.filter((r) => !r.readOnly).length;
  const content = html`
<p class="lead">${data.rows.length} tools (${data.rows.length - writes} read, ${writes} write) in catalogue version <code title="${data.version ?? ''}">${data.version?.slice(0, 12) ?? '–'}</code>.
Required scopes: a caller needs any one of them; none means every caller sees the tool. "Compact" marks the tools <code>/mcp/compact</code> lists up front (every write, and the read anchors); the rest are reached through <code>search_tools</code>.</p>
<table class="catalog">
<thead><tr><th>Tool</th>${data.several ? html`<th>Upstream</th>` : ''}<th>Category</th><th>Required scopes</th><th>Kind</th><th>Output schema</th><th>Compact</th></tr></thead>
<tbody>${data.rows.map(
    (r) => html`<tr>
<td><code>${r.name}</code>${r.title ? html`<div class="sub">${r.title}</div>` : ''}</td>
${data.several ? html`<td>${r.upstream}</td>` : ''}
<td class="nowrap">${r.category ?? '–'}</td>
<td>${r.requiredScopes.length ? r.requiredScopes.map((s) => html`<span class="scope">${s}</span> `) : html`<span class="sub">public</span>`}${r.floorScopes ? html`<div class="sub">and one of ${r.floorScopes.map((s) => html`<span class="scope">${s}</span> `)}</div>` : ''}</td>
<td><span class="badge ${r.readOnly ? 'read' : 'write'}">${r.readOnly ? 'read' : 'write'}</span></td>
<td>${r.hasOutputSchema ? 'yes' : html`<span class="sub">no</span>`}</td>
<td>${r.advertised ? 'listed' : html`<span class="sub">via search</span>`}</td>
</tr>`,
  )}</tbody>
</table>`;
  return layout('catalog', 'Catalogue', content);
}

/**
 * `/console/credential`: a POST form (the credential never travels in a URL); after a lookup, each
 * endpoint's tools. The fields are always rendered empty: the credential is not echoed.
 */
export function credentialPage(data: CredentialData): string {
  const content = html`
<p class="lead">Lists the tools each endpoint serves a credential, by asking the endpoint itself. The credential is used for this one lookup: it is not stored, logged or shown again.</p>
<form method="post" action="/console/credential" class="credential" autocomplete="off">
  <fieldset>
    <legend>Key and secret</legend>
    <label>Key <small>(${data.keyHeader})</small><input name="key" autocomplete="off" spellcheck="false"></label>
    <label>Secret <small>(${data.secretHeader})</small><input name="secret" type="password" autocomplete="off"></label>
  </fieldset>
  ${data.bearer ? html`<fieldset><legend>or a bearer token</legend><label>Token <small>(Authorization: Bearer)</small><input name="bearer" type="password" autocomplete="off"></label></fieldset>` : ''}
  <button type="submit">Show the tools</button>
</form>
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
${data.whose ? html`<p class="whose" role="status"><strong>Whose view:</strong> ${data.whose} <span class="sub">(the form is cleared on purpose: the credential is not echoed.)</span></p>` : ''}
${
  data.views
    ? html`<section class="views">${data.views.map(
        (v) => html`<div class="view" data-path="${v.path}">
<h2><code>${v.path}</code> ${v.tools ? html`<span class="count" data-count="${v.tools.length}">${v.tools.length} tool${v.tools.length === 1 ? '' : 's'}</span>` : ''}</h2>
${
  v.error !== undefined
    ? html`<p class="error">${v.error}</p>${v.explain ? html`<p class="explain">${v.explain}</p>` : ''}`
    : html`<table><thead><tr><th>Tool</th><th>Kind</th><th>Output schema</th></tr></thead><tbody>${v.tools!.map(
        (t) =>
          html`<tr><td><code>${t.name}</code></td><td><span class="badge ${t.readOnly ? 'read' : 'write'}">${t.readOnly ? 'read' : 'write'}</span></td><td>${t.hasOutputSchema ? 'yes' : html`<span class="sub">no</span>`}</td></tr>`,
      )}</tbody></table>`
}
</div>`,
      )}</section>`
    : ''
}`;
  return layout('credential', 'What a credential sees', content);
}

/** `/console/search`: a GET form (shareable URL), then the ranked matches with the fields each query term was found in. */
export function searchPage(data: SearchData): string {
  const content = html`
<p class="lead">Ranks the whole catalogue${data.catalogVersion ? html` (version <code>${data.catalogVersion.slice(0, 12)}</code>)` : ''} with the index <code>search_tools</code> uses, without a caller's scope filter. "Matched" lists, per field, the words of the tool that matched the query (a word matches when both reduce to the same stem: <em>buying</em> for <em>buy</em>; <em>prefix</em>: a query word starts it).</p>
<form method="get" action="/console/search" class="search">
  <label class="grow">Query<input name="q" value="${data.query}" placeholder="e.g. unsettled cash" autofocus></label>
  <label>Category<select name="category"><option value="">any</option>${data.categories.map((c) => html`<option${c === data.category ? html` selected` : ''}>${c}</option>`)}${data.category && !data.categories.includes(data.category) ? html`<option selected value="${data.category}">${data.category} (unknown)</option>` : ''}</select></label>
  <label>Limit<input name="limit" type="number" min="1" max="${data.maxLimit}" value="${data.limit}"></label>
  <button type="submit">Search</button>
</form>
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
${data.hints.length ? html`<ul class="hints" role="status">${data.hints.map((h) => html`<li>${h}</li>`)}</ul>` : ''}
${
  data.rows === undefined
    ? ''
    : data.rows.length === 0
      ? html`<p class="hint">No tool matched${data.category ? html` in the category <code>${data.category}</code>` : ''}.</p>`
      : html`<table class="results">
<thead><tr><th class="num">Rank</th><th>Tool</th><th class="num">Score</th><th>Category</th><th>Kind</th><th>Matched</th></tr></thead>
<tbody>${data.rows.map(
          (r) => html`<tr data-rank="${r.rank}" data-name="${r.name}">
<td class="num">${r.rank}</td>
<td><code>${r.name}</code>${r.upstream ? html`<div class="sub">${r.upstream}</div>` : ''}${r.advertised ? '' : html`<div class="sub">via call_tool</div>`}</td>
<td class="num">${r.score.toFixed(3)}</td>
<td class="nowrap">${r.category ?? '–'}</td>
<td><span class="badge ${r.readOnly ? 'read' : 'write'}">${r.readOnly ? 'read' : 'write'}</span></td>
<td>${r.matched.length ? r.matched.map((m) => html`<span class="field"><b>${m.field}</b> ${[...m.terms, ...m.prefixes.map((p) => `${p} (prefix)`)].join(', ')}</span> `) : html`<span class="sub">fuzzy only</span>`}</td>
</tr>`,
        )}</tbody></table>`
}`;
  return layout('search', 'Search playground', content);
}

/** The page for a console route without a valid admin credential (sent with 401). */
export function unauthorizedPage(): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>401 · MCP gateway console</title>${NO_ICON}</head>
<body><main><h1>Admin credential required</h1><p>The console needs the gateway's admin token (<code>console.adminToken</code>): sign in with any user name and the token as the password, or send <code>Authorization: Bearer &lt;token&gt;</code>.</p></main></body></html>
`.value;
}

function ago(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`;
}

function clock(at: number): string {
  return `${new Date(at).toISOString().slice(11, 19)} UTC`;
}

/** Counters as integers with thousands separators (`12,345`). */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
