/**
 * The authentication keys of the configuration (issue 13): `anonymous`, `credentials.apiKeys` (the
 * config's own credential source: secrets from the environment, kept as keyed digests),
 * `scopes.failureMode` (default closed) with its per-upstream override, and `cache.key`. A deployment
 * where nobody would check callers does not start unless it says `anonymous: true`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { ConfigError, loadConfig } from '../../../config/load.ts';
import { startGateway } from '../../../gateway/gateway.ts';
import { rawRequest, rpcMessage, expectChallenge } from '../../helpers/enforcement.ts';
import { rpc } from '../../helpers/raw-mcp.ts';
import { startFakeUpstream } from '../../fixtures/fake-upstream.ts';
import { LogCapture } from '../../helpers/log-capture.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const yamlFile = (text: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'gateway-config-auth-')), 'config.yaml');
  writeFileSync(path, text);
  return path;
};
const errorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

const STDIO = 'upstreams:\n  - name: files\n    command: node\n    args: [server.js]\n';

describe('scopes.failureMode', () => {
  it('defaults to closed, and each upstream inherits it unless it overrides it', () => {
    const config = loadConfig({
      env: {},
      path: yamlFile(
        'upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n  - name: b\n    url: http://127.0.0.1:2/mcp\n    scopes: { failureMode: open }\nscopes:\n  endpoint: http://127.0.0.1:3/v1/me\n',
      ),
    });
    expect(config.scopes.failureMode).toBe('closed');
    expect(config.upstreams.map((u) => u.scopes.failureMode)).toEqual(['closed', 'open']);
  });

  it('is open in config/cpzai.yaml (the platform enforces every call itself)', () => {
    const config = loadConfig({ env: {}, path: join(root, 'config/cpzai.yaml') });
    expect(config.scopes.failureMode).toBe('open');
    expect(config.upstreams[0]!.scopes.failureMode).toBe('open');
  });

  it('takes only open or closed, from the file or GATEWAY_SCOPES_FAILURE_MODE', () => {
    expect(errorOf(() => loadConfig({ env: { GATEWAY_SCOPES_FAILURE_MODE: 'maybe' }, path: join(root, 'config/cpzai.yaml') })).message).toMatch(
      /scopes\.failureMode: must be one of open, closed/,
    );
    expect(loadConfig({ env: { GATEWAY_SCOPES_FAILURE_MODE: 'closed' }, path: join(root, 'config/cpzai.yaml') }).upstreams[0]!.scopes.failureMode).toBe(
      'closed',
    );
  });
});

describe('anonymous', () => {
  it('is required when an upstream receives no caller credential and no scope source is configured', () => {
    const error = errorOf(() => loadConfig({ env: {}, path: yamlFile(STDIO) }));
    expect(error.keyPath).toBe('anonymous');
    expect(error.message).toMatch(/upstreams\[0\] \(files\)/);
    expect(loadConfig({ env: {}, path: yamlFile(`${STDIO}anonymous: true\n`) }).anonymous).toBe(true);
    const forwarding = errorOf(() =>
      loadConfig({ env: {}, path: yamlFile('upstreams:\n  - name: h\n    url: http://127.0.0.1:1/mcp\n    forwardCredentials: false\n') }),
    );
    expect(forwarding.keyPath).toBe('anonymous');
  });

  it("is not required with a scope source (an endpoint, API keys, an external identity provider), nor when every upstream gets the caller's credential", () => {
    expect(loadConfig({ env: {}, path: yamlFile(`${STDIO}scopes:\n  endpoint: http://127.0.0.1:3/v1/me\n`) }).anonymous).toBe(false);
    // The identity provider's tokens carry the scopes (security try-out: it was not counted, which pushed operators to forward credentials).
    expect(
      loadConfig({
        env: {},
        path: yamlFile(
          'upstreams:\n  - name: h\n    url: http://127.0.0.1:1/mcp\n    forwardCredentials: false\noauth:\n  mode: external\n  external: { issuer: https://idp.example.com }\n',
        ),
      }).anonymous,
    ).toBe(false);
    expect(
      loadConfig({ env: { S: 'a-secret' }, path: yamlFile(`${STDIO}credentials:\n  apiKeys:\n    - { name: ops, token: "\${S}", scopes: [files:read] }\n`) })
        .anonymous,
    ).toBe(false);
    expect(loadConfig({ env: {}, path: yamlFile('upstreams:\n  - name: h\n    url: http://127.0.0.1:1/mcp\n') }).anonymous).toBe(false);
  });

  it('serves requests without a credential when true (no scopes: public tools only), and 401s them when false', async () => {
    const fake = await startFakeUpstream({
      tools: [
        { definition: { name: 'open_tool', inputSchema: { type: 'object' } } as Tool },
        { definition: { name: 'member_tool', inputSchema: { type: 'object' } } as Tool },
      ],
    });
    const base = (anonymous: boolean) =>
      loadConfig({
        env: { MEMBER_TOKEN: 'member-token-value' },
        path: yamlFile(
          `anonymous: ${anonymous}\nlisten: { port: 0 }\nupstreams:\n  - name: h\n    url: ${fake.url}\n    forwardCredentials: false\n    scopeRules: { open_tool: [], member_tool: [member] }\ncredentials:\n  apiKeys:\n    - { name: member, token: "\${MEMBER_TOKEN}", scopes: [member] }\nconsole: { adminToken: console-admin-token-value }\n`,
        ),
      });
    const open = await startGateway(base(true), { logDestination: new LogCapture() });
    const shut = await startGateway(base(false), { logDestination: new LogCapture() });
    try {
      const listed = await rpcMessage(await rawRequest(open.url, '/mcp', 'modern', 'tools/list', {}, {}));
      expect((listed.result?.tools as { name: string }[]).map((t) => t.name)).toEqual(['open_tool']);
      const member = await rpcMessage(await rawRequest(open.url, '/mcp', 'modern', 'tools/list', {}, { authorization: 'Bearer member-token-value' }));
      expect((member.result?.tools as { name: string }[]).map((t) => t.name).sort()).toEqual(['member_tool', 'open_tool']);
      await expectChallenge(await rawRequest(open.url, '/mcp', 'modern', 'tools/list', {}, { authorization: 'Bearer wrong' }), open.url, '/mcp', {
        authorization: 'Bearer wrong',
      });
      await expectChallenge(await rawRequest(shut.url, '/mcp', 'modern', 'tools/list', {}, {}), shut.url, '/mcp');
      // A credential header sent twice (node:http keeps the first Authorization and joins other headers; a proxy
      // may read another value): ambiguous, refused in either order, with anonymous callers served or not, whatever else came with it.
      const bearer = (token: string): [string, string] => ['authorization', `Bearer ${token}`];
      for (const [on, headers] of [
        [shut, [bearer('member-token-value'), bearer('wrong')]],
        [shut, [bearer('wrong'), bearer('member-token-value')]],
        [open, [bearer('member-token-value'), bearer('wrong')]],
        [open, [bearer('member-token-value'), ['X-CPZ-Key', 'a'], ['x-cpz-key', 'b'], ['x-cpz-secret', 's']]],
      ] as const) {
        const answer = await withRawHeaders(on.url, headers);
        expect(answer.status, `${JSON.stringify(headers)}: ${answer.body}`).toBe(400);
        expect(JSON.parse(answer.body)).toMatchObject({
          error: { code: -32600, message: expect.stringContaining('a credential header was sent more than once'), data: { kind: 'invalid_request' } },
        });
      }
      expect((await withRawHeaders(shut.url, [bearer('member-token-value')])).status).toBe(200);
      // The console too: its admin token sent twice is refused, whichever comes first; once, it is let in.
      const admin = bearer('console-admin-token-value');
      for (const headers of [
        [admin, bearer('wrong')],
        [bearer('wrong'), admin],
      ]) {
        const answer = await withRawHeaders(shut.url, headers, '/console/api/pins');
        expect(answer.status, answer.body).toBe(400);
        expect(answer.body).toContain('The Authorization header was sent more than once');
      }
      expect((await withRawHeaders(shut.url, [admin], '/console/api/pins')).status).toBe(200);
    } finally {
      await Promise.all([open.close(), shut.close()]);
      await fake.close();
    }
  });
});

/**
 * A 2026-07-28 tools/list with these header lines as they are (repeats included, no key pair of its own), over node:http;
 * to another path than /mcp, a GET with the same header lines.
 */
