/**
 * What the console shows of the configuration in force, and what an upstream's error text loses of the
 * secrets its configuration carries ({@link configuredSecrets}): every secret replaced, so the page (and a
 * screenshot of it) can be shared. Rules, applied to the whole tree:
 * - a key named like a secret (`secret`, `token`, `password`, `passphrase`, `credential`, at the end of
 *   its name or before `Previous`, or exactly `key`, `keyPrevious`, `digestKey`, `apiKey`) holds {@link REDACTED};
 * - every value of a `headers`, `env` or `credentialHeaders` map is {@link REDACTED} (an Authorization
 *   header, an API key in the environment of a stdio upstream);
 * - every URL loses its user name, password and query string, and any path segment that looks like a
 *   credential ({@link redactUrl}): `redis://:pw@host`, `https://api.example/mcp?api_key=...`,
 *   `https://mcp.example/s/<token>/mcp`;
 * - a command-line argument `--name=value` whose name looks like a secret keeps the name only, and so
 *   does the argument after such a flag; an argument that is itself a credential ({@link BARE_SECRET}: an
 *   issued key's prefix, a JWT, a long random token) goes, and so does the value of a `NAME=value` argument
 *   whose name or value says secret, the credential of a `Bearer`/`Basic`/`Token` header value, the
 *   password of a `user:password` after `-u`/`--user`, and every secret of a JSON object argument (`--config
 *   '{"apiKey":"..."}'`, as some launchers take their settings) by the rules above.
 */
export const REDACTED = '[redacted]';

const SECRET_KEY = /(secret|token|password|passphrase|credential)s?(Previous)?$|^(key|keyPrevious|digestKey|digestKeyPrevious|apiKey)$/i;
const SECRET_MAPS = new Set(['headers', 'env', 'credentialHeaders']);
/** A flag naming a credential (`--api-key`, `--token-value`, `--key2`, `--pass`; not `--keyword` nor `--token-file`): {@link secretName}. */
const SECRET_FLAG = { test: (flag: string): boolean => /^--?[A-Za-z]/.test(flag) && secretName(flag) };
/**
 * An argument that is a credential by itself, with no flag naming it (a try-out's `sk-ant-api03-...`): the
 * prefixes API keys are issued with (OpenAI and Anthropic `sk-`, Stripe `sk_`/`rk_`, GitHub `ghp_`...,
 * Slack `xox?-`, GitLab `glpat-`, AWS `AKIA`, Google `AIza`), or 24 and more letters, digits, `_` and `-`
 * mixing letters and digits, as random tokens are (a path or a host has `/` or `.`).
 */
