import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { REDACTED, configuredSecrets, redactArgs, redactConfig, redactText, redactUrl, withoutSecrets, withoutSecretsDeep } from '../../gateway/obs/redact.ts';

describe('what the console shows of the configuration', () => {
  it('strips user info and query strings from URLs, and leaves other text alone', () => {
    expect(redactUrl('redis://:pw@cache:6379/0')).toBe(`redis://${REDACTED}@cache:6379/0`);
    expect(redactUrl('https://ops:hunter2@api.example.com/mcp?api_key=s3cr3t#x')).toBe(`https://${REDACTED}@api.example.com/mcp?${REDACTED}`);
    expect(redactUrl('http://127.0.0.1:3001/mcp')).toBe('http://127.0.0.1:3001/mcp');
    expect(redactUrl('x-cpz-key')).toBe('x-cpz-key');
    expect(redactText('fetch failed for https://u:p@h.example/mcp?token=t (ECONNREFUSED)')).toBe(
      `fetch failed for https://${REDACTED}@h.example/mcp?${REDACTED} (ECONNREFUSED)`,
    );
  });

  it('keeps the names of secret flags on a command line, not their values', () => {
    expect(redactArgs(['server', '--api-key=abc', '--token', 'xyz', '--verbose', '--db', 'postgres://u:pw@db/x'])).toEqual([
      'server',
      `--api-key=${REDACTED}`,
      '--token',
      REDACTED,
      '--verbose',
      '--db',
      `postgres://${REDACTED}@db/x`,
    ]);
    // A credential with no flag naming it goes too; paths, names and short values stay.
    expect(
      redactArgs([
        'sk-ant-api03-ARGSECRET8',
        'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
        'Zx9Kq2mLp4Rt7Vw1Yb3Nc5Hd8Jf0Gs6A',
        'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
        '/tmp',
        'streamableHttp',
        'server-everything',
        '3101',
      ]),
    ).toEqual([
      REDACTED,
      REDACTED,
      REDACTED,
      'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
      '/tmp',
      'streamableHttp',
      'server-everything',
      '3101',
    ]);
    // Inside an environment-style or header argument, and a JWT (review).
    expect(
      redactArgs([
        'API_KEY=plain-value',
        'MODE=sk-live-abcdef',
        'LEVEL=debug',
        '--header',
        'Authorization: Bearer abc.def',
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig',
        'DATABASE_URL=postgres://u:pw@h/db',
        'X-API-Key: abc123',
        // Harmless ones stay: names holding key or token inside a word, prose.
        'MAX_TOKENS=4096',
        'KEYBOARD=us',
        'basic usage',
      ]),
    ).toEqual([
      `API_KEY=${REDACTED}`,
      `MODE=${REDACTED}`,
      'LEVEL=debug',
      '--header',
      `Authorization: Bearer ${REDACTED}`,
      REDACTED,
      `DATABASE_URL=postgres://${REDACTED}@h/db`,
      `X-API-Key: ${REDACTED}`,
      'MAX_TOKENS=4096',
      'KEYBOARD=us',
      'basic usage',
    ]);
  });

  it('replaces every secret of a loaded configuration, and nothing that is not one', () => {
    const config = loadConfig({
      env: { GATEWAY_TOKEN_SECRET: 'token-secret-0123456789-0123456789' },
      overrides: {
        cache: { key: 'cache-key-0123456789-0123456789-0123456789', redisUrl: 'redis://:redis-pw@127.0.0.1:6379' },
        audit: { digestKey: 'digest-key-0123456789-0123456789-0123456789' },
        console: { adminToken: 'admin-token-0123456789-0123456789-0123' },
        credentials: {
          apiKeys: [
            { name: 'ops', key: 'key-id-1', secret: 'key-secret-1', scopes: [] },
            { name: 'bot', token: 'api-token-1', scopes: [] },
          ],
        },
        oauth: { mode: 'builtin', initialAccessToken: 'initial-token-0123-0123456789-0123456789' },
        scopes: { endpoint: 'https://platform.example/v1/me?key=scope-key' },
        tracing: { headers: { authorization: 'Bearer platform-token' } },
        upstreams: [
          { name: 'a', url: 'https://api.example.com/mcp?api_key=s3cr3t', headers: { 'x-api-key': 'header-secret' } },
          { name: 'b', command: 'node', args: ['server.js', '--password=pw-arg'], env: { API_KEY: 'env-secret' } },
        ],
      },
    });
    const shown = JSON.stringify(redactConfig(config));
    for (const secret of [
      'token-secret-0123456789',
      'cache-key-0123456789-0123456789-0123456789',
      'redis-pw',
      'digest-key-0123456789-0123456789-0123456789',
      'admin-token-0123456789-0123456789-0123',
      'key-secret-1',
      'api-token-1',
      'initial-token-0123-0123456789-0123456789',
      'scope-key',
      'platform-token',
      's3cr3t',
      'header-secret',
      'pw-arg',
      'env-secret',
    ])
      expect(shown).not.toContain(secret);
    const redacted = redactConfig(config) as typeof config;
    expect(redacted.credentials.keyHeader).toBe('x-cpz-key');
    expect(redacted.credentials.secretHeader).toBe('x-cpz-secret');
    expect(redacted.credentials.apiKeys[0]).toMatchObject({ name: 'ops', key: REDACTED, secret: REDACTED });
    expect(redacted.upstreams[0]!.url).toBe(`https://api.example.com/mcp?${REDACTED}`);
    expect(redacted.upstreams[1]!.env).toEqual({ API_KEY: REDACTED });
    expect(redacted.oauth.accessTokenTtlSeconds).toBe(config.oauth.accessTokenTtlSeconds);
  });

  it('hides what a review found shown: a rotated-out secret, JSON settings, password flags, user:password, cookies, a token in a URL path', () => {
    expect(redactConfig({ oauth: { tokenSecret: 'now-secret', tokenSecretPrevious: 'old-secret' } })).toEqual({
      oauth: { tokenSecret: REDACTED, tokenSecretPrevious: REDACTED },
    });
    const shown = redactArgs([
      '--config',
      '{"apiKey":"json-key-1","region":"eu"}',
      '--config={"token":"json-token-2"}',
      'DB_PASS=hunter2',
      '--passwd',
      'hunter3',
      '-u',
      'admin:hunter4',
      '--auth',
      'admin:hunter5',
      '--header',
      'Cookie: session=cookie-6',
      'https://mcp.example.com/s/Zx9Kq2mLp4Rt7Vw1Yb3Nc5Hd8Jf0Gs6A/mcp',
      // Harmless ones stay.
      '--port',
      '3101',
      'BYPASS_CACHE=1',
    ]);
    for (const secret of ['json-key-1', 'json-token-2', 'hunter2', 'hunter3', 'hunter4', 'hunter5', 'cookie-6', 'Zx9Kq2mLp4Rt7Vw1Yb3Nc5Hd8Jf0Gs6A'])
      expect(shown.join(' ')).not.toContain(secret);
    expect(shown).toContain('{"apiKey":"[redacted]","region":"eu"}');
    expect(shown).toContain('https://mcp.example.com/s/[redacted]/mcp');
    expect(shown.slice(-3)).toEqual(['--port', '3101', 'BYPASS_CACHE=1']);
  });
});

