/** Extensions across upstreams and the MCP Apps app-only rule (gateway/catalog/extensions.ts). */
import { describe, expect, it } from 'vitest';
import { isAppOnlyTool, mergeExtensions, uiResourceOwners, uiResourceUri, UI_EXTENSION } from '../../gateway/catalog/extensions.ts';

describe('mergeExtensions', () => {
  it('advertises what one upstream declares, as it declared it', () => {
    const settings = { mimeTypes: ['text/html;profile=mcp-app'] };
    const merged = mergeExtensions([
      { upstream: 'a', extensions: { [UI_EXTENSION]: settings } },
      { upstream: 'b', extensions: undefined },
    ]);
    expect(merged).toEqual({ extensions: { [UI_EXTENSION]: settings }, conflicts: [] });
    expect(merged.extensions[UI_EXTENSION]).not.toBe(settings);
  });

  it('unions arrays, merges objects key by key and keeps the first value of a conflicting scalar', () => {
    const merged = mergeExtensions([
      {
        upstream: 'a',
        extensions: { [UI_EXTENSION]: { mimeTypes: ['text/html;profile=mcp-app'], limits: { maxBytes: 10 } }, 'com.example/x': { mode: 'fast' } },
      },
      {
        upstream: 'b',
        extensions: {
          [UI_EXTENSION]: { mimeTypes: ['text/html;profile=mcp-app', 'text/uri-list'], limits: { maxBytes: 20, other: true } },
          'com.example/x': { mode: 'slow' },
        },
      },
    ]);
    expect(merged.extensions).toEqual({
      [UI_EXTENSION]: { mimeTypes: ['text/html;profile=mcp-app', 'text/uri-list'], limits: { maxBytes: 10, other: true } },
      'com.example/x': { mode: 'fast' },
    });
    expect(merged.conflicts).toEqual([
      { extension: UI_EXTENSION, path: 'limits.maxBytes', kept: 'a', dropped: 'b' },
      { extension: 'com.example/x', path: 'mode', kept: 'a', dropped: 'b' },
    ]);
  });

  it('leaves out extensions whose methods the gateway does not route (tasks), and treats non-object settings as {}', () => {
    const merged = mergeExtensions([{ upstream: 'a', extensions: { 'io.modelcontextprotocol/tasks': {}, 'com.example/flag': true } }]);
    expect(merged.extensions).toEqual({ 'com.example/flag': {} });
    expect(mergeExtensions([{ upstream: 'a', extensions: { 'io.modelcontextprotocol/tasks': {} } }], new Set()).extensions).toEqual({
      'io.modelcontextprotocol/tasks': {},
    });
  });
});

describe('app-only tools', () => {
  it('are those whose _meta.ui.visibility leaves out "model"', () => {
    expect(isAppOnlyTool({ _meta: { ui: { visibility: ['app'] } } })).toBe(true);
    expect(isAppOnlyTool({ _meta: { ui: { visibility: 'app' } } })).toBe(true);
    expect(isAppOnlyTool({ _meta: { ui: { visibility: [] } } })).toBe(true);
    expect(isAppOnlyTool({ _meta: { ui: { visibility: ['model', 'app'] } } })).toBe(false);
    expect(isAppOnlyTool({ _meta: { ui: { visibility: ['model'] } } })).toBe(false);
    expect(isAppOnlyTool({ _meta: { ui: { resourceUri: 'ui://x/view' } } })).toBe(false);
    expect(isAppOnlyTool({})).toBe(false);
  });

  it('link UI resources to the upstream of the tools naming them; a URI two upstreams name has no owner', () => {
    expect(uiResourceUri({ _meta: { 'ui/resourceUri': 'ui://old/view' } })).toBe('ui://old/view');
    expect(uiResourceUri({ _meta: { ui: { resourceUri: 'https://not-ui' } } })).toBeUndefined();
    const owners = uiResourceOwners([
      { upstream: 'a', definition: { _meta: { ui: { resourceUri: 'ui://a/view' } } } },
      { upstream: 'a', definition: { _meta: { ui: { resourceUri: 'ui://a/view' } } } },
      { upstream: 'a', definition: { _meta: { ui: { resourceUri: 'ui://shared' } } } },
      { upstream: 'b', definition: { _meta: { ui: { resourceUri: 'ui://shared' } } } },
      { upstream: 'b', definition: {} },
    ]);
    expect([...owners]).toEqual([['ui://a/view', 'a']]);
  });
});
