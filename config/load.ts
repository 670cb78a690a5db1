import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { type ErrorCode, LineCounter, parseDocument, type YAMLError } from 'yaml';
import schema from './schema.json' with { type: 'json' };
import { checksHost } from './hosts.ts';
import { addressRange } from './trusted-proxies.ts';
import type { GatewayConfig } from './types.ts';

export type { GatewayConfig, UpstreamConfig } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));
/** The configuration used when neither `path` nor GATEWAY_CONFIG names one. */
export const DEFAULT_CONFIG_PATH = resolve(here, 'cpzai.yaml');
const ENV_PREFIX = 'GATEWAY_';

/** A configuration that cannot be used; `keyPath` names the offending key (`scopes.timeoutMs`, `upstreams[0].url`). */
export class ConfigError extends Error {
  constructor(
    readonly keyPath: string,
    detail: string,
  ) {
    super(`invalid configuration: ${keyPath}: ${detail}`);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** YAML file; default: env GATEWAY_CONFIG, else config/cpzai.yaml. */
  path?: string;
  /** Environment to read overrides from; default process.env. Pass `{}` to ignore the environment. */
  env?: Record<string, string | undefined>;
  /** Deep-merged last (tests, programmatic use); arrays are replaced, except element-wise `upstreams` merges. */
  overrides?: DeepPartial<GatewayConfig>;
}

export type DeepPartial<T> = T extends (infer U)[] ? DeepPartial<U>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaNode = {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  $ref?: string;
  additionalProperties?: unknown;
  enum?: unknown[];
};

// `optimize: false`: Ajv's optimiser would use up V8's shared hidden classes in this process (gateway/checks/schema-compiler.ts).
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, code: { optimize: false } });
addFormats.default(ajv);
const validate = ajv.compile<GatewayConfig>(schema);

/**
 * Loads, merges and validates the gateway configuration.
 * Precedence (lowest first): schema defaults, the YAML file, `GATEWAY_*` environment variables
 * (plus `REDIS_URL` and the standard `OTEL_*` tracing variables: {@link otelTracingEnv}), `overrides`. Env mapping: `GATEWAY_` + the key path in UPPER_SNAKE, array
 * indexes as numbers (`GATEWAY_SCOPES_TIMEOUT_MS`, `GATEWAY_UPSTREAMS_0_URL`); numbers and booleans
 * are parsed, objects and arrays take JSON (arrays of strings also take a comma-separated list).
 * @throws ConfigError naming the key path (and the variable or file it came from).
 */
export function loadConfig(options: LoadConfigOptions = {}): GatewayConfig {
  const env = options.env ?? process.env;
  const path = options.path ?? env.GATEWAY_CONFIG ?? DEFAULT_CONFIG_PATH;
  const fromFile = readYaml(path);
  const provenance = new Map<string, string>();
  const merged = mergeDeep(fromFile, envOverrides(env, provenance));
  refuseListGaps(merged, [], provenance);
  const config = exportWhereNamed(mergeDeep(merged, (options.overrides ?? {}) as Json) as Record<string, Json>);
  // JSON Schema's integer and number admit Infinity (YAML's 1e400 or .inf): no limit or TTL means that.
  const infinite = nonFinite(config, []);
  if (infinite)
    throw new ConfigError(
      keyPathOf(infinite),
      `must be a finite number (${sourceOf(infinite, provenance, { path, content: fromFile }, options.overrides ?? {})})`,
    );
  const searchLimitSet = valueAt(config, ['compact', 'searchLimit']) !== undefined;
  if (!validate(config)) throw configErrorFrom(validate.errors ?? [], provenance, { path, content: fromFile }, options.overrides ?? {});
  // compact.maxSearchLimit lowered alone: the default searchLimit follows it (one set above it is refused: finalise).
  const compact = (config as unknown as GatewayConfig).compact;
  if (!searchLimitSet) compact.searchLimit = Math.min(compact.searchLimit, compact.maxSearchLimit);
  let final: GatewayConfig;
  try {
    final = finalise(config as unknown as GatewayConfig, env);
  } catch (error) {
    throw error instanceof ConfigError ? withSource(error, provenance, { path, content: fromFile }) : error;
  }
  // "Beside the config": a relative lock file is read where the configuration file is.
  if (final.pinning.lockFile) final.pinning.lockFile = resolve(dirname(path), final.pinning.lockFile);
  return final;
}

/**
 * `tracing.endpoint` set (in the file, as GATEWAY_TRACING_ENDPOINT or from an OTEL_* endpoint) without
 * `tracing.exporter` turns tracing on: naming where spans go means "send them there". An exporter said
 * outright (none included, or OTEL_SDK_DISABLED) wins.
 */
function exportWhereNamed(config: Record<string, Json>): Record<string, Json> {
  const tracing = config.tracing;
  if (!isObject(tracing) || tracing.endpoint === undefined || tracing.exporter !== undefined) return config;
  return { ...config, tracing: { ...tracing, exporter: 'otlp' } };
}

function readYaml(path: string): Json {
  let text: string;
  let parsed: Json;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('(file)', `cannot read ${path}: ${(error as Error).message}`);
  }
  const lines = new LineCounter();
  // Not yaml's own messages: they quote the offending line (a secret's, when its quote is unclosed) and
  // some interpolate the source (a block scalar header, a tag), and warnings went to stderr the same way.
  const document = parseDocument(text, { prettyErrors: false, logLevel: 'silent', lineCounter: lines });
  const [error] = document.errors;
  if (error) throw new ConfigError('(file)', `${path} is not valid YAML: ${yamlProblem(error, lines)}`);
  for (const warning of document.warnings) process.emitWarning(`${path}: ${yamlProblem(warning, lines)}`, 'YAMLWarning');
  try {
    parsed = document.toJS() as Json;
  } catch (error) {
    // toJS refuses aliases that expand past its bound (a "billion laughs" document): said in our words, as a configuration error.
    if (!(error instanceof ReferenceError) || !/alias count/.test(error.message)) throw error;
    throw new ConfigError('(file)', `${path} is not valid YAML: its aliases expand to too many nodes (a document built to exhaust memory?)`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isObject(parsed))
    throw new ConfigError('(root)', `the top level must be a mapping of keys, not ${Array.isArray(parsed) ? 'a list' : `a ${typeof parsed}`} (in ${path})`);
  return parsed;
}

