/**
 * The console's Definition changes page (issue 30): what waits for approval, lint findings, every pin;
 * and for one tool the pinned and the waiting definition side by side as a line diff, with the Approve
 * button (a POST form; the route checks the admin token and the origin). Pure: page data in, HTML out.
 */
import type { LintFinding } from '../../catalog/description-lint.ts';
import type { PinDetail, PinReviewEntry } from '../../ops/pin-review.ts';
import { html, type Html } from './html.ts';
import { layout } from './pages.ts';

export interface PinsData {
  entries: readonly PinReviewEntry[];
  /** pinning.mode, newTools and lint, as configured. */
  settings: { mode: string; newTools: string; lint: string; lockFile?: string };
  /** A one-line outcome of the last approval (after the POST's redirect). */
  notice?: string;
  error?: string;
}

const REASON: Record<string, string> = {
  changed: 'changed',
  new: 'new tool',
  lint: 'lint findings',
  unverified: 'pin store unavailable',
};

/** `/console/pins`: the changes waiting for an operator, lint findings, and every pin. */
export function pinsPage(data: PinsData): string {
  const waiting = data.entries.filter((e) => e.pending);
  const flagged = data.entries.filter((e) => e.findings.length > 0);
  const held = data.entries.filter((e) => e.state === 'held').length;
  const { settings } = data;
  const content = html`
<p class="lead">Each upstream tool is pinned to the definition the gateway first saw or an operator last approved (name, title,
description, schemas, annotations, and the <code>_meta</code> keys that change behaviour). A changed definition is
${settings.mode === 'hold' ? html`<strong>held</strong>: its pinned definition stays served while the upstream still takes calls under it (else the tool is withheld), and its calls are refused until approved` : settings.mode === 'warn' ? html`<strong>served with a warning</strong> until approved` : html`not compared (<code>pinning.mode: off</code>)`}.
New tools: <code>${settings.newTools}</code>; description lint: <code>${settings.lint}</code>${settings.lockFile ? html`; lock file <code>${settings.lockFile}</code>` : ''}.</p>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<section class="summary">
  <div class="card${held ? ' status-degraded' : ''}"><div class="label">Held</div><div class="value" data-count="held">${held}</div></div>
  <div class="card"><div class="label">Waiting for approval</div><div class="value" data-count="waiting">${waiting.length}</div></div>
  <div class="card"><div class="label">Tools with lint findings</div><div class="value" data-count="flagged">${flagged.length}</div></div>
  <div class="card"><div class="label">Pins</div><div class="value">${data.entries.filter((e) => e.pin).length}</div></div>
</section>
<h2>Waiting for approval</h2>
${
  waiting.length === 0
    ? held
      ? html`<p class="hint">Nothing waits for approval, yet ${held} ${held === 1 ? 'tool is' : 'tools are'} held: see their state under Pins.</p>`
      : html`<p class="hint">Nothing waits: every tool is served as pinned.</p>`
    : html`<form method="post" action="/console/pins/approve" class="inline">${waiting.map((e) => html`<input type="hidden" name="pin" value="${JSON.stringify({ upstream: e.upstream, name: e.name, digest: e.pending!.digest })}">`)}<button type="submit">Approve all ${waiting.length}</button><span class="sub">Approves the ${waiting.length === 1 ? 'definition' : 'definitions'} listed here; one that changed since this page was shown is not approved. Review each first.</span></form>
<table class="pins waiting">
<thead><tr><th>Tool</th><th>Upstream</th><th>State</th><th>What changed</th><th>Seen</th><th></th></tr></thead>
<tbody>${waiting.map(
        (e) => html`<tr data-tool="${e.tool ?? e.name}">
<td><code>${e.tool ?? e.name}</code>${e.tool && e.tool !== e.name ? html`<div class="sub">upstream name <code>${e.name}</code></div>` : ''}</td>
<td>${e.upstream}</td>
<td>${stateBadge(e)}</td>
<td>${changesList(e.changes)}</td>
<td class="nowrap sub">${e.pending!.seenAt.replace('T', ' ').slice(0, 19)}</td>
<td><a class="button" href="${reviewPath(e)}">Review</a></td>
</tr>`,
      )}</tbody></table>`
}
<h2>Description lint findings</h2>
${
  flagged.length === 0
    ? html`<p class="hint">No finding in the served catalogue.</p>`
    : html`<table class="pins findings"><thead><tr><th>Tool</th><th>Upstream</th><th>Findings</th></tr></thead>
<tbody>${flagged.map((e) => html`<tr data-tool="${e.tool ?? e.name}"><td><code>${e.tool ?? e.name}</code></td><td>${e.upstream}</td><td>${findingsList(e.findings)}</td></tr>`)}</tbody></table>`
}
<h2>Pins</h2>
<table class="pins all">
<thead><tr><th>Tool</th><th>Upstream</th><th>State</th><th>Pinned</th><th>By</th><th>Digest</th></tr></thead>
<tbody>${data.entries.map(
    (e) => html`<tr data-tool="${e.tool ?? e.name}">
<td><code>${e.tool ?? e.name}</code></td>
<td>${e.upstream}</td>
<td>${stateBadge(e)}</td>
<td class="nowrap sub">${e.pin ? e.pin.pinnedAt.replace('T', ' ').slice(0, 19) : '–'}</td>
<td>${e.pin ? e.pin.by.replace('_', ' ') : '–'}</td>
<td class="mono" title="${e.pin?.digest ?? ''}">${e.pin ? e.pin.digest.slice(7, 19) : '–'}</td>
</tr>`,
  )}</tbody>
</table>`;
  return layout('pins', 'Definition changes', content);
}

