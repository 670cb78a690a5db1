/**
 * The console's rendering: pure functions of page data. What matters is what a browser would do with
 * the markup (escaping), that a page never carries the credential, and the playground's explanation.
 */
import { describe, expect, it } from 'vitest';
import { matchedFields } from '../../search/index.ts';
import { escapeHtml, html } from '../../gateway/http/console/html.ts';
import { catalogPage, credentialPage, overviewPage, searchPage } from '../../gateway/http/console/pages.ts';
import { TOOL_LIST } from '../../upstream/server/tools/index.ts';

const HOSTILE = `<script>alert("x")</script>&'`;

describe('console HTML', () => {
  it('escapes every interpolated value and keeps built markup as it is', () => {
    expect(escapeHtml(HOSTILE)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
    expect(html`<td title="${HOSTILE}">${[html`<b>${HOSTILE}</b>`, null, false, 3]}</td>`.value).toBe(
      `<td title="${escapeHtml(HOSTILE)}"><b>${escapeHtml(HOSTILE)}</b>3</td>`,
    );
  });

  it('renders upstream-supplied names, reasons and descriptions inert on every page', () => {
    const pages = [
      overviewPage({
        now: 0,
        readiness: { status: 'degraded', reasons: [HOSTILE] },
        counters: [],
        upstreams: [{ name: 'u', transport: 'http', target: HOSTILE, state: 'down', reason: HOSTILE, reconnects: 0 }],
      }),
      catalogPage({
        version: 'v',
        several: true,
        rows: [
          {
            name: HOSTILE,
            upstream: HOSTILE,
            title: HOSTILE,
            category: HOSTILE,
            requiredScopes: [HOSTILE],
            readOnly: false,
            hasOutputSchema: true,
            advertised: true,
          },
        ],
      }),
      credentialPage({
        keyHeader: 'x-cpz-key',
        secretHeader: 'x-cpz-secret',
        bearer: true,
        views: [
          { path: '/mcp', tools: [{ name: HOSTILE, readOnly: true, hasOutputSchema: false }] },
          { path: '/mcp/compact', error: HOSTILE },
        ],
      }),
      searchPage({
        query: HOSTILE,
        category: HOSTILE,
        limit: 5,
        maxLimit: 20,
        categories: [HOSTILE],
        hints: [HOSTILE],
        rows: [{ rank: 1, name: HOSTILE, score: 1, readOnly: true, advertised: false, matched: [{ field: 'name', terms: [HOSTILE], prefixes: [] }] }],
      }),
    ];
    for (const page of pages) {
      expect(page).not.toContain('<script>alert');
      expect(page).toContain('&lt;script&gt;alert');
      // The only script is the console's own file.
      expect(page.match(/<script/g)).toEqual(['<script']);
    }
  });

  it('renders the credential form empty and posts it, never as a URL', () => {
    const page = credentialPage({ keyHeader: 'x-cpz-key', secretHeader: 'x-cpz-secret', bearer: true, views: [{ path: '/mcp', tools: [] }] });
    expect(page).toContain('<form method="post" action="/console/credential"');
    expect(page).not.toMatch(/<input[^>]*value=/);
    expect(page).toMatch(/name="secret" type="password"/);
  });

  it('the playground explains list_cash_flows for "unsettled": a parameter name and its description', () => {
    const tool = TOOL_LIST.find((t) => t.name === 'list_cash_flows')!;
    const matched = matchedFields({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema as object }, 'unsettled payments');
    expect(matched.map((m) => m.field)).toEqual(['description', 'params', 'paramText']);
    // The words as the tool writes them, not the stems the index keeps ("unsettl").
    expect(matched.find((m) => m.field === 'params')!.terms).toEqual(['unsettled']);
    expect(matchedFields({ name: 'buy_stock', description: 'Buying shares' }, 'buy')).toEqual([
      { field: 'name', terms: ['buy'], prefixes: [] },
      { field: 'description', terms: ['buying'], prefixes: [] },
    ]);
    expect(matchedFields({ name: 'list_orders' }, 'unsettled')).toEqual([]);
  });
});