/**
 * What yaml found wrong, as `line L, column C: <problem> (CODE)`, in words of our own per error code:
 * never yaml's message, which may quote the configuration's text (a secret included).
 */
function yamlProblem(error: YAMLError, lines: LineCounter): string {
  const at = error.pos[0] >= 0 ? lines.linePos(error.pos[0]) : undefined;
  return `${at ? `line ${at.line}, column ${at.col}: ` : ''}${YAML_PROBLEMS[error.code]} (${error.code})`;
}

const YAML_PROBLEMS: Record<ErrorCode, string> = {
  ALIAS_PROPS: 'an alias cannot have an anchor or a tag',
  BAD_ALIAS: 'an alias names no anchor defined before it',
  BAD_COLLECTION_TYPE: 'a tag used on the wrong kind of collection',
  BAD_DIRECTIVE: 'a directive (%...) is not valid',
  BAD_DQ_ESCAPE: 'an escape sequence in a double-quoted string is not valid',
  BAD_INDENT: 'the indentation does not line up with the items around it',
  BAD_PROP_ORDER: 'an anchor or tag is in the wrong place',
  BAD_SCALAR_START: 'a plain value starts with a character it cannot start with (quote the value)',
  BLOCK_AS_IMPLICIT_KEY: 'a block value where a key was expected',
  BLOCK_IN_FLOW: 'a block value inside a flow collection ({...} or [...])',
  DUPLICATE_KEY: 'a key appears twice in the same mapping',
  IMPOSSIBLE: 'the YAML parser reached a state it cannot handle',
  KEY_OVER_1024_CHARS: 'an implicit key is longer than 1024 characters',
  MISSING_CHAR: 'a closing quote, bracket, brace, comma or colon is missing',
  MULTILINE_IMPLICIT_KEY: 'an implicit key spans more than one line (an unclosed quote or bracket?)',
  MULTIPLE_ANCHORS: 'a value has more than one anchor',
  MULTIPLE_DOCS: 'the file holds more than one YAML document',
  MULTIPLE_TAGS: 'a value has more than one tag',
  NON_STRING_KEY: 'a key is not a string',
  RESOURCE_EXHAUSTION: 'aliases expand to too much data',
  TAB_AS_INDENT: 'a tab is used as indentation (YAML indents with spaces)',
  TAG_RESOLVE_FAILED: 'a tag (!...) that the parser does not know',
  UNEXPECTED_TOKEN: 'unexpected text for this position (an unclosed quote or bracket, or a stray character?)',
};