/** `/console/pins/<upstream>/<tool>`: the pinned and the waiting definition as a line diff, and the Approve button. */
export function pinDetailPage(detail: PinDetail): string {
  const name = detail.tool ?? detail.name;
  const content = html`
<p class="lead"><code>${name}</code> of upstream <strong>${detail.upstream}</strong> ${stateBadge(detail)}
${detail.pin ? html`· pinned ${detail.pin.pinnedAt.replace('T', ' ').slice(0, 19)} (${detail.pin.by.replace('_', ' ')})` : '· no pin yet'}
${detail.pending ? html`· waiting since ${detail.pending.seenAt.replace('T', ' ').slice(0, 19)}` : ''}</p>
${detail.changes.length ? html`<h2>What changed</h2>${changesList(detail.changes)}` : ''}
${detail.findings.length ? html`<h2>Description lint</h2>${findingsList(detail.findings)}` : ''}
${
  detail.pending
    ? html`<form method="post" action="/console/pins/approve" class="inline approve">
<input type="hidden" name="upstream" value="${detail.upstream}"><input type="hidden" name="name" value="${detail.name}"><input type="hidden" name="digest" value="${detail.pending.digest}">
<button type="submit">Approve this definition</button><span class="sub">It becomes the pin and is served from now on, on every replica.</span></form>`
    : html`<p class="hint">Nothing waits for approval: the pinned definition is what the upstream lists.</p>`
}
<h2>Definition <small>${detail.pending ? html`<span class="del">pinned</span> → <span class="ins">${detail.pending.kind === 'new' ? 'new' : 'waiting'}</span>` : 'pinned'}</small></h2>
<pre class="diff">${detail.parts.map((part) => diffLines(part.kind, part.text))}</pre>
<p><a href="/console/pins">← All definition changes</a></p>`;
  return layout('pins', `Definition change: ${name}`, content);
}

function diffLines(kind: 'same' | 'removed' | 'added', text: string): Html[] {
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  return lines.map((line) =>
    kind === 'added'
      ? html`<ins class="line">+ ${line}</ins>`
      : kind === 'removed'
        ? html`<del class="line">- ${line}</del>`
        : html`<span class="line">  ${line}</span>`,
  );
}

function stateBadge(e: Pick<PinReviewEntry, 'state' | 'reason' | 'pending'>): Html {
  if (e.state === 'held') return html`<span class="badge held">held: ${REASON[e.reason ?? ''] ?? e.reason}</span>`;
  if (e.state === 'warned') return html`<span class="badge warned">changed, served (warn)</span>`;
  if (e.state === 'removed') return html`<span class="badge removed">not listed now</span>`;
  if (e.pending)
    return html`<span class="badge warned">${REASON[e.pending.kind] ?? e.pending.kind}${e.state === 'unconfigured' ? ', upstream no longer configured' : ''}</span>`;
  if (e.state === 'unconfigured') return html`<span class="badge removed">upstream no longer configured</span>`;
  return html`<span class="badge pinned">${e.state === 'unseen' ? 'pinned (not seen yet)' : 'pinned'}</span>`;
}

function changesList(changes: readonly string[]): Html {
  return changes.length ? html`<ul class="changes">${changes.map((c) => html`<li>${c}</li>`)}</ul>` : html`<span class="sub">–</span>`;
}

function findingsList(findings: readonly LintFinding[]): Html {
  return html`<ul class="findings">${findings.map((f) => html`<li><span class="badge lint">${f.rule}</span> <code>${f.path}</code> <span class="sub">${f.excerpt}</span></li>`)}</ul>`;
}

function reviewPath(e: Pick<PinReviewEntry, 'upstream' | 'name'>): string {
  return `/console/pins/${encodeURIComponent(e.upstream)}/${encodeURIComponent(e.name)}`;
}
