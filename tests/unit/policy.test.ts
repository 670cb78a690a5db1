/**
 * The visibility policy as a pure function of data (catalogue, scopes): no socket needed.
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { loadConfig } from '../../config/load.ts';
import { buildCatalog } from '../../gateway/catalog/catalog.ts';
import { accessFor, visibilityKey, visibleTools } from '../../gateway/policy/visibility.ts';

const config = loadConfig({ env: {}, overrides: { upstreams: [{ scopeRules: { get_profile: [], list_deals: ['middle-office:admin'] } }] } });
const upstream = config.upstreams[0]!;
/** Access from granted scopes, or from a failed lookup under each failure mode (with the credential's last good answer, if any). */
const access = (scopes: readonly string[] | 'open' | 'closed', lastKnown?: readonly string[]) =>
  typeof scopes === 'string'
    ? accessFor({ kind: 'unverified', reason: 'timeout', ...(lastKnown ? { lastKnown: { scopes: lastKnown } } : {}) }, [
        { ...upstream, scopes: { ...upstream.scopes, failureMode: scopes } },
      ])
    : accessFor({ kind: 'scopes', scopes }, config.upstreams);
const tool = (name: string, requiredScopes?: string[], readOnlyHint = true): Tool => ({
  name,
  inputSchema: { type: 'object' },
  annotations: { readOnlyHint },
  ...(requiredScopes ? { _meta: { 'ai.cpz/tool': { category: 'test', requiredScopes } } } : {}),
});
const catalog = buildCatalog(upstream, [
  tool('list_orders', ['orders:read']),
  tool('place_order', ['trade', 'orders:write'], false),
  tool('get_profile', ['profile:read']),
  tool('list_deals', ['middle-office:read']),
  tool('no_requirement'),
]);
const names = (scopes: readonly string[] | 'open' | 'closed', lastKnown?: readonly string[]) =>
  visibleTools(catalog, access(scopes, lastKnown)).map((t) => t.name);

describe('visibleTools', () => {
  it('shows a tool when the caller holds ANY of its required scopes', () => {
    expect(names(['orders:write'])).toContain('place_order');
    expect(names(['trade'])).toContain('place_order');
    expect(names(['orders:read'])).not.toContain('place_order');
  });

  it('shows tools with no requirement to every caller, including one with no scopes', () => {
    expect(names([])).toEqual(['get_profile', 'no_requirement']);
  });

  it('lets config scopeRules win over _meta: [] makes a tool public, a rule replaces the declared scopes', () => {
    expect(names([])).toContain('get_profile');
    expect(names(['middle-office:read'])).not.toContain('list_deals');
    expect(names(['middle-office:admin'])).toContain('list_deals');
  });

  it("shows the last good answer's scopes when the lookup failed under failureMode open, nothing without one, and nothing under closed", () => {
    expect(names('open', ['orders:read'])).toEqual(['list_orders', 'get_profile', 'no_requirement']);
    expect(names('open')).toEqual([]);
    expect(names('closed', ['orders:read'])).toEqual([]);
  });

  it("treats an unchecked credential (no scope source) as the upstream's: everything if it receives the credential, public tools if not", () => {
    expect(visibleTools(catalog, accessFor({ kind: 'unchecked' }, config.upstreams))).toHaveLength(5);
    expect(visibleTools(catalog, accessFor({ kind: 'unchecked' }, [{ ...upstream, forwardCredentials: false }])).map((t) => t.name)).toEqual([
      'get_profile',
      'no_requirement',
    ]);
  });

  it('keys visibility by the scopes the catalogue uses, so irrelevant scopes share an entry', () => {
    expect(visibilityKey(catalog, access(['orders:read', 'unrelated']))).toBe(visibilityKey(catalog, access(['orders:read'])));
    expect(visibilityKey(catalog, access([]))).not.toBe(visibilityKey(catalog, access('open')));
    expect(visibilityKey(catalog, access('closed', ['orders:read']))).not.toBe(visibilityKey(catalog, access('open', ['orders:read'])));
    expect(visibilityKey(catalog, access('open', ['trade']))).not.toBe(visibilityKey(catalog, access('open', ['orders:read'])));
  });

  it('precomputes the read-only flag and category per tool', () => {
    expect(catalog.byName.get('place_order')).toMatchObject({ readOnly: false, category: 'test', requiredScopes: ['orders:write', 'trade'] });
    expect(catalog.byName.get('list_orders')?.readOnly).toBe(true);
  });
});