/** The path of the first number that is not finite in `value`, or undefined. */
function nonFinite(value: Json, path: (string | number)[]): (string | number)[] | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = item === undefined ? undefined : nonFinite(item, [...path, i]);
      if (found) return found;
    }
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const found = nonFinite(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * A `GATEWAY_<LIST>_<n>_*` variable past the end of its list would leave gaps before item n, which the
 * schema would blame on the gap: name the variable and the list's length instead.
 * @throws ConfigError naming the variable's key path and the variable.
 */
function refuseListGaps(value: Json, path: (string | number)[], provenance: Map<string, string>): void {
  if (Array.isArray(value)) {
    const gap = value.findIndex((item) => item === undefined);
    if (gap >= 0) {
      const list = keyPathOf(path);
      const [keyPath, variable] = [...provenance].find(([key]) => key.startsWith(`${list}[`)) ?? [list, 'the environment'];
      throw new ConfigError(keyPath, `is past the end of ${list}, which has ${gap} item(s) before it: number the items from 0 without gaps (from ${variable})`);
    }
    value.forEach((item, i) => refuseListGaps(item, [...path, i], provenance));
  } else if (isObject(value)) for (const [key, item] of Object.entries(value)) refuseListGaps(item, [...path, key], provenance);
}

/**
 * Applies the derived rules the schema cannot express: `${VAR}` interpolation in upstream url, command,
 * args, env, cwd and headers, in API key ids, secrets and tokens, in oauth.external.credentialHeaders, `audit.digestKey` and the secrets
 * (console.adminToken, oauth.tokenSecret(Previous), oauth.initialAccessToken, cache.key(Previous)); the URL's syntax after it; unique
 * upstream names free of the naming separator, none of whose `<upstream><separator>` starts another's (so it is an unambiguous prefix);
 * unique API key names and credentials; each upstream's scope failure mode (`scopes.failureMode` unless
 * it sets its own); `anonymous: true` required where nobody would check callers; redis selection
 * (the rate limit store follows the cache store unless set); the embeddings endpoint's scheme and key variable;
 * server.headersTimeoutMs at most server.requestTimeoutMs; compact.searchLimit at most compact.maxSearchLimit; each
 * security.trustedProxies entry an address or CIDR range; headers sent upstream and credential headers sendable (RFC 9110).
 * Its errors name the variable or file the key came from.
 */
function finalise(config: GatewayConfig, env: Record<string, string | undefined>): GatewayConfig {
  if (config.cache.redisUrl && config.cache.store === 'memory' && !env.GATEWAY_CACHE_STORE) config.cache.store = 'redis';
  if (config.cache.store === 'redis' && !config.cache.redisUrl) throw new ConfigError('cache.redisUrl', 'required when cache.store is redis');
  const redis = config.cache.redis;
  if (redis.sentinel && redis.cluster) throw new ConfigError('cache.redis.cluster', 'set cache.redis.sentinel or cache.redis.cluster, not both');
  const tlsFile = (['caFile', 'certFile', 'keyFile'] as const).find((key) => redis.tls[key] !== undefined);
  if (tlsFile && !config.cache.redisUrl?.startsWith('rediss://'))
    throw new ConfigError(`cache.redis.tls.${tlsFile}`, 'set, but cache.redisUrl is not a rediss:// URL (TLS is off)');
  if (Boolean(redis.tls.certFile) !== Boolean(redis.tls.keyFile))
    throw new ConfigError(`cache.redis.tls.${redis.tls.certFile ? 'keyFile' : 'certFile'}`, 'a client certificate needs both certFile and keyFile');
  // Node refuses a headersTimeout longer than requestTimeout (both bound receiving the request).
  if (config.server.headersTimeoutMs > config.server.requestTimeoutMs)
    throw new ConfigError('server.headersTimeoutMs', 'must not exceed server.requestTimeoutMs');
  // search_tools would answer fewer than the default it is configured with, silently.
  if (config.compact.searchLimit > config.compact.maxSearchLimit)
    throw new ConfigError(
      'compact.searchLimit',
      `${config.compact.searchLimit} is above compact.maxSearchLimit (${config.compact.maxSearchLimit}), the most a search answers`,
    );
  // fetch refuses a URL with user information: every lookup failed, the start succeeded, and the password was
  // logged with each failure (SRE try-out). Nothing of it is echoed.
  if (config.scopes.endpoint !== undefined) {
    const endpoint = URL.parse(config.scopes.endpoint);
    if (!endpoint || !/^https?:$/.test(endpoint.protocol))
      throw new ConfigError('scopes.endpoint', `must be an http(s) URL, got ${urlShape(config.scopes.endpoint)}`);
    if (endpoint.username !== '' || endpoint.password !== '')
      throw new ConfigError(
        'scopes.endpoint',
        "carries user information (user:password@), which fetch refuses to send: the endpoint is asked with the caller's own credential headers",
      );
  }
  config.rateLimits.store ??= config.cache.store;
  if (config.rateLimits.store === 'redis' && !config.cache.redisUrl) throw new ConfigError('cache.redisUrl', 'required when rateLimits.store is redis');
  if (config.audit.digestKey !== undefined) {
    config.audit.digestKey = interpolate(config.audit.digestKey, env, 'audit.digestKey');
    if (config.audit.digestKey.length < 16)
      throw new ConfigError('audit.digestKey', 'must be at least 16 characters (a guessable key makes the digests guessable)');
  }
  // The other secrets of the file read `${VAR}` too: `adminToken: "${CONSOLE_TOKEN}"` was the console's password as
  // written, the text a reader of the file sees (try-out). Their bounds are checked here, on the value: the
  // schema's minimum length refused a short `${VAR}` whose value was long enough (SRE try-out).
  const secrets: [string, { get(): string | undefined; set(v: string): void }, number][] = [
    ['cache.key', { get: () => config.cache.key, set: (v) => void (config.cache.key = v) }, 32],
    ['cache.keyPrevious', { get: () => config.cache.keyPrevious, set: (v) => void (config.cache.keyPrevious = v) }, 32],
    ['console.adminToken', { get: () => config.console.adminToken, set: (v) => void (config.console.adminToken = v) }, 16],
    ['oauth.tokenSecret', { get: () => config.oauth.tokenSecret, set: (v) => void (config.oauth.tokenSecret = v) }, 32],
    ['oauth.tokenSecretPrevious', { get: () => config.oauth.tokenSecretPrevious, set: (v) => void (config.oauth.tokenSecretPrevious = v) }, 32],
    ['oauth.initialAccessToken', { get: () => config.oauth.initialAccessToken, set: (v) => void (config.oauth.initialAccessToken = v) }, 32],
  ];
  for (const [keyPath, field, least] of secrets) {
    const written = field.get();
    if (written === undefined) continue;
    const value = interpolate(written, env, keyPath);
    if (value.length < least) throw new ConfigError(keyPath, `must be at least ${least} characters${value === written ? '' : ' once its variables are read'}`);
    field.set(value);
  }
  // By lower case: names that differ only in case prefix tools, metrics and audit lines with look-alikes.
  const names = new Map<string, string>();
  const separator = config.naming.separator;
  config.upstreams.forEach((upstream, index) => {
    const at = `upstreams[${index}]`;
    const earlier = names.get(upstream.name.toLowerCase());
    if (earlier === upstream.name) throw new ConfigError(`${at}.name`, `duplicate upstream name "${upstream.name}"`);
    if (earlier !== undefined)
      throw new ConfigError(`${at}.name`, `"${upstream.name}" differs from the upstream name "${earlier}" only in case (its tools' names would too)`);
    names.set(upstream.name.toLowerCase(), upstream.name);
    if (config.upstreams.length > 1 && upstream.name.includes(separator)) {
      throw new ConfigError(`${at}.name`, `"${upstream.name}" contains the naming separator "${separator}" (naming.separator)`);
    }
    // `a_` beside `a` (separator `__`): `a___b` would be `a_`'s `b` and `a`'s `_b` (review).
    const prefixed =
      config.upstreams.length > 1
        ? config.upstreams
            .slice(0, index)
            .find(
              (other) =>
                `${upstream.name}${separator}`.startsWith(`${other.name}${separator}`) ||
                `${other.name}${separator}`.startsWith(`${upstream.name}${separator}`),
            )
        : undefined;
    if (prefixed)
      throw new ConfigError(
        `${at}.name`,
        `"${upstream.name}" and "${prefixed.name}" make ambiguous tool names: "${upstream.name.length > prefixed.name.length ? upstream.name : prefixed.name}${separator}x" could be either's (naming.separator "${separator}")`,
      );
    const headerTemplates = upstream.headers;
    upstream.headers = interpolateAll(upstream.headers, env, `${at}.headers`);
    // `Authorization: Bearer ${TOKEN}` with TOKEN set to nothing would send a bare `Bearer` (try-out); `${TAG:-}`
    // says an empty value is meant, and is left alone (review).
    for (const [name, value] of Object.entries(upstream.headers))
      if (/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(headerTemplates[name]!) && (value.trim() === '' || /\s$/.test(value)))
        throw new ConfigError(`${at}.headers.${name}`, 'ends empty once its variables are read (a variable set to nothing?)');
    refuseUnsendableHeaders(upstream.headers, `${at}.headers`);
    upstream.env = interpolateAll(upstream.env, env, `${at}.env`);
    upstream.args = upstream.args.map((arg, i) => interpolate(arg, env, `${at}.args[${i}]`));
    if (upstream.command !== undefined) upstream.command = interpolate(upstream.command, env, `${at}.command`);
    if (upstream.cwd !== undefined) upstream.cwd = interpolate(upstream.cwd, env, `${at}.cwd`);
    if (upstream.url !== undefined) {
      upstream.url = interpolate(upstream.url, env, `${at}.url`);
      if (!URL.canParse(upstream.url) || !/^https?:$/.test(new URL(upstream.url).protocol))
        throw new ConfigError(`${at}.url`, `must be an http(s) URL, got ${urlShape(upstream.url)}`);
      // Nothing of it is echoed: the password is a secret.
      const { username, password } = new URL(upstream.url);
      if (username !== '' || password !== '')
        throw new ConfigError(
          `${at}.url`,
          "carries user information (user:password@), which fetch refuses to send (the MCP client's HTTP transport connects with fetch); put the credential in upstreams[].headers instead",
        );
    }
    for (const [tool, schema] of Object.entries(upstream.outputSchemas))
      if ((schema as { type?: unknown }).type !== 'object')
        throw new ConfigError(
          `${at}.outputSchemas.${tool}`,
          'must be a JSON Schema of "type": "object" (an outputSchema describes structuredContent, which is an object: MCP server/tools §Output Schema)',
        );
    if (upstream.anchors.length > upstream.maxAnchors)
      throw new ConfigError(`${at}.anchors`, `${upstream.anchors.length} anchors, more than ${at}.maxAnchors (${upstream.maxAnchors}) lists up front`);
    if (upstream.restart.maxDelayMs < upstream.restart.minDelayMs) throw new ConfigError(`${at}.restart.maxDelayMs`, 'must be at least restart.minDelayMs');
    upstream.scopes.failureMode ??= config.scopes.failureMode;
  });
  config.security.trustedProxies.forEach((entry, i) => {
    const range = addressRange(entry);
    if (!range) throw new ConfigError(`security.trustedProxies[${i}]`, `"${entry}" is neither an IP address nor a CIDR range (such as 10.0.0.0/8 or fd00::/8)`);
    // Trusting every address makes X-Forwarded-For whatever a caller writes: every per-address budget spoofable.
    if (range.prefix === 0)
      throw new ConfigError(
        `security.trustedProxies[${i}]`,
        `"${entry}" trusts every address, so any caller could choose its address with X-Forwarded-For; name your proxies' addresses or ranges`,
      );
  });
  if (config.publicUrl !== undefined) {
    const url = URL.parse(config.publicUrl);
    if (!url || !/^https?:$/.test(url.protocol)) throw new ConfigError('publicUrl', `must be an http(s) URL, got ${urlShape(config.publicUrl)}`);
    // The OAuth issuer and the protected resource's identifier: RFC 8414 §2 allows neither a query nor a fragment in an issuer.
    // A bare `?` or `#` leaves search and hash empty: the text says whether one was written.
    if (/[?#]/.test(config.publicUrl) || url.username || url.password)
      throw new ConfigError(
        'publicUrl',
        'must have no query, fragment or user information: it is the OAuth issuer (RFC 8414 §2) and the resource identifier (RFC 9728)',
      );
  }
  if (config.metrics.port !== undefined && config.metrics.port !== 0 && config.metrics.port === config.listen.port)
    throw new ConfigError('metrics.port', `is listen.port (${config.listen.port}): leave it unset to serve /metrics on the main port, or choose another port`);
  config.oauth.external.credentialHeaders = interpolateAll(config.oauth.external.credentialHeaders, env, 'oauth.external.credentialHeaders');
  refuseUnsendableHeaders(config.oauth.external.credentialHeaders, 'oauth.external.credentialHeaders');
  if (config.oauth.mode === 'external' && !config.oauth.external.issuer) throw new ConfigError('oauth.external.issuer', 'required when oauth.mode is external');
  // The audience a token must name is the endpoint's URL (MCP authorization §Token Audience Binding): from
  // publicUrl, else the request's Host, which only a checked Host makes ours (review: Host: svc-b passed svc-b's tokens);
  // the check is of its name, its port is held to the one the connection reached (http/protected-resource.ts tokenAudience).
  if (config.oauth.mode === 'external' && !config.publicUrl && !config.oauth.external.audience && !checksHost(config))
    throw new ConfigError(
      'publicUrl',
      `required when oauth.mode is external and nothing checks the Host header (listen.host ${config.listen.host}, security.dnsRebindingProtection ${config.security.dnsRebindingProtection ?? 'on for loopback binds only'}, no security.allowedHosts), unless oauth.external.audience or security.allowedHosts is set: a token's audience is checked against the endpoint's URL, which would otherwise be built from the Host header a caller chooses`,
    );
  const embeddings = config.search.embeddings;
  if (embeddings) {
    if (!/^https?:$/.test(new URL(embeddings.url).protocol))
      throw new ConfigError('search.embeddings.url', `must be an http(s) URL, got ${urlShape(embeddings.url)}`);
    // Nothing of it is echoed: the password is a secret (it reached the logs in fetch's refusal).
    const { username, password } = new URL(embeddings.url);
    if (username !== '' || password !== '')
      throw new ConfigError(
        'search.embeddings.url',
        'carries user information (user:password@), which fetch refuses to send; put the key in the environment variable search.embeddings.apiKeyEnv names',
      );
    // The key's name only: the key itself never enters the configuration (which may be logged).
    if (embeddings.apiKeyEnv !== undefined && !env[embeddings.apiKeyEnv])
      throw new ConfigError('search.embeddings.apiKeyEnv', `environment variable ${embeddings.apiKeyEnv} is not set`);
  }
  finaliseApiKeys(config, env);
  requireAnonymousWhereUnchecked(config);
  return config;
}

/**
 * What a refused URL was, without quoting it: a URL can carry a credential (user info, an `api_key`
 * query) and `${VAR}` may have put a secret where the URL was meant to be.
 */
function urlShape(value: string): string {
  const url = URL.parse(value);
  return url ? `a ${url.protocol} URL` : 'text that is not a URL';
}

/** API keys: `${VAR}` in key, secret and token; names and credentials unique (a credential names one key). */
function finaliseApiKeys(config: GatewayConfig, env: Record<string, string | undefined>): void {
  const names = new Set<string>();
  const credentials = new Set<string>();
  const { keyHeader, secretHeader } = config.credentials;
  // HTTP header names ignore case (RFC 9110 §5.1): the two would be one header, and the secret alone would make a credential (try-out).
  if (keyHeader.toLowerCase() === secretHeader.toLowerCase())
    throw new ConfigError(
      'credentials.secretHeader',
      `is credentials.keyHeader ("${keyHeader}")${keyHeader === secretHeader ? '' : ' in another case (header names ignore case)'}: name two headers`,
    );
  for (const [keyPath, name] of [
    ['credentials.keyHeader', keyHeader],
    ['credentials.secretHeader', secretHeader],
  ] as const)
    if (!HEADER_NAME.test(name)) throw new ConfigError(keyPath, "is not a valid header name (letters, digits and !#$%&'*+.^_`|~- only, RFC 9110 §5.6.2)");
  config.credentials.apiKeys.forEach((apiKey, index) => {
    const at = `credentials.apiKeys[${index}]`;
    for (const field of ['key', 'secret', 'token'] as const) {
      if (apiKey[field] !== undefined) apiKey[field] = interpolate(apiKey[field]!, env, `${at}.${field}`);
      // An empty header never makes a credential: the key would answer 401 for ever (a variable set to nothing: try-out).
      if (apiKey[field] === '') throw new ConfigError(`${at}.${field}`, 'is empty (a variable set to nothing?): no request could present it');
      // HTTP strips a value's surrounding whitespace (RFC 9110 §5.5), so such a credential could never match either.
      if (apiKey[field] !== undefined && (apiKey[field] !== apiKey[field]!.trim() || UNSENDABLE_VALUE.test(apiKey[field]!)))
        throw new ConfigError(
          `${at}.${field}`,
          'starts or ends with whitespace, or holds a control character or a character beyond Latin-1, once its variables are read, which a header cannot carry (RFC 9110 §5.5): no request could present it',
        );
    }
    if (names.has(apiKey.name)) throw new ConfigError(`${at}.name`, `duplicate API key name "${apiKey.name}"`);
    names.add(apiKey.name);
    const credential = apiKey.token !== undefined ? `token:${apiKey.token}` : `key:${apiKey.key}`;
    if (credentials.has(credential))
      throw new ConfigError(
        `${at}.${apiKey.token !== undefined ? 'token' : 'key'}`,
        `another API key already uses this ${apiKey.token !== undefined ? 'token' : 'key id'}`,
      );
    credentials.add(credential);
  });
}

/**
 * A deployment where an upstream never sees the caller's credential (stdio, `forwardCredentials: false`)
 * and the gateway has no scope source to check it against would serve anyone: it must say so with
 * `anonymous: true`, or it does not start. Run at load and again by startGateway (a config changed
 * after loading is held to the same rule).
 * @throws ConfigError keyed `anonymous`, naming the upstream.
 */
export function requireAnonymousWhereUnchecked(config: GatewayConfig): void {
  // An external identity provider's tokens carry the scopes: it is a scope source (security try-out: it was not counted).
  if (config.anonymous || config.scopes.endpoint || config.credentials.apiKeys.length > 0 || config.oauth.mode === 'external') return;
  const index = config.upstreams.findIndex((u) => u.command !== undefined || !u.forwardCredentials);
  if (index < 0) return;
  const upstream = config.upstreams[index]!;
  throw new ConfigError(
    'anonymous',
    `upstreams[${index}] (${upstream.name}) receives no caller credential and no scope source is configured (scopes.endpoint, credentials.apiKeys or oauth.mode: external), so nobody would check callers: configure one, or set anonymous: true to serve every caller unauthenticated`,
  );
}

/** RFC 9110 §5.6.2: a header name is a token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * What a header value cannot hold (RFC 9110 §5.5 field-vchar, SP and HTAB, obs-text as Latin-1): control characters
 * and anything above U+00FF, which undici and fetch refuse to send and no client can present (review: an escape
 * sequence or a typographic quote from a variable passed the start, and every request then failed).
 */
const UNSENDABLE_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Headers the gateway would send on every request, checked once their variables are read: names that are
 * RFC 9110 tokens (§5.6.2) and unique regardless of case (§5.1: two spellings are one header, and which value
 * wins depends on the client), values without control characters or characters beyond Latin-1 (§5.5; a variable
 * holding a PEM file, a token with its newline, a typographic quote). Without it the start succeeded and every forwarded request failed (try-out). Never
 * quotes a value: a header's value is usually a credential.
 */
function refuseUnsendableHeaders(headers: Record<string, string>, keyPath: string): void {
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name))
      throw new ConfigError(`${keyPath}.${name}`, "is not a valid header name (letters, digits and !#$%&'*+.^_`|~- only, RFC 9110 §5.6.2)");
    const earlier = seen.get(name.toLowerCase());
    if (earlier !== undefined) throw new ConfigError(`${keyPath}.${name}`, `is the header ${earlier} in another case (header names ignore case): keep one`);
    seen.set(name.toLowerCase(), name);
    if (UNSENDABLE_VALUE.test(value))
      throw new ConfigError(
        `${keyPath}.${name}`,
        'holds a control character (a line break, an escape) or a character beyond Latin-1 once its variables are read, which no HTTP header can carry (RFC 9110 §5.5)',
      );
  }
}