const BARE_SECRET =
  /^(?:(?:sk|rk|pk)[-_]|gh[pousr]_|github_pat_|xox[abprs]-|glpat-|AKIA[0-9A-Z]{12}|AIza|eyJ[\w-]+\.[\w-]+\.)|^(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{24,}$/;
/** `NAME=value` (an environment-style argument) whose name says secret, as a word of it (`API_KEY`, not `KEYBOARD` or `MAX_TOKENS`). */
const SECRET_ASSIGNMENT = /^(?:[A-Za-z][\w.-]*[_.-])?(secret|token|passw(or)?d|pass|pwd|passphrase|key|apikey|credential|auth|cookie)=/i;
/** A credential in an HTTP header value given as an argument (`--header "Authorization: Bearer ..."`); the scheme as written, so prose ("basic usage") stays. */
const SCHEMED_CREDENTIAL = /\b(Bearer|Basic|Token)\s+\S+/g;
/** A header given as an argument (`X-API-Key: ...`, `Authorization: ...`) whose name says secret. */
const SECRET_HEADER = /^([\w-]*(?:authorization|key|secret|token|password|credential|cookie)[\w-]*):\s*\S/i;
/** An absolute URL's start (scheme and `//`). */
const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;
/** Words of a name that say it holds a credential (`key2` counts as `key`). */
const SECRET_WORDS = new Set([
  'secret',
  'secrets',
  'token',
  'tokens',
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'credential',
  'credentials',
  'cookie',
  'authorization',
  'signature',
  'sig',
  'apikey',
  'key',
  'auth',
  'sid',
  'session',
]);
/** Last words of a name that, after a credential word, name something about it, not it: `AUTH_PROVIDER`, `TOKEN_FILE`, `SESSION_STORE`. */
const ABOUT_IT = new Set([
  'provider',
  'layout',
  'store',
  'name',
  'url',
  'uri',
  'file',
  'path',
  'type',
  'mode',
  'method',
  'enabled',
  'disabled',
  'size',
  'length',
  'ttl',
  'timeout',
  'header',
  'format',
  'kind',
  'style',
  'system',
  'dir',
  'directory',
  'endpoint',
  'host',
  'port',
  'count',
  'limit',
  'prefix',
  'location',
  'scheme',
  'version',
  'field',
  'param',
  'expiry',
  'expires',
  'lifetime',
  'seconds',
  'ms',
]);

/**
 * Whether a header, environment variable, query parameter or flag (`--token-value`) names a credential: one
 * of its words (split at `-`, `_`, `.`, spaces and camelCase; `PGPASSWORD` read as ending in password) is a
 * credential word, and its last word does not name something about it (review: `AUTH_PROVIDER`,
 * `KEYBOARD_LAYOUT`, `TOKENIZER`, `SESSION_STORE`, `MONKEY` are none; `DB_PASSWORD_RO`, `API_KEY_PRIMARY`,
 * `GITHUB_TOKEN_2`, `SESSION_ID`, `--key2` are).
 */
function secretName(name: string): boolean {
  const words = name
    .replace(/^--?/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[-_.\s]+/)
    .filter(Boolean)
    .map((word) => word.replace(/\d+$/, ''));
  return words.some((w) => SECRET_WORDS.has(w) || /(password|passwd|secret|token|apikey)$/.test(w)) && !ABOUT_IT.has(words.at(-1) ?? '');
}

/** Prefixes API keys are issued with (OpenAI/Anthropic, Stripe, GitHub, Slack, GitLab, Grafana, AWS, Google, Tavily, Svix, Notion, Shopify, Perplexity, Pinecone, Tailscale, Hugging Face, SendGrid) and a JWT's start. */
const KNOWN_PREFIX =
  /^(?:(?:sk|rk|pk)[-_]|gh[pousr]_|github_pat_|xox[abprs]-|glpat-|glsa_|AKIA[0-9A-Z]{12}|AIza|tvly-|whsec_|secret_|shpat_|pplx-|pcsk_|tskey-|hf_|SG\.|eyJ[\w-]+\.[\w-]+\.)/;

/**
 * A value that is a credential by itself, whatever names it: an issued key's prefix or a JWT, or 32 and more
 * token characters that, less their all-lowercase words between separators, still hold 24 mixing letters and
 * digits (a UUID counts; `claude-3-5-sonnet-20241022-extended` or a file path does not: review).
 */
function tokenLike(value: string): boolean {
  if (KNOWN_PREFIX.test(value)) return true;
  if (!/^[\w+/=.-]{32,}$/.test(value)) return false;
  const rest = value
    .split(/[-_./]+/)
    .filter((segment) => !/^[a-z]{4,}$/.test(segment))
    .join('');
  return rest.length >= 24 && /\d/.test(rest) && /[A-Za-z]/.test(rest);
}
/** A flag whose next argument is `user:password` (curl's `-u`). */
const USER_FLAG = /^(-u|--user)$/;

/**
 * `value` without the credentials a URL can carry: user info and query string replaced by
 * {@link REDACTED} (RFC 3986 §3.2.1 says user info SHOULD NOT hold a password; many do anyway), the
 * fragment dropped. Text that is not an absolute URL is returned as it is.
 */
export function redactUrl(value: string): string {
  if (!URL_START.test(value)) return value;
  const url = URL.parse(value);
  if (!url) return value;
  const userinfo = url.username || url.password ? `${REDACTED}@` : '';
  const query = url.search ? `?${REDACTED}` : '';
  return `${url.protocol}//${userinfo}${url.host}${withoutSecretSegments(url.pathname)}${query}`;
}

/**
 * A URL path with each segment that is a credential by itself ({@link BARE_SECRET}: a token in the path, as some
 * hosted MCP servers and collectors take theirs) replaced by {@link REDACTED}; the log's URLs use it too (obs/log.ts).
 */
export function withoutSecretSegments(pathname: string): string {
  return pathname
    .split('/')
    .map((segment) => (BARE_SECRET.test(decodeSegment(segment)) ? REDACTED : segment))
    .join('/');
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A command line (stdio upstream) with its secret-looking flags' values replaced and every URL redacted. */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, i) => {
    const json = jsonObjectArgument(arg);
    if (json) return json;
    // A URL whole (its query's `=` is no NAME=value: review).
    if (URL_START.test(arg)) return redactUrl(arg);
    if (i > 0 && USER_FLAG.test(args[i - 1]!) && arg.includes(':')) return `${arg.slice(0, arg.indexOf(':') + 1)}${REDACTED}`;
    const eq = arg.indexOf('=');
    if (eq > 0 && SECRET_FLAG.test(arg.slice(0, eq))) return `${arg.slice(0, eq + 1)}${REDACTED}`;
    if (i > 0 && SECRET_FLAG.test(args[i - 1]!) && !args[i - 1]!.includes('=') && !arg.startsWith('-')) return REDACTED;
    if (BARE_SECRET.test(arg)) return REDACTED;
    if (eq > 0 && (SECRET_ASSIGNMENT.test(arg) || BARE_SECRET.test(arg.slice(eq + 1)))) return `${arg.slice(0, eq + 1)}${REDACTED}`;
    const schemed = arg.replace(SCHEMED_CREDENTIAL, (_, scheme: string) => `${scheme} ${REDACTED}`);
    if (schemed !== arg) return schemed;
    const header = SECRET_HEADER.exec(arg);
    if (header) return `${header[1]}: ${REDACTED}`;
    // NAME=value: its value as any other (a URL loses its user info and query).
    return eq > 0 && !arg.startsWith('-') ? `${arg.slice(0, eq + 1)}${redactUrl(arg.slice(eq + 1))}` : redactUrl(arg);
  });
}

