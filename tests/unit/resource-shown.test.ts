/**
 * The consent page names every resource an authorization request asks for (RFC 8707 §2 allows several,
 * and the grant covers each): it named the first only while a token for the second could be redeemed
 * (security try-out).
 */
import { describe, expect, it } from 'vitest';
import { ResourceSet } from '../../gateway/auth/oauth/resource-url.ts';

const set = new ResourceSet('http://127.0.0.1:7700', ['/mcp', '/mcp/compact']);

describe('ResourceSet.shown', () => {
  it('names every requested resource, canonical, each once', () => {
    expect(set.shown(['http://127.0.0.1:7700/mcp', 'HTTP://127.0.0.1:7700/mcp/compact/', 'http://127.0.0.1:7700/mcp'])).toBe(
      'http://127.0.0.1:7700/mcp, http://127.0.0.1:7700/mcp/compact',
    );
  });

  it('names one resource once, however its loopback host is spelt', () => {
    expect(set.shown(['http://localhost:7700/mcp', 'http://127.0.0.1:7700/mcp'])).toBe('http://127.0.0.1:7700/mcp');
  });

  it('names the one resource asked for, else the default', () => {
    expect(set.shown('http://127.0.0.1:7700/mcp/compact')).toBe('http://127.0.0.1:7700/mcp/compact');
    expect(set.shown(undefined)).toBe('http://127.0.0.1:7700/mcp');
  });
});