function interpolateAll(values: Record<string, string>, env: Record<string, string | undefined>, keyPath: string): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, interpolate(value, env, `${keyPath}.${key}`)]));
}

/** `${VAR}` from the environment (a missing one is an error naming the key), `${VAR:-default}` with a fallback. */
function interpolate(value: string, env: Record<string, string | undefined>, keyPath: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    if (found !== undefined) return found;
    throw new ConfigError(keyPath, `environment variable ${name} is not set`);
  });
}

function envOverrides(env: Record<string, string | undefined>, provenance: Map<string, string>): Json {
  let out: Json = {};
  const entries = Object.entries(env).filter(([name, value]) => name.startsWith(ENV_PREFIX) && name !== 'GATEWAY_CONFIG' && value !== undefined);
  const aliases = new Map<string, string>();
  if (env.REDIS_URL && !env.GATEWAY_CACHE_REDIS_URL)
    entries.push(['GATEWAY_CACHE_REDIS_URL', env.REDIS_URL]), aliases.set('GATEWAY_CACHE_REDIS_URL', 'REDIS_URL');
  for (const [name, [value, source]] of Object.entries(otelTracingEnv(env))) {
    if (env[name] === undefined) entries.push([name, value]), aliases.set(name, source);
  }
  // GATEWAY_TOKEN_SECRET(_PREVIOUS) are the documented names of oauth.tokenSecret(Previous) (shorter than
  // GATEWAY_OAUTH_TOKEN_SECRET(_PREVIOUS), which also work; the longer name wins when both are set).
  for (const [short, long] of [
    ['GATEWAY_TOKEN_SECRET', 'GATEWAY_OAUTH_TOKEN_SECRET'],
    ['GATEWAY_TOKEN_SECRET_PREVIOUS', 'GATEWAY_OAUTH_TOKEN_SECRET_PREVIOUS'],
  ] as const) {
    const at = entries.findIndex(([name]) => name === short);
    if (at < 0) continue;
    const [, value] = entries.splice(at, 1)[0]!;
    if (env[long]) continue;
    entries.push([long, value]);
    aliases.set(long, short);
  }
  for (const [name, raw] of entries) {
    const tokens = name.slice(ENV_PREFIX.length).split('_').filter(Boolean);
    const found = resolveEnvPath(tokens, schema as SchemaNode);
    if (!found) {
      const meant = looseEnvPath(tokens.join(''), schema as SchemaNode);
      throw new ConfigError(
        name,
        `this environment variable does not name a configuration key${meant ? `; did you mean ${ENV_PREFIX}${meant.join('_')}?` : ''} (${ENV_PREFIX} and the key path in UPPER_SNAKE case, camelCase split: limits.bodyBytes is ${ENV_PREFIX}LIMITS_BODY_BYTES)`,
      );
    }
    provenance.set(keyPathOf(found.path), aliases.get(name) ?? name);
    const value = coerce(raw as string, found.leaf);
    // JSON with a mistake: say so, rather than that a list or a mapping was wanted (try-out: "must be array" for `["a", "x`).
    if (value instanceof JsonMistake) throw new ConfigError(keyPathOf(found.path), `is not valid JSON (from ${aliases.get(name) ?? name}): ${value.message}`);
    out = mergeDeep(out, nest(found.path, value));
  }
  return out;
}