function withRawHeaders(url: string, extra: readonly (readonly [string, string])[], path = '/mcp'): Promise<{ status: number; body: string }> {
  const { headers: named, body: message } = rpc('modern', 1, 'tools/list');
  const headers = ['host', new URL(url).host];
  for (const [name, value] of Object.entries(named)) if (!name.startsWith('x-cpz-')) headers.push(name, value);
  for (const [name, value] of extra) headers.push(name, value);
  const body = JSON.stringify(message);
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: path === '/mcp' ? 'POST' : 'GET', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(path === '/mcp' ? body : undefined);
  });
}

describe('credentials.apiKeys', () => {
  const KEYS = (entry: string) => `${STDIO}credentials:\n  apiKeys:\n    - ${entry}\n`;

  it('takes a key id with a secret, or a bearer token, each from the environment', () => {
    const config = loadConfig({ env: { K_SECRET: 'from-env' }, path: yamlFile(KEYS('{ name: ops, key: ops-key, secret: "${K_SECRET}", scopes: [a, b] }')) });
    expect(config.credentials.apiKeys).toEqual([{ name: 'ops', key: 'ops-key', secret: 'from-env', scopes: ['a', 'b'] }]);
    expect(errorOf(() => loadConfig({ env: {}, path: yamlFile(KEYS('{ name: ops, key: ops-key, secret: "${K_SECRET}", scopes: [] }')) })).message).toMatch(
      /credentials\.apiKeys\[0\]\.secret: environment variable K_SECRET is not set/,
    );
  });

  it('refuses an entry with neither form, or both, or a key without its secret, and duplicate names or credentials', () => {
    for (const entry of ['{ name: x, scopes: [] }', '{ name: x, key: k, scopes: [] }', '{ name: x, key: k, secret: s, token: t, scopes: [] }']) {
      expect(errorOf(() => loadConfig({ env: {}, path: yamlFile(KEYS(entry)) })).keyPath).toMatch(/^credentials\.apiKeys\[0\]/);
    }
    const twice = `${STDIO}credentials:\n  apiKeys:\n    - { name: x, token: t1, scopes: [] }\n    - { name: x, token: t2, scopes: [] }\n`;
    expect(errorOf(() => loadConfig({ env: {}, path: yamlFile(twice) })).keyPath).toBe('credentials.apiKeys[1].name');
    const same = `${STDIO}credentials:\n  apiKeys:\n    - { name: x, token: t1, scopes: [] }\n    - { name: y, token: t1, scopes: [] }\n`;
    expect(errorOf(() => loadConfig({ env: {}, path: yamlFile(same) })).keyPath).toBe('credentials.apiKeys[1].token');
  });
});

describe('cache.key', () => {
  it('is read from GATEWAY_CACHE_KEY and must be at least 32 characters', () => {
    expect(loadConfig({ env: { GATEWAY_CACHE_KEY: 'k'.repeat(32) }, path: join(root, 'config/cpzai.yaml') }).cache.key).toBe('k'.repeat(32));
    expect(errorOf(() => loadConfig({ env: { GATEWAY_CACHE_KEY: 'short' }, path: join(root, 'config/cpzai.yaml') })).keyPath).toBe('cache.key');
  });
});
