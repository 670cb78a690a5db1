/**
 * Configuration (config/): the YAML file validated against config/schema.json at start-up and every key
 * overridable by a GATEWAY_* variable (the process stopping on a bad value: tests/e2e/gateway/cli-config.test.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config/load.ts';

function yamlFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gateway-config-')), 'config.yaml');
  writeFileSync(path, text);
  return path;
}

describe('loadConfig', () => {
  it('needs no file: config/cpzai.yaml and the schema defaults describe the reference stack', () => {
    const config = loadConfig({ env: {} });
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(config.upstreams[0]).toMatchObject({ name: 'cpzai', url: 'http://127.0.0.1:3001/mcp', metaKey: 'ai.cpz/tool' });
    expect(config.scopes).toMatchObject({ endpoint: 'http://127.0.0.1:3002/v1/me', field: 'scopes', timeoutMs: 3000, ttlMs: 60000 });
    expect(config.cache.store).toBe('memory');
  });

  it('maps GATEWAY_<PATH_IN_UPPER_SNAKE> onto every kind of key (numbers, booleans, lists, array elements)', () => {
    const config = loadConfig({
      env: {
        GATEWAY_SCOPES_TIMEOUT_MS: '1500',
        GATEWAY_CREDENTIALS_BEARER: 'false',
        GATEWAY_SECURITY_ALLOWED_ORIGINS: 'app.example.com, admin.example.com',
        GATEWAY_UPSTREAMS_0_URL: 'http://upstream:9000/mcp',
        GATEWAY_UPSTREAMS_0_SCOPE_RULES: '{"get_profile":[]}',
        REDIS_URL: 'redis://cache:6379',
      },
    });
    expect(config.scopes.timeoutMs).toBe(1500);
    expect(config.credentials.bearer).toBe(false);
    expect(config.security.allowedOrigins).toEqual(['app.example.com', 'admin.example.com']);
    expect(config.upstreams[0]).toMatchObject({ name: 'cpzai', url: 'http://upstream:9000/mcp', scopeRules: { get_profile: [] } });
    expect(config.cache).toMatchObject({ store: 'redis', redisUrl: 'redis://cache:6379' });
  });

  it('oauth: builtin in the reference stack; GATEWAY_TOKEN_SECRET is oauth.tokenSecret; short secrets and external without an issuer are refused', () => {
    const reference = loadConfig({ env: {} });
    expect(reference.oauth).toMatchObject({ mode: 'builtin', accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 2592000 });
    expect(reference.oauth.scopes).toHaveLength(18);
    // A list of scalars replaces the file's list (it used to keep the file's tail past the override's length).
    expect(loadConfig({ env: {}, overrides: { oauth: { scopes: ['a:read'] } } }).oauth.scopes).toEqual(['a:read']);
    expect(loadConfig({ env: { GATEWAY_TOKEN_SECRET: 's'.repeat(32) } }).oauth.tokenSecret).toBe('s'.repeat(32));
    expect(() => loadConfig({ env: { GATEWAY_TOKEN_SECRET: 'short' } })).toThrow(
      /oauth\.tokenSecret: must be at least 32 characters \(from GATEWAY_TOKEN_SECRET\)/,
    );
    expect(() => loadConfig({ env: { GATEWAY_OAUTH_MODE: 'external' } })).toThrow(/oauth\.external\.issuer: required when oauth\.mode is external/);
    // Off loopback, with nothing checking Host, a token's audience would be built from the Host a caller sends.
    const externalOn = (host: string, more: Record<string, unknown> = {}) =>
      loadConfig({ env: {}, overrides: { listen: { host }, oauth: { mode: 'external', external: { issuer: 'https://idp.example' } }, ...more } });
    expect(() => externalOn('0.0.0.0')).toThrow(
      /publicUrl: required when oauth\.mode is external and nothing checks the Host header \(listen\.host 0\.0\.0\.0,/,
    );
    expect(() => externalOn('127.0.0.1', { security: { dnsRebindingProtection: false } })).toThrow(/security\.dnsRebindingProtection false/);
    expect(externalOn('0.0.0.0', { publicUrl: 'https://mcp.example' }).publicUrl).toBe('https://mcp.example');
    expect(externalOn('0.0.0.0', { security: { allowedHosts: ['mcp.example'] } }).listen.host).toBe('0.0.0.0');
    expect(
      externalOn('0.0.0.0', { oauth: { mode: 'external', external: { issuer: 'https://idp.example', audience: 'https://mcp.example' } } }).listen.host,
    ).toBe('0.0.0.0');
    expect(externalOn('127.0.0.1').listen.host).toBe('127.0.0.1');
    const external = loadConfig({
      env: {
        GATEWAY_OAUTH_MODE: 'external',
        GATEWAY_OAUTH_EXTERNAL_ISSUER: 'https://idp.example',
        GATEWAY_OAUTH_EXTERNAL_CREDENTIAL_HEADERS: '{"x-cpz-key":"${K}"}',
        K: 'svc',
      },
    });
    expect(external.oauth.external).toMatchObject({
      issuer: 'https://idp.example',
      credentialHeaders: { 'x-cpz-key': 'svc' },
      clockSkewSeconds: 30,
      // A day after its iat, whatever its exp: the longest Okta, Entra ID and Auth0's browser flows issue.
      maxTokenAgeSeconds: 86400,
      insufficientScope: false,
      // RFC 9068 §4: access tokens only, unless the provider's are typ JWT.
      tokenTypes: ['at+jwt'],
    });
    const typed = (env: Record<string, string>) =>
      loadConfig({ env: { GATEWAY_OAUTH_MODE: 'external', GATEWAY_OAUTH_EXTERNAL_ISSUER: 'https://idp.example', ...env } }).oauth.external.tokenTypes;
    expect(typed({ GATEWAY_OAUTH_EXTERNAL_TOKEN_TYPES: 'at+jwt,JWT' })).toEqual(['at+jwt', 'JWT']);
    expect(() => typed({ GATEWAY_OAUTH_EXTERNAL_TOKEN_TYPES: '[]' })).toThrow(/oauth\.external\.tokenTypes: must NOT have fewer than 1 items/);
    // A scopeMap key may hold a space (a group name from an array claim, review): it maps, and is never named as a scope.
    expect(
      loadConfig({
        env: {
          GATEWAY_OAUTH_MODE: 'external',
          GATEWAY_OAUTH_EXTERNAL_ISSUER: 'https://idp.example',
          GATEWAY_OAUTH_EXTERNAL_SCOPE_MAP: '{"MCP Traders":["a"]}',
        },
      }).oauth.external.scopeMap,
    ).toEqual({ 'MCP Traders': ['a'] });
  });

  it('refuses a GATEWAY_ variable that names no key', () => {
    expect(() => loadConfig({ env: { GATEWAY_SCOPES_TIMEOUT: '5' } })).toThrow(
      /GATEWAY_SCOPES_TIMEOUT: this environment variable does not name a configuration key/,
    );
  });

  it('says which variable was meant when only its underscores are off (camelCase keys are split)', () => {
    expect(() => loadConfig({ env: { GATEWAY_SCOPES_FAILUREMODE: 'open' } })).toThrow(
      'GATEWAY_SCOPES_FAILUREMODE: this environment variable does not name a configuration key; did you mean GATEWAY_SCOPES_FAILURE_MODE?',
    );
    expect(() => loadConfig({ env: { GATEWAY_LIMITS_BODYBYTES: '2048' } })).toThrow(/did you mean GATEWAY_LIMITS_BODY_BYTES\?/);
    expect(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_TIMEOUTMS: '5' } })).toThrow(/did you mean GATEWAY_UPSTREAMS_0_TIMEOUT_MS\?/);
    // No key spelt so: no guess, the rule instead.
    expect(() => loadConfig({ env: { GATEWAY_SCOPES_TIMEOUT: '5' } })).toThrow(/a configuration key \(GATEWAY_ and the key path in UPPER_SNAKE case/);
  });

  it('names where a key came from when a rule beyond the schema refuses it', () => {
    // An item's rule broken by a variable names the variable beside the file (try-out: it named the file alone).
    expect(() => loadConfig({ path: 'config/filesystem.yaml', env: { GATEWAY_UPSTREAMS_0_URL: 'http://127.0.0.1:4101/mcp' } })).toThrow(
      'invalid configuration: upstreams[0]: must set exactly one of url or command (in config/filesystem.yaml, with upstreams[0].url from GATEWAY_UPSTREAMS_0_URL)',
    );
    expect(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_URL: 'ftp://x' } })).toThrow(
      'invalid configuration: upstreams[0].url: must be an http(s) URL, got a ftp: URL (from GATEWAY_UPSTREAMS_0_URL)',
    );
    const path = yamlFile('upstreams:\n  - name: a\n    url: ftp://x/mcp\n');
    expect(() => loadConfig({ path, env: {} })).toThrow(`upstreams[0].url: must be an http(s) URL, got a ftp: URL (in ${path})`);
    // A list that opens as JSON and is not: refused, not taken as the one item "[bad" (operator try-out).
    expect(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_ANCHORS: '[bad' } })).toThrow(
      /upstreams\[0\]\.anchors: is not valid JSON \(from GATEWAY_UPSTREAMS_0_ANCHORS\)/,
    );
    // A key within an object a variable set whole is that variable's, not the file's (operator try-out).
    expect(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_SCOPE_RULES: '{"echo":"x"}' } })).toThrow(
      /upstreams\[0\]\.scopeRules\.echo: .*\(from GATEWAY_UPSTREAMS_0_SCOPE_RULES\)/,
    );
    // ...but a key the file has stays the file's, the two being merged (review).
    const rules = yamlFile('upstreams:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n    scopeRules:\n      fromfile: x\n');
    expect(() => loadConfig({ path: rules, env: { GATEWAY_UPSTREAMS_0_SCOPE_RULES: '{"echo":["read"]}' } })).toThrow(
      `upstreams[0].scopeRules.fromfile: must be array (in ${rules})`,
    );
  });

  it('refuses a compact.searchLimit set above compact.maxSearchLimit; the default one follows a lowered maximum', () => {
    expect(() => loadConfig({ env: {}, overrides: { compact: { searchLimit: 5, maxSearchLimit: 2 } } })).toThrow(
      'invalid configuration: compact.searchLimit: 5 is above compact.maxSearchLimit (2), the most a search answers',
    );
    // config/cpzai.yaml sets searchLimit 5; a file that sets none takes the default, which follows.
    expect(
      loadConfig({
        path: yamlFile(''),
        env: { GATEWAY_COMPACT_MAX_SEARCH_LIMIT: '3' },
        overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }] },
      }).compact,
    ).toMatchObject({
      searchLimit: 3,
      maxSearchLimit: 3,
    });
  });

  it('refuses a publicUrl with a query, fragment or user information (an OAuth issuer has none), naming the key', () => {
    for (const url of ['https://x.example/gw?x=1', 'https://x.example/gw#top', 'https://x.example/gw?', 'https://x.example/gw#', 'https://u:p@x.example/gw'])
      expect(() => loadConfig({ env: { GATEWAY_PUBLIC_URL: url } }), url).toThrow(
        /^invalid configuration: publicUrl: must have no query, fragment or user information: it is the OAuth issuer \(RFC 8414 §2\)/,
      );
    expect(() => loadConfig({ env: { GATEWAY_PUBLIC_URL: 'https://x.example/gw' } })).not.toThrow();
  });

  it('refuses metrics.port equal to listen.port, naming metrics.port (the second listener could not bind)', () => {
    expect(() => loadConfig({ env: { GATEWAY_METRICS_PORT: '3000' } })).toThrow(
      /^invalid configuration: metrics\.port: is listen\.port \(3000\): leave it unset to serve \/metrics on the main port/,
    );
    expect(loadConfig({ env: { GATEWAY_METRICS_PORT: '9464' } }).metrics.port).toBe(9464);
  });

  it('refuses an outputSchemas override that is no object schema (MCP: structuredContent is an object)', () => {
    expect(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_OUTPUT_SCHEMAS: '{"get_bars":{"type":"string"}}' } })).toThrow(
      /^invalid configuration: upstreams\[0\]\.outputSchemas\.get_bars: must be a JSON Schema of "type": "object"/,
    );
  });

  it('refuses an unknown key in the file, naming it', () => {
    const path = yamlFile('upstreams:\n  - name: a\n    url: http://x/mcp\n    scopeRule: {}\n');
    expect(() => loadConfig({ path, env: {} })).toThrow(/upstreams\[0\]\.scopeRule: is not a known key; did you mean scopeRules\?/);
    // The misspelt key is the news, not the url-or-command rule it also breaks (try-out: comand).
    const misspelt = yamlFile('anonymous: true\nupstreams:\n  - name: a\n    comand: node\n');
    expect(() => loadConfig({ path: misspelt, env: {} })).toThrow(/upstreams\[0\]\.comand: is not a known key; did you mean command\?/);
    // Nothing near: no guess.
    const far = yamlFile('upstreams:\n  - name: a\n    url: http://x/mcp\n    zzzzzz: 1\n');
    expect(() => loadConfig({ path: far, env: {} })).toThrow(/upstreams\[0\]\.zzzzzz: is not a known key \(in /);
  });

  it('names a misspelt top-level key rather than the required one it hides', () => {
    const path = yamlFile('upstreamz:\n  - url: http://x/mcp\n');
    expect(() => loadConfig({ path, env: {} })).toThrow(/: upstreamz: is not a known key; did you mean upstreams\?/);
    expect(() => loadConfig({ path: yamlFile('upstream:\n  - url: http://x/mcp\n'), env: {} })).toThrow(
      /: upstream: is not a known key; did you mean upstreams\?/,
    );
  });

  it('replaces ${VAR} in upstream headers from the environment and names a missing variable', () => {
    const path = yamlFile('upstreams:\n  - name: a\n    url: http://x/mcp\n    headers:\n      x-service-key: ${SERVICE_KEY}\n');
    expect(loadConfig({ path, env: { SERVICE_KEY: 'k1' } }).upstreams[0]!.headers).toEqual({ 'x-service-key': 'k1' });
    expect(() => loadConfig({ path, env: {} })).toThrow(ConfigError);
    expect(() => loadConfig({ path, env: {} })).toThrow(/upstreams\[0\]\.headers\.x-service-key: environment variable SERVICE_KEY is not set/);
  });

  it('search.embeddings is off by default; set, it takes defaults, and a missing key variable or a non-http URL is named', () => {
    expect(loadConfig({ env: {} }).search.embeddings).toBeUndefined();
    const on = loadConfig({
      env: {
        GATEWAY_SEARCH_EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1',
        GATEWAY_SEARCH_EMBEDDINGS_MODEL: 'nomic-embed-text',
        GATEWAY_SEARCH_EMBEDDINGS_API_KEY_ENV: 'EMBED_KEY',
        EMBED_KEY: 'k',
      },
    });
    expect(on.search.embeddings).toEqual({
      url: 'http://127.0.0.1:11434/v1',
      model: 'nomic-embed-text',
      apiKeyEnv: 'EMBED_KEY',
      timeoutMs: 2000,
      batchSize: 64,
    });
    expect(JSON.stringify(on)).not.toContain('"k"');
    expect(() => loadConfig({ env: {}, overrides: { search: { embeddings: { url: 'http://127.0.0.1:1/v1', model: 'm', apiKeyEnv: 'EMBED_KEY' } } } })).toThrow(
      /search\.embeddings\.apiKeyEnv: environment variable EMBED_KEY is not set/,
    );
    const withPassword = (() => {
      try {
        loadConfig({ env: {}, overrides: { search: { embeddings: { url: 'http://u:embedding-password@127.0.0.1:1/v1', model: 'm' } } } });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(withPassword).toMatch(/search\.embeddings\.url: carries user information .*apiKeyEnv/);
    expect(withPassword).not.toContain('embedding-password');
    expect(() => loadConfig({ env: {}, overrides: { search: { embeddings: { url: 'ftp://127.0.0.1/v1', model: 'm' } } } })).toThrow(
      /search\.embeddings\.url: must be an http\(s\) URL/,
    );
    expect(() => loadConfig({ env: {}, overrides: { search: { embeddings: { url: 'http://127.0.0.1:1/v1' } } } })).toThrow(/search\.embeddings/);
  });

  it('refuses, naming the key, an upstream name containing the naming separator when there are several', () => {
    const path = yamlFile('anonymous: true\nupstreams:\n  - name: a__b\n    url: http://x/mcp\n  - name: fs\n    command: node\n');
    expect(() => loadConfig({ path, env: {} })).toThrow(/upstreams\[0\]\.name: "a__b" contains the naming separator "__"/);
    expect(loadConfig({ path, env: { GATEWAY_NAMING_SEPARATOR: '--' } }).upstreams.map((u) => u.name)).toEqual(['a__b', 'fs']);
  });

  it('refuses, naming the key, two upstream names whose prefixes overlap (a and a_ under "__": a___b would be either), when there are several', () => {
    const pair = (first: string, second: string) =>
      yamlFile(`anonymous: true\nupstreams:\n  - name: ${first}\n    url: http://x/mcp\n  - name: ${second}\n    command: node\n`);
    expect(() => loadConfig({ path: pair('a', 'a_'), env: {} })).toThrow(
      /upstreams\[1\]\.name: "a_" and "a" make ambiguous tool names: "a___x" could be either's/,
    );
    expect(() => loadConfig({ path: pair('a_', 'a'), env: {} })).toThrow(/upstreams\[1\]\.name: "a" and "a_" make ambiguous tool names/);
    // Names that merely share a start are fine, and so is any pair under a separator neither overlaps.
    expect(loadConfig({ path: pair('a', 'ab'), env: {} }).upstreams.map((u) => u.name)).toEqual(['a', 'ab']);
    expect(loadConfig({ path: pair('a', 'a_'), env: { GATEWAY_NAMING_SEPARATOR: '--' } }).upstreams.map((u) => u.name)).toEqual(['a', 'a_']);
  });

  it('refuses, naming the key, an upstream name used twice, or twice but for case', () => {
    const twice = (second: string) => yamlFile(`anonymous: true\nupstreams:\n  - name: alpha\n    url: http://x/mcp\n  - name: ${second}\n    command: node\n`);
    expect(() => loadConfig({ path: twice('alpha'), env: {} })).toThrow(/upstreams\[1\]\.name: duplicate upstream name "alpha"/);
    expect(() => loadConfig({ path: twice('Alpha'), env: {} })).toThrow(/upstreams\[1\]\.name: "Alpha" differs from the upstream name "alpha" only in case/);
    expect(loadConfig({ path: twice('beta'), env: {} }).upstreams.map((u) => u.name)).toEqual(['alpha', 'beta']);
  });
});

describe('anchors', () => {
  it('refuses more anchors than upstreams[].maxAnchors lists up front, naming the key', () => {
    const path = yamlFile('anonymous: true\nupstreams:\n  - name: u\n    url: http://x/mcp\n    anchors: [a, b, c]\n    maxAnchors: 2\n');
    expect(() => loadConfig({ path, env: {} })).toThrow(/upstreams\[0\]\.anchors: 3 anchors, more than upstreams\[0\]\.maxAnchors \(2\) lists up front/);
    expect(loadConfig({ path, env: { GATEWAY_UPSTREAMS_0_MAX_ANCHORS: '3' } }).upstreams[0]!.maxAnchors).toBe(3);
  });
});

describe('input limits, server timeouts and client hints', () => {
  const upstream = { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }] };
  it('default to bounded values and read GATEWAY_* variables', () => {
    const config = loadConfig({
      path: yamlFile('upstreams:\n  - name: u\n    url: http://127.0.0.1:1/mcp\n'),
      env: { GATEWAY_LIMITS_JSON_DEPTH: '32', GATEWAY_SERVER_REQUEST_TIMEOUT_MS: '20000' },
    });
    expect(config.limits).toMatchObject({ jsonDepth: 32, stringLength: 524288, arrayLength: 10000, headerBytes: 16384 });
    expect(config.server).toEqual({ headersTimeoutMs: 10000, requestTimeoutMs: 20000, keepAliveTimeoutMs: 5000, sendTimeoutMs: 60000 });
    expect(config.clientHints).toEqual({ alwaysLoad: true });
  });

  it('refuses a headers timeout longer than the request timeout, naming the key', () => {
    expect(() => loadConfig({ path: yamlFile(''), env: {}, overrides: { ...upstream, server: { headersTimeoutMs: 60000, requestTimeoutMs: 30000 } } })).toThrow(
      /server\.headersTimeoutMs: must not exceed/,
    );
    expect(() => loadConfig({ path: yamlFile(''), env: {}, overrides: { ...upstream, limits: { jsonDepth: 2 } } })).toThrow(ConfigError);
  });
});

describe('cache.redis: how every Redis connection is made', () => {
  it('maps the TLS files, Sentinel and Cluster keys from their variables', () => {
    const config = loadConfig({
      env: {
        REDIS_URL: 'rediss://gw:pw@redis.example:6380/2',
        GATEWAY_CACHE_REDIS_TLS_CA_FILE: '/etc/redis-tls/ca.crt',
        GATEWAY_CACHE_REDIS_TLS_CERT_FILE: '/etc/redis-tls/tls.crt',
        GATEWAY_CACHE_REDIS_TLS_KEY_FILE: '/etc/redis-tls/tls.key',
        GATEWAY_CACHE_REDIS_SENTINEL_MASTER_NAME: 'mymaster',
        GATEWAY_CACHE_REDIS_SENTINEL_NODES: 'sentinel-0:26379,sentinel-1:26379',
        GATEWAY_CACHE_REDIS_CLIENT_NAME: 'gw-eu',
      },
    });
    expect(config.cache).toMatchObject({
      store: 'redis',
      redisUrl: 'rediss://gw:pw@redis.example:6380/2',
      redis: {
        clientName: 'gw-eu',
        tls: { caFile: '/etc/redis-tls/ca.crt', certFile: '/etc/redis-tls/tls.crt', keyFile: '/etc/redis-tls/tls.key' },
        sentinel: { masterName: 'mymaster', nodes: ['sentinel-0:26379', 'sentinel-1:26379'] },
      },
    });
    expect(loadConfig({ env: {} }).cache.redis).toEqual({ clientName: 'mcp-gateway', tls: {} });
  });

  it('refuses what would connect otherwise than the operator meant, naming the key', () => {
    const refused = (env: Record<string, string>) => () => loadConfig({ env });
    expect(refused({ REDIS_URL: 'http://redis:6379' })).toThrow(
      /^invalid configuration: cache\.redisUrl: must match pattern "\^rediss\?:\/\/" \(from REDIS_URL\)$/,
    );
    expect(refused({ REDIS_URL: 'redis://redis:6379', GATEWAY_CACHE_REDIS_TLS_CA_FILE: '/ca.crt' })).toThrow(
      'invalid configuration: cache.redis.tls.caFile: set, but cache.redisUrl is not a rediss:// URL (TLS is off)',
    );
    expect(refused({ REDIS_URL: 'rediss://redis:6379', GATEWAY_CACHE_REDIS_TLS_CERT_FILE: '/tls.crt' })).toThrow(
      'invalid configuration: cache.redis.tls.keyFile: a client certificate needs both certFile and keyFile',
    );
    expect(
      refused({
        REDIS_URL: 'redis://redis:6379',
        GATEWAY_CACHE_REDIS_SENTINEL_MASTER_NAME: 'm',
        GATEWAY_CACHE_REDIS_SENTINEL_NODES: 's:26379',
        GATEWAY_CACHE_REDIS_CLUSTER_NODES: 'redis://other:6379',
      }),
    ).toThrow('invalid configuration: cache.redis.cluster: set cache.redis.sentinel or cache.redis.cluster, not both');
    expect(refused({ REDIS_URL: 'redis://redis:6379', GATEWAY_CACHE_REDIS_SENTINEL_NODES: 'sentinel-0:26379' })).toThrow(
      /^invalid configuration: cache\.redis\.sentinel\.masterName: is required/,
    );
    expect(
      refused({ REDIS_URL: 'redis://redis:6379', GATEWAY_CACHE_REDIS_SENTINEL_MASTER_NAME: 'm', GATEWAY_CACHE_REDIS_SENTINEL_NODES: 'http://s:1' }),
    ).toThrow(/^invalid configuration: cache\.redis\.sentinel\.nodes\[0\]: must match pattern/);
  });
});

describe('loadConfig on values the schema alone lets through or blames elsewhere', () => {
  const refusal = (load: () => unknown) => {
    try {
      load();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('loaded');
  };
  const upstream = 'upstreams:\n  - url: http://127.0.0.1:9/mcp\n';

  it('refuses a number that is not finite (YAML 1e400, .inf), naming its key', () => {
    expect(refusal(() => loadConfig({ path: yamlFile(`${upstream}scopes:\n  ttlMs: 1e400\n`), env: {} }))).toMatch(
      /^invalid configuration: scopes\.ttlMs: must be a finite number \(in .*config\.yaml\)$/,
    );
    expect(refusal(() => loadConfig({ path: yamlFile(`${upstream}limits:\n  bodyBytes: .inf\n`), env: {} }))).toContain(
      'limits.bodyBytes: must be a finite number',
    );
  });

  it('says a file whose top level is not a mapping is that, not that upstreams is missing', () => {
    expect(refusal(() => loadConfig({ path: yamlFile('- a\n- b\n'), env: {} }))).toMatch(/\(root\): the top level must be a mapping of keys, not a list/);
    expect(refusal(() => loadConfig({ path: yamlFile('just words\n'), env: {} }))).toMatch(/not a string/);
  });

  it('names a GATEWAY_<LIST>_<n> variable past the end of its list, and the list length', () => {
    expect(refusal(() => loadConfig({ path: yamlFile(upstream), env: { GATEWAY_UPSTREAMS_5_URL: 'http://x' } }))).toBe(
      'invalid configuration: upstreams[5].url: is past the end of upstreams, which has 1 item(s) before it: number the items from 0 without gaps (from GATEWAY_UPSTREAMS_5_URL)',
    );
  });

  it('blames a key missing from an item only the environment made on those variables, not the file', () => {
    const path = yamlFile('upstreams:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n');
    expect(refusal(() => loadConfig({ path, env: { GATEWAY_UPSTREAMS_1_URL: 'http://127.0.0.1:1/mcp' } }))).toBe(
      `invalid configuration: upstreams[1].name: is required (upstreams[1] is not in ${path}; it comes from GATEWAY_UPSTREAMS_1_URL, which sets no name)`,
    );
    // A key missing from an item of the file is the file's.
    expect(refusal(() => loadConfig({ path: yamlFile(`${upstream}  - name: b\n    url: http://127.0.0.1:8/mcp\n`), env: {} }))).toMatch(
      /upstreams\[0\]\.name: is required \(in /,
    );
  });

  it('reports a YAML error by file, line, column and problem, never quoting the text (a secret with an unclosed quote)', () => {
    const secret = 'nu11-admin-token-0123456789abcdef';
    const cases: [string, RegExp][] = [
      [`upstreams: []\nconsole: { adminToken: "${secret} }\n`, /is not valid YAML: line \d+, column \d+: .*\(MISSING_CHAR\)$/],
      [
        `upstreams: []\nconsole:\n  adminToken: "${secret}\n`,
        /is not valid YAML: line \d+, column \d+: .*\((MISSING_CHAR|MULTILINE_IMPLICIT_KEY|UNEXPECTED_TOKEN)\)$/,
      ],
      [`credentials:\n  apiKeys:\n    - { name: a, key: k, secret: '${secret}\n`, /is not valid YAML: line \d+, column \d+: /],
      [`console: { adminToken: "${secret}\\q" }\n`, /line 1, column \d+: an escape sequence in a double-quoted string is not valid \(BAD_DQ_ESCAPE\)$/],
      [`console:\n  adminToken: |x ${secret}\n`, /line 2, column 16: .*\(UNEXPECTED_TOKEN\)$/],
      [`console:\n  adminToken: ${secret}\n  adminToken: ${secret}\n`, /line 3, column 3: a key appears twice in the same mapping \(DUPLICATE_KEY\)$/],
      // A "billion laughs" document: refused as a configuration error (exit 2), not yaml's own error (SRE try-out).
      [
        `a: &a ["${secret}","x","x","x","x","x","x","x","x"]\n${['b', 'c', 'd', 'e', 'f'].map((n, i) => `${n}: &${n} [${Array(9).fill(`*${'abcde'[i]}`).join(',')}]`).join('\n')}\n`,
        /its aliases expand to too many nodes/,
      ],
    ];
    for (const [text, expected] of cases) {
      const path = yamlFile(text);
      const message = refusal(() => loadConfig({ path, env: {} }));
      expect(message).toContain(`invalid configuration: (file): ${path} is not valid YAML: `);
      expect(message).toMatch(expected);
      expect(message).not.toContain(secret.slice(0, 12));
    }
  });

  it('says a YAML warning (an unknown tag) by line and column without the text, instead of yaml printing the line to stderr', () => {
    const warnings: string[] = [];
    const listener = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    const emit = process.emitWarning;
    process.emitWarning = ((warning: string | Error, type?: string) =>
      listener({ name: String(type), message: String(warning) } as Error)) as typeof process.emitWarning;
    try {
      const path = yamlFile(
        'upstreams: [{ name: a, url: "http://127.0.0.1:9/mcp" }]\nanonymous: true\nconsole: { adminToken: !vault s3cret-admin-token-value }\n',
      );
      expect(loadConfig({ path, env: {} }).console.adminToken).toBe('s3cret-admin-token-value');
      expect(warnings).toEqual([`YAMLWarning: ${path}: line 3, column 24: a tag (!...) that the parser does not know (TAG_RESOLVE_FAILED)`]);
    } finally {
      process.emitWarning = emit;
    }
  });

  it('quotes neither a refused upstream URL nor an OTLP header item: both may hold a credential', () => {
    const url = refusal(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_URL: 'ftp://user:s3cret-pw@example/mcp' } }));
    expect(url).toBe('invalid configuration: upstreams[0].url: must be an http(s) URL, got a ftp: URL (from GATEWAY_UPSTREAMS_0_URL)');
    const notUrl = refusal(() => loadConfig({ env: { GATEWAY_UPSTREAMS_0_URL: '${TOKEN}', TOKEN: 's3cret-token' } }));
    expect(notUrl).toBe('invalid configuration: upstreams[0].url: must be an http(s) URL, got text that is not a URL (from GATEWAY_UPSTREAMS_0_URL)');
    const header = refusal(() => loadConfig({ env: { OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=a,Authorization Bearer s3cret-token' } }));
    expect(header).toBe('invalid configuration: OTEL_EXPORTER_OTLP_HEADERS: item 2 (comma-separated) is not a key=value pair');
  });
});

describe('API key headers and values (try-out)', () => {
  const withKeys =
    (credentials: Record<string, unknown>, env: Record<string, string> = {}) =>
    () =>
      loadConfig({ env, overrides: { credentials: { apiKeys: [{ name: 'x', key: 'k1', secret: 's1-long-secret', scopes: ['a'] }], ...credentials } } });

  it('refuses a key header and a secret header that differ only in case: one header, the secret alone would be the credential', () => {
    expect(withKeys({ keyHeader: 'x-k', secretHeader: 'X-K' })).toThrow(/credentials\.secretHeader: is credentials\.keyHeader \("x-k"\) in another case/);
    expect(withKeys({ keyHeader: 'x-k', secretHeader: 'x-k' })).toThrow(/credentials\.secretHeader: is credentials\.keyHeader \("x-k"\): name two headers/);
    expect(withKeys({ keyHeader: 'x-k', secretHeader: 'x-s' })).not.toThrow();
  });

  it('refuses a key, secret or token a variable made empty, naming it', () => {
    const empty = () =>
      loadConfig({
        env: { ALICE_SECRET: '' },
        overrides: { credentials: { apiKeys: [{ name: 'alice', key: 'k1', secret: '${ALICE_SECRET}', scopes: ['a'] }] } },
      });
    expect(empty).toThrow(/credentials\.apiKeys\[0\]\.secret: is empty/);
    expect(() => loadConfig({ env: {}, overrides: { credentials: { apiKeys: [{ name: 'bob', token: '${NOPE:-}', scopes: ['a'] }] } } })).toThrow(
      /credentials\.apiKeys\[0\]\.token: is empty/,
    );
  });
});

describe('upstream headers from variables (try-out)', () => {
  const withHeader = (value: string, env: Record<string, string>) => () =>
    loadConfig({ env, overrides: { upstreams: [{ name: 'up', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: value } }] } });

  it('refuses a header a variable set to nothing leaves empty, naming it', () => {
    expect(withHeader('Bearer ${UP_TOKEN}', { UP_TOKEN: '' })).toThrow(/upstreams\[0\]\.headers\.Authorization: ends empty once its variables are read/);
    expect(withHeader('${UP_TOKEN}', { UP_TOKEN: '' })).toThrow(/ends empty/);
    expect(withHeader('Bearer ${UP_TOKEN}', { UP_TOKEN: 'abc' })).not.toThrow();
    // An explicit empty default is meant (review).
    expect(withHeader('${TAG:-}', {})).not.toThrow();
  });
});

describe('headers no HTTP request can carry (left open from the try-outs)', () => {
  const withHeaders =
    (headers: Record<string, string>, env: Record<string, string> = {}) =>
    () =>
      loadConfig({ env, overrides: { upstreams: [{ name: 'up', url: 'http://127.0.0.1:9/mcp', headers }] } });

  it('refuses an upstream header name that is not a token, two names differing only in case, and a line break from a variable', () => {
    expect(withHeaders({ 'X Api Key': 'k' })).toThrow(/upstreams\[0\]\.headers\.X Api Key: is not a valid header name/);
    expect(withHeaders({ Authorization: 'Bearer a', authorization: 'Bearer b' })).toThrow(
      /upstreams\[0\]\.headers\.authorization: is the header Authorization in another case/,
    );
    const newline = withHeaders({ Authorization: 'Bearer ${UP_TOKEN}' }, { UP_TOKEN: 's3cr3t\nX-Injected: 1' });
    expect(newline).toThrow(/upstreams\[0\]\.headers\.Authorization: holds a control character/);
    // An escape sequence and a typographic quote: undici refuses to send either (review).
    expect(withHeaders({ Authorization: 'Bearer ${UP_TOKEN}' }, { UP_TOKEN: 'abc\x1b[0m' })).toThrow(/holds a control character/);
    expect(withHeaders({ 'X-Note': 'it’s' })).toThrow(/beyond Latin-1/);
    expect(withHeaders({ 'X-Note': 'café' })).not.toThrow();
    expect(newline).not.toThrow(/s3cr3t/);
    expect(withHeaders({ 'X-Api-Key': 'k', Authorization: 'Bearer ${UP_TOKEN}' }, { UP_TOKEN: 'abc' })).not.toThrow();
  });

  it('refuses a credential header name with a space and an API key credential HTTP would trim', () => {
    const load = (credentials: object) => () =>
      loadConfig({ env: { K: ' s3cr3t-secret ' }, overrides: { upstreams: [{ name: 'up', url: 'http://127.0.0.1:9/mcp' }], credentials } });
    expect(load({ keyHeader: 'x cpz key' })).toThrow(/credentials\.keyHeader: is not a valid header name/);
    expect(load({ apiKeys: [{ name: 'a', key: 'k1', secret: '${K}', scopes: ['x'] }] })).toThrow(
      /credentials\.apiKeys\[0\]\.secret: starts or ends with whitespace/,
    );
    expect(load({ apiKeys: [{ name: 'a', key: 'k1', secret: '${K}', scopes: ['x'] }] })).not.toThrow(/s3cr3t/);
    expect(load({ apiKeys: [{ name: 'a', token: '   ', scopes: ['x'] }] })).toThrow(/apiKeys\[0\]\.token: starts or ends with whitespace/);
    expect(load({ apiKeys: [{ name: 'a', key: 'k1', secret: 'price-in-€-0123', scopes: ['x'] }] })).toThrow(/apiKeys\[0\]\.secret: .*beyond Latin-1/);
    expect(load({ apiKeys: [{ name: 'a', key: 'k1', secret: 'a-secret-value', scopes: ['x'] }] })).not.toThrow();
  });
});

describe('scopes.endpoint (SRE try-out)', () => {
  it('refuses user information and a scheme fetch cannot ask, never quoting the URL', () => {
    const load = (endpoint: string) => () =>
      loadConfig({ env: {}, overrides: { upstreams: [{ name: 'up', url: 'http://127.0.0.1:9/mcp' }], scopes: { endpoint } } });
    expect(load('http://svc:S3CR3T-PW@127.0.0.1:9/v1/me')).toThrow(/scopes\.endpoint: carries user information/);
    expect(load('http://svc:S3CR3T-PW@127.0.0.1:9/v1/me')).not.toThrow(/S3CR3T/);
    expect(load('ftp://127.0.0.1/v1/me')).toThrow(/scopes\.endpoint: must be an http\(s\) URL, got a ftp: URL/);
    expect(load('https://platform.example/v1/me')).not.toThrow();
  });
});

describe('a list or mapping variable that is JSON with a mistake (try-out)', () => {
  it('is refused as not valid JSON, naming the variable and where, never quoting the value', () => {
    const load = (name: string, value: string) => () =>
      loadConfig({ env: { [name]: value }, overrides: { upstreams: [{ name: 'up', url: 'http://127.0.0.1:9/mcp' }] } });
    expect(load('GATEWAY_UPSTREAMS_0_HEADERS', '{"Authorization": "Bearer s3cr3t')).toThrow(
      /upstreams\[0\]\.headers: is not valid JSON \(from GATEWAY_UPSTREAMS_0_HEADERS\): at position \d+$/,
    );
    expect(load('GATEWAY_UPSTREAMS_0_HEADERS', '{"Authorization": "Bearer s3cr3t')).not.toThrow(/s3cr3t/);
    expect(load('GATEWAY_SECURITY_ALLOWED_HOSTS', '["a.example", "b')).toThrow(/security\.allowedHosts: is not valid JSON/);
    expect(load('GATEWAY_SECURITY_ALLOWED_HOSTS', 'a.example, b.example')).not.toThrow();
  });
});

describe('secrets written as ${VAR} in the file (try-out)', () => {
  it('reads the console admin token and the OAuth secrets from the environment, bounds checked on the value', () => {
    const path = yamlFile(
      'upstreams:\n  - name: a\n    url: http://127.0.0.1:9/mcp\nanonymous: true\nconsole:\n  adminToken: "${CONSOLE_ADMIN_TOKEN_VALUE}"\noauth:\n  tokenSecret: "${SEALING_SECRET_VALUE_LONG_ENOUGH_NAME}"\n',
    );
    const config = loadConfig({
      path,
      env: { CONSOLE_ADMIN_TOKEN_VALUE: 'console-admin-token-xyz-123', SEALING_SECRET_VALUE_LONG_ENOUGH_NAME: 's'.repeat(40) },
    });
    expect(config.console.adminToken).toBe('console-admin-token-xyz-123');
    expect(config.oauth.tokenSecret).toBe('s'.repeat(40));
    expect(() => loadConfig({ path, env: { CONSOLE_ADMIN_TOKEN_VALUE: 'short', SEALING_SECRET_VALUE_LONG_ENOUGH_NAME: 's'.repeat(40) } })).toThrow(
      /console\.adminToken: must be at least 16 characters once its variables are read/,
    );
    expect(() => loadConfig({ path, env: { SEALING_SECRET_VALUE_LONG_ENOUGH_NAME: 's'.repeat(40) } })).toThrow(
      /console\.adminToken: environment variable CONSOLE_ADMIN_TOKEN_VALUE is not set/,
    );
  });

  it('takes a variable name shorter than the bound, and reads cache.key from one too (SRE try-out)', () => {
    const path = yamlFile(
      'upstreams:\n  - name: a\n    url: http://127.0.0.1:9/mcp\nanonymous: true\nconsole:\n  adminToken: "${TOK}"\ncache:\n  key: "${CK}"\n',
    );
    const config = loadConfig({ path, env: { TOK: 'console-admin-token-xyz-123', CK: 'k'.repeat(32) } });
    expect(config.console.adminToken).toBe('console-admin-token-xyz-123');
    expect(config.cache.key).toBe('k'.repeat(32));
    // The key being rotated out too (review: it stayed the text as written, so a rotation found nothing).
    const rotating = yamlFile('upstreams:\n  - name: a\n    url: http://127.0.0.1:9/mcp\nanonymous: true\ncache:\n  keyPrevious: "${PK}"\n');
    expect(loadConfig({ path: rotating, env: { PK: 'p'.repeat(32) } }).cache.keyPrevious).toBe('p'.repeat(32));
    expect(() => loadConfig({ path, env: { TOK: 'console-admin-token-xyz-123', CK: 'short' } })).toThrow(
      /cache\.key: must be at least 32 characters once its variables are read/,
    );
    expect(() => loadConfig({ env: {}, overrides: { upstreams: [{ name: 'a', url: 'http://127.0.0.1:9/mcp' }], console: { adminToken: 'short' } } })).toThrow(
      /console\.adminToken: must be at least 16 characters( \(in [^)]*\))?$/,
    );
  });
});