/**
 * The standard OpenTelemetry variables (OpenTelemetry specification: SDK environment variables and
 * OTLP exporter configuration) as `GATEWAY_TRACING_*` values, each with the variable it came from; a
 * `GATEWAY_TRACING_*` variable of the same key wins. Tracing is on (`otlp`) when OTEL_TRACES_EXPORTER
 * says so or an OTLP endpoint is set without it; OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true
 * turn it off. The signal-specific variables win over the general ones; the general endpoint gets
 * `/v1/traces` appended, the traces one is used as it is. Headers are `key=value` pairs, comma-separated
 * (values URL-decoded).
 */
function otelTracingEnv(env: Record<string, string | undefined>): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  const first = (...names: string[]) => names.find((name) => env[name] !== undefined && env[name] !== '');
  const endpointVar = first('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpointVar) {
    const raw = env[endpointVar]!.trim();
    out.GATEWAY_TRACING_ENDPOINT = [endpointVar === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? `${raw.replace(/\/+$/, '')}/v1/traces` : raw, endpointVar];
  }
  const exporterVar = first('OTEL_TRACES_EXPORTER');
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') out.GATEWAY_TRACING_EXPORTER = ['none', 'OTEL_SDK_DISABLED'];
  else if (exporterVar) out.GATEWAY_TRACING_EXPORTER = [env[exporterVar]!.trim(), exporterVar];
  else if (endpointVar) out.GATEWAY_TRACING_EXPORTER = ['otlp', endpointVar];
  const protocolVar = first('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocolVar) out.GATEWAY_TRACING_PROTOCOL = [env[protocolVar]!.trim(), protocolVar];
  const serviceVar = first('OTEL_SERVICE_NAME');
  if (serviceVar) out.GATEWAY_TRACING_SERVICE_NAME = [env[serviceVar]!, serviceVar];
  const timeoutVar = first('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT');
  if (timeoutVar) out.GATEWAY_TRACING_TIMEOUT_MS = [env[timeoutVar]!, timeoutVar];
  const headersVar = first('OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS');
  if (headersVar) {
    const pairs = env[headersVar]!.split(',')
      .map((pair) => pair.trim())
      .filter(Boolean)
      .map((pair, i) => {
        const at = pair.indexOf('=');
        // Not quoted: a header's value is usually a credential (`Authorization Bearer ...` missing its '=').
        if (at <= 0) throw new ConfigError(headersVar, `item ${i + 1} (comma-separated) is not a key=value pair`);
        return [decodeURIComponent(pair.slice(0, at).trim()), decodeURIComponent(pair.slice(at + 1).trim())];
      });
    out.GATEWAY_TRACING_HEADERS = [JSON.stringify(Object.fromEntries(pairs)), headersVar];
  }
  return out;
}