describe("an upstream's configured secrets", () => {
  it('are credential-named header and env values, a URL password, credential query values or token segments, and what the arguments hide; short values are not', () => {
    const secrets = configuredSecrets({
      url: 'https://svc:url-password@mcp.example.com/s/Zx9Kq2mLp4Rt7Vw1Yb3Nc5Hd8Jf0Gs6A/mcp?api_key=query-key-7',
      headers: { 'X-Service-Key': 'wx-SECRET-svc-9f8e7d', Authorization: 'Bearer bearer-token-8', 'X-Flag': 'on' },
      env: { API_TOKEN: 'env-token-9' },
      args: ['server.js', '--password=arg-password-10', '--verbose'],
    });
    for (const secret of [
      'url-password',
      'Zx9Kq2mLp4Rt7Vw1Yb3Nc5Hd8Jf0Gs6A',
      'query-key-7',
      'wx-SECRET-svc-9f8e7d',
      'Bearer bearer-token-8',
      'bearer-token-8',
      'env-token-9',
      'arg-password-10',
    ])
      expect(secrets).toContain(secret);
    expect(secrets).not.toContain('on');
    expect(secrets).not.toContain('--verbose');
    expect(withoutSecrets('backend failed with key wx-SECRET-svc-9f8e7d (Bearer bearer-token-8)', secrets)).toBe(
      `backend failed with key ${REDACTED} (${REDACTED})`,
    );
  });

  it('leave ordinary values alone, so that error text is not mangled, and find what a URL argument carries (review)', () => {
    const secrets = configuredSecrets({
      url: 'https://mcp.example.com/mcp?version=2025-06-18',
      headers: { Accept: 'application/json', 'X-Tenant': 'default' },
      env: { NODE_ENV: 'production', PATH: '/usr/bin', DB_PASSWORD: 'hunter2-db', DATABASE_URL: 'postgres://app:url-pass-1@db/app?sslmode=require' },
      args: ['--max-tokens', '100000', 'postgresql://app:s3cretpw@db.internal:5432/app?sslmode=require&password=query-pass-2'],
    });
    expect(secrets.sort()).toEqual(['hunter2-db', 'query-pass-2', 's3cretpw', 'url-pass-1'].sort());
    expect(withoutSecrets('expected application/json at /usr/bin/x in production; tenant default; version 2025-06-18; 100000 tokens', secrets)).toBe(
      'expected application/json at /usr/bin/x in production; tenant default; version 2025-06-18; 100000 tokens',
    );
    // Names with a credential word inside them, and values that only look long: not secrets (second review).
    const ordinary = configuredSecrets({
      env: {
        AUTH_PROVIDER: 'github',
        KEYBOARD_LAYOUT: 'english',
        DESIGN_SYSTEM: 'material',
        TOKENIZER: 'cl100k_base',
        MODEL: 'claude-3-5-sonnet-20241022',
        AUTH_HEADER_NAME: 'Authorization',
        SESSION_STORE: 'memory',
        PASSTHROUGH: 'enabled',
        MONKEY: 'banana-split',
      },
      args: ['--keyword', 'weather', '--model', 'claude-3-5-sonnet-20241022-extended'],
    });
    expect(ordinary).toEqual([]);
    // Names with a word after the credential word, a scheme-and-credential value, and keys of the usual issued forms (third review).
    const found = configuredSecrets({
      env: { DB_PASSWORD_RO: 'ro-pass-111', API_KEY_PRIMARY: 'primary-key-222', GITHUB_TOKEN_2: 'gh-token-333', SESSION_ID: 'session-444' },
      headers: { AUTH_HEADER: 'Bearer abc123def', Cookie: 'theme=darkmode; sid=abcdef123' },
      url: 'https://mcp.example.com/server/0f8fad5b-d9cb-469f-a165-70867728950e/mcp',
      args: [
        'tvly-abc123def456',
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        '--key2',
        'second-key-555',
        '--token-value',
        'token-value-666',
        'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      ],
    });
    for (const secret of [
      'ro-pass-111',
      'primary-key-222',
      'gh-token-333',
      'session-444',
      'abc123def',
      'abcdef123',
      '0f8fad5b-d9cb-469f-a165-70867728950e',
      'tvly-abc123def456',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'second-key-555',
      'token-value-666',
      'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    ])
      expect(found).toContain(secret);
    expect(found).not.toContain('darkmode');
    expect(redactArgs(['--token-value', 'hunter2pw', '--key2', 'hunter3pw', '--keyword', 'weather', '--token-file', '/run/secrets/t'])).toEqual([
      '--token-value',
      REDACTED,
      '--key2',
      REDACTED,
      '--keyword',
      'weather',
      '--token-file',
      '/run/secrets/t',
    ]);
    // What a credential header carries: a cookie's values, Basic's decoded pair, a percent-encoded password as written.
    const carried = configuredSecrets({
      url: 'https://svc:p%40ss%2Fw0rd!x@mcp.example.com/mcp',
      headers: { Cookie: 'sid=abcdef123; theme=dark', Authorization: `Basic ${Buffer.from('ops:basic-pass-3').toString('base64')}`, PGPASSWORD: 'pg-pass-44' },
    });
    for (const secret of ['abcdef123', 'ops:basic-pass-3', 'basic-pass-3', 'p%40ss%2Fw0rd!x', 'p@ss/w0rd!x', 'pg-pass-44']) expect(carried).toContain(secret);
    expect(withoutSecretsDeep({ 'wx-SECRET-svc-9f8e7d': 'rejected', list: [['k=wx-SECRET-svc-9f8e7d']] }, ['wx-SECRET-svc-9f8e7d'])).toEqual({
      [REDACTED]: 'rejected',
      list: [[`k=${REDACTED}`]],
    });
    expect(redactArgs(['postgresql://app:s3cretpw@db.internal:5432/app?sslmode=require', 'https://api.example/mcp?api_key=abc123secret'])).toEqual([
      `postgresql://${REDACTED}@db.internal:5432/app?${REDACTED}`,
      `https://api.example/mcp?${REDACTED}`,
    ]);
  });
});