/** `arg` redacted as a JSON object (`{...}`, or `--flag={...}`) when it is one, else undefined. */
function jsonObjectArgument(arg: string): string | undefined {
  const start = arg.indexOf('{');
  if (start < 0 || !arg.trimEnd().endsWith('}') || (start > 0 && !(arg.startsWith('-') && arg[start - 1] === '='))) return undefined;
  try {
    const parsed: unknown = JSON.parse(arg.slice(start));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    return `${arg.slice(0, start)}${JSON.stringify(redactConfig(parsed))}`;
  } catch {
    return undefined;
  }
}

/** A deep copy of `value` (a loaded configuration) with every secret replaced (the rules above). */
export function redactConfig(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return SECRET_KEY.test(key) && value !== '' ? REDACTED : redactUrl(value);
  if (Array.isArray(value)) return key === 'args' ? redactArgs(value.map(String)) : value.map((item) => redactConfig(item, ''));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (SECRET_MAPS.has(key)) return Object.fromEntries(entries.map(([k]) => [k, REDACTED]));
  return Object.fromEntries(entries.map(([k, v]) => [k, redactConfig(v, k)]));
}

/** Free text (an error message, a health reason) with every URL in it redacted ({@link redactUrl}). */
export function redactText(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]+/gi, (url) => redactUrl(url));
}

/** What an upstream's configuration can carry secrets in (config/types.ts UpstreamConfig). */
export interface SecretBearingUpstream {
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
  readonly args?: readonly string[];
}

/** Shorter than this, a configured value is not looked for in text: "1" or "on" would mangle every message. */
const MIN_SECRET_LENGTH = 6;

/**
 * The secret values an upstream's configuration carries: the values of `headers` and `env` entries whose
 * name says credential (`Authorization`, `X-API-Key`, `DB_PASSWORD`; a `Bearer <token>`'s token alone too),
 * any value that is a credential by itself ({@link BARE_SECRET}), a URL's password, credential-named query
 * values and token path segments (the `url`, and URLs in values and arguments), and what {@link redactArgs}
 * hides of the other arguments. Longest first; values shorter than {@link MIN_SECRET_LENGTH} and plain numbers
 * are left out, so that ordinary text ("application/json", "production", "100000") is never masked in an
 * error (review). An upstream that echoes one in an error message (its backend failed "with key ...") must
 * not hand it to callers (upstream/client.ts).
 */