/** Walks the schema matching UPPER_SNAKE tokens to property names, longest property name first. */
function resolveEnvPath(tokens: string[], node: SchemaNode): { path: (string | number)[]; leaf: SchemaNode } | undefined {
  const here = deref(node);
  if (tokens.length === 0) return { path: [], leaf: here };
  if (here.type === 'array' && here.items && /^\d+$/.test(tokens[0]!)) {
    const rest = resolveEnvPath(tokens.slice(1), here.items);
    return rest && { path: [Number(tokens[0]), ...rest.path], leaf: rest.leaf };
  }
  const candidates = Object.entries(here.properties ?? {})
    .map(([key, child]) => ({ key, child, snake: upperSnake(key).split('_') }))
    .sort((a, b) => b.snake.length - a.snake.length);
  for (const { key, child, snake } of candidates) {
    if (snake.every((token, i) => tokens[i] === token)) {
      const rest = resolveEnvPath(tokens.slice(snake.length), child);
      if (rest) return { path: [key, ...rest.path], leaf: rest.leaf };
    }
  }
  return undefined;
}

/**
 * The UPPER_SNAKE tokens of the key path `flat` spells with its underscores dropped or misplaced
 * (`SCOPESFAILUREMODE` for scopes.failureMode), for a refused variable's "did you mean"; undefined when none does.
 */
function looseEnvPath(flat: string, node: SchemaNode): string[] | undefined {
  const here = deref(node);
  if (flat === '') return [];
  const index = here.type === 'array' && here.items ? /^(\d+)(.*)$/.exec(flat) : null;
  if (index) {
    const rest = looseEnvPath(index[2]!, here.items!);
    return rest && [index[1]!, ...rest];
  }
  for (const [key, child] of Object.entries(here.properties ?? {}).sort(([a], [b]) => b.length - a.length)) {
    const snake = upperSnake(key);
    if (!flat.startsWith(snake.replace(/_/g, ''))) continue;
    const rest = looseEnvPath(flat.slice(snake.replace(/_/g, '').length), child);
    if (rest) return [snake, ...rest];
  }
  return undefined;
}

function deref(node: SchemaNode): SchemaNode {
  if (!node.$ref) return node;
  const name = node.$ref.replace('#/definitions/', '');
  return deref((schema.definitions as Record<string, SchemaNode>)[name]!);
}

const upperSnake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** A variable's value that opens as JSON does (`[`, `{`) but does not parse. */
class JsonMistake {
  constructor(readonly message: string) {}
}

function coerce(raw: string, leaf: SchemaNode): Json | JsonMistake {
  const type = leaf.type ?? (leaf.enum ? 'string' : 'object');
  if (type === 'integer' || type === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (type === 'boolean') return raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw;
  if (type === 'array' || type === 'object') {
    try {
      return JSON.parse(raw) as Json;
    } catch (error) {
      // A value opening as JSON does is JSON with a mistake, not a one-item list (`[bad` was the anchor "[bad": try-out).
      // Where, never what: V8's message quotes the text, and a header's value may be a secret.
      if (/^\s*[[{]/.test(raw)) return new JsonMistake(/at position \d+/.exec((error as Error).message)?.[0] ?? 'it ends too early or holds a mistake');
      return type === 'array'
        ? raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : raw;
    }
  }
  return raw;
}

function nest(path: (string | number)[], value: Json): Json {
  return path.reduceRight<Json>((inner, key) => {
    if (typeof key === 'number') {
      const array: Json[] = [];
      array[key] = inner;
      return array;
    }
    return { [key]: inner };
  }, value);
}

/** Objects merge key by key; arrays merge element-wise when the overlay is sparse or holds objects; scalars replace. */
function mergeDeep(base: Json, overlay: Json): Json {
  if (Array.isArray(overlay)) {
    if (!Array.isArray(base)) return overlay.filter((v) => v !== undefined);
    // A dense list of scalars (oauth.scopes, allowedOrigins) replaces the base list, as documented; only a
    // sparse overlay (GATEWAY_UPSTREAMS_1_URL) or one holding objects (upstreams) merges element-wise.
    const sparse = Object.keys(overlay).length !== overlay.length || overlay.includes(undefined as never);
    if (!sparse && !overlay.some((v) => isObject(v))) return overlay;
    const length = Math.max(base.length, overlay.length);
    return Array.from({ length }, (_, i) => (i in overlay && overlay[i] !== undefined ? mergeDeep(base[i] ?? null, overlay[i]!) : base[i]!));
  }
  if (isObject(overlay) && isObject(base)) {
    const out: { [key: string]: Json } = { ...base };
    for (const [key, value] of Object.entries(overlay)) if (value !== undefined) out[key] = key in base ? mergeDeep(base[key]!, value) : value;
    return out;
  }
  return overlay;
}

const isObject = (value: Json): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A rule of {@link finalise} broken: its error says where the key came from, as a schema error does (a variable, or the file). */
function withSource(error: ConfigError, provenance: Map<string, string>, file: ConfigFile): ConfigError {
  const variable = provenance.get(error.keyPath);
  const segments = error.keyPath
    .split(/\.|\[(\d+)\]/)
    .filter((s) => s !== undefined && s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const source = variable ? `from ${variable}` : valueAt(file.content, segments) !== undefined ? `in ${file.path}` : undefined;
  if (!source) return error;
  return new ConfigError(error.keyPath, `${error.message.slice(`invalid configuration: ${error.keyPath}: `.length)} (${source})`);
}

function keyPathOf(path: readonly (string | number)[]): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${key}` : key), '');
}

function configErrorFrom(errors: ErrorObject[], provenance: Map<string, string>, file: ConfigFile, overrides: object): ConfigError {
  // An unknown key first (a misspelt key is also why its real name is "required"), then the most
  // specific error: oneOf/anyOf wrappers say less than what failed inside them.
  const error = errors.find((e) => e.keyword === 'additionalProperties') ?? errors.find((e) => e.keyword !== 'oneOf' && e.keyword !== 'not') ?? errors[0]!;
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
  const params = error.params as Record<string, string>;
  let detail = error.message ?? 'is invalid';
  if (error.keyword === 'required') segments.push(params.missingProperty!), (detail = 'is required');
  if (error.keyword === 'additionalProperties') {
    const meant = closestKey(params.additionalProperty!, knownKeysAt(segments));
    segments.push(params.additionalProperty!);
    detail = `is not a known key${meant ? `; did you mean ${meant}?` : ''}`;
  }
  // A map's key refused (propertyNames): the message says which key.
  if (error.propertyName !== undefined) detail = `has a key ${JSON.stringify(error.propertyName.slice(0, 40))} that ${detail}`;
  if (error.keyword === 'enum') detail = `must be one of ${(params.allowedValues as unknown as unknown[]).join(', ')}`;
  // A misspelt key of an upstream also breaks its url-or-command rule: the key is the news (try-out: comand).
  if (
    error.keyword !== 'additionalProperties' &&
    (errors.some((e) => e.keyword === 'oneOf' && e.instancePath === error.instancePath) || error.keyword === 'not')
  ) {
    detail = /^\/credentials\/apiKeys\//.test(error.instancePath) ? 'must set key and secret, or token (not both)' : 'must set exactly one of url or command';
  }
  return new ConfigError(keyPathOf(segments) || '(root)', `${detail} (${sourceOf(segments, provenance, file, overrides)})`);
}

/** The keys the schema allows in the object at the instance path `segments` (its `$ref`s followed; `[]` where it names none). */
function knownKeysAt(segments: readonly (string | number)[]): string[] {
  let node: SchemaNode | undefined = schema as SchemaNode;
  for (const segment of segments) {
    const here: SchemaNode = deref(node);
    node = typeof segment === 'number' ? here.items : here.properties?.[segment];
    if (!node) return [];
  }
  return Object.keys(deref(node).properties ?? {});
}

/**
 * The known key `key` most likely misspells, for an unknown key's "did you mean": a case or plural slip
 * (`upstream` for `upstreams`), or at most two letters off for a name of five or more (`comand`); else undefined.
 */
function closestKey(key: string, known: readonly string[]): string | undefined {
  const wanted = key.toLowerCase();
  const edits = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const scored = known.map((k) => ({ k, d: edits(wanted, k.toLowerCase()) })).sort((a, b) => a.d - b.d || a.k.localeCompare(b.k));
  const best = scored[0];
  return best && (best.d <= 1 || (best.d <= 2 && wanted.length >= 5)) ? best.k : undefined;
}

/** The configuration file: its path and what it holds. */
type ConfigFile = { path: string; content: Json };

const valueAt = (root: unknown, segments: readonly (string | number)[]): unknown =>
  segments.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], root);

/**
 * Where a key's value came from, as a ConfigError says it: `from GATEWAY_…`, `from overrides` or `in <file>`.
 * A key missing from an item the file does not have was asked for by the variables that made the item
 * (`GATEWAY_UPSTREAMS_1_URL` alone makes an upstream without a name): those are named, not the file.
 */
function sourceOf(segments: readonly (string | number)[], provenance: Map<string, string>, file: ConfigFile, overrides: object): string {
  const fromOverrides = valueAt(overrides, segments) !== undefined;
  const source = provenance.get(keyPathOf(segments) || '(root)') ?? (fromOverrides ? 'overrides' : undefined);
  if (source) return `from ${source}`;
  // A variable that set a whole object or list (`GATEWAY_UPSTREAMS_1_SCOPE_RULES={...}`) holds the keys within it
  // that the file has not (the two are merged: a key the file has stays the file's; try-out, review).
  if (valueAt(file.content, segments) === undefined)
    for (let depth = segments.length - 1; depth > 0; depth -= 1) {
      const variable = provenance.get(keyPathOf(segments.slice(0, depth)));
      if (variable) return `from ${variable}`;
    }
  for (let depth = segments.length - 1; depth > 0; depth -= 1) {
    const item = segments.slice(0, depth);
    if (valueAt(file.content, item) !== undefined) break;
    const prefix = keyPathOf(item);
    const variables = [...provenance].filter(([key]) => key.startsWith(`${prefix}.`) || key.startsWith(`${prefix}[`)).map(([, variable]) => variable);
    if (variables.length > 0)
      return `${prefix} is not in ${file.path}; it comes from ${variables.join(', ')}, which set${variables.length === 1 ? 's' : ''} no ${keyPathOf(segments.slice(depth))}`;
  }
  // An item's rule (an upstream's url-or-command) broken by a variable that set one of its keys: that variable too (try-out).
  const here = keyPathOf(segments);
  const within = here ? [...provenance].filter(([key]) => key.startsWith(`${here}.`) || key.startsWith(`${here}[`)) : [];
  return `in ${file.path}${within.length ? `, with ${within.map(([key, variable]) => `${key} from ${variable}`).join(', ')}` : ''}`;
}