export function configuredSecrets(upstream: SecretBearingUpstream): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined) => {
    if (value && value.length >= MIN_SECRET_LENGTH && !/^\d+$/.test(value)) found.add(value);
  };
  const fromUrl = (text: string) => {
    const url = URL_START.test(text) ? URL.parse(text) : null;
    if (!url) return;
    // As written in the configuration (percent-encoded) and as a server would read it.
    add(url.password);
    add(decodeSegment(url.password));
    for (const [name, value] of url.searchParams) if (secretName(name) || tokenLike(value)) add(value);
    for (const segment of url.pathname.split('/')) if (tokenLike(decodeSegment(segment))) add(decodeSegment(segment));
  };
  const fromCredential = (value: string) => credentialParts(value, add);
  for (const [name, value] of [...Object.entries(upstream.headers ?? {}), ...Object.entries(upstream.env ?? {})]) {
    fromUrl(value);
    // `AUTH_HEADER: Bearer ...`: a scheme and a credential is one, whatever names it (review).
    if (secretName(name) || tokenLike(value) || /^(Bearer|Basic|Token)\s+\S+$/i.test(value)) fromCredential(value);
  }
  if (upstream.url) fromUrl(upstream.url);
  const args = upstream.args ?? [];
  const redacted = redactArgs(args);
  args.forEach((arg, i) => {
    if (URL_START.test(arg)) return fromUrl(arg);
    // One the console shows may still be a credential by itself (an AWS secret's / and +: review).
    if (redacted[i] === arg) return tokenLike(arg) ? add(arg) : undefined;
    // The pieces of the argument its redacted form lost, when a flag or name says secret or the piece is one by itself.
    const named = redacted[i] === REDACTED ? i > 0 && SECRET_FLAG.test(args[i - 1]!) : true;
    for (const piece of arg.split(/[\s=:,"'{}]+/)) if (!redacted[i]!.includes(piece) && (named || tokenLike(piece))) add(piece);
  });
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * The values of credential headers the gateway sends an upstream on a caller's behalf that the caller never
 * sent itself: the service credential an external identity provider's token stands for
 * (`oauth.external.credentialHeaders`), the key pair behind a built-in sign-in's token. Those whose header
 * name says credential or whose value is one by itself, whole and with
 * its parts as {@link configuredSecrets} reads a credential (a scheme's token, what Basic encodes, a cookie's
 * credential values); longest first, the same length floor.
 */
export function credentialSecrets(headers: Readonly<Record<string, string>>): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined) => {
    if (value && value.length >= MIN_SECRET_LENGTH && !/^\d+$/.test(value)) found.add(value);
  };
  for (const name in headers) {
    const value = headers[name]!;
    // Named or shaped as a credential, as an upstream's own `headers` are read (a header named for a key counts: masked, its id shows nothing).
    if (secretName(name) || tokenLike(value) || /^(Bearer|Basic|Token)\s+\S+$/i.test(value)) credentialParts(value, add);
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/** `value` and what it holds as a credential: `Bearer <token>`'s token, what Basic encodes, a cookie's credential values. */
function credentialParts(value: string, add: (value: string | undefined) => void): void {
  add(value);
  const schemed = /^(\S+)\s+(\S+)$/.exec(value);
  // `Bearer <token>`: the token alone too (an upstream quotes what its backend was sent); `Basic`: what it encodes.
  add(schemed?.[2]);
  if (schemed && /^basic$/i.test(schemed[1]!)) {
    const decoded = Buffer.from(schemed[2]!, 'base64').toString('utf8');
    add(decoded);
    add(decoded.slice(decoded.indexOf(':') + 1));
  }
  // A cookie's credential values (`sid=...; theme=dark`: the sid), not every word of it (review).
  if (value.includes('='))
    for (const pair of value.split(/;\s*/)) {
      const [name = '', cookie = ''] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (secretName(name) || tokenLike(cookie)) add(cookie);
    }
}

/** `text` with every occurrence of each of `secrets` ({@link configuredSecrets}) replaced by {@link REDACTED}. */
export function withoutSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * `value` (JSON: an upstream error's `data`, a notification, a result) with {@link withoutSecrets} applied to every
 * string in it, keys included unless `keys` is false (a successful result, whose keys are its shape); the same
 * object when none holds one.
 */
export function withoutSecretsDeep(value: unknown, secrets: readonly string[], keys = true): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return withoutSecrets(value, secrets);
  if (Array.isArray(value)) {
    const items = value.map((item) => withoutSecretsDeep(item, secrets, keys));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  // Keys too: `{ "<the key>": "rejected" }` names it as well as a value would (review). Object.fromEntries defines
  // each key, so an own `__proto__` stays a key.
  const cleaned = entries.map(([k, v]) => [keys ? withoutSecrets(k, secrets) : k, withoutSecretsDeep(v, secrets, keys)] as const);
  return cleaned.some(([k, v], i) => k !== entries[i]![0] || v !== entries[i]![1]) ? Object.fromEntries(cleaned) : value;
}
