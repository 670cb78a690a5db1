/**
 * What the console shows of the configuration in force: every secret replaced, so the page (and a
 * screenshot of it) can be shared. Rules, applied to the whole tree:
 * - a key named like a secret (`secret`, `token`, `password`, `passphrase`, `credential`, at the end of
 *   its name, or exactly `key`, `keyPrevious`, `digestKey`, `apiKey`) holds {@link REDACTED};
 * - every value of a `headers`, `env` or `credentialHeaders` map is {@link REDACTED} (an Authorization
 *   header, an API key in the environment of a stdio upstream);
 * - every URL loses its user name, password and query string ({@link redactUrl}): `redis://:pw@host`,
 *   `https://api.example/mcp?api_key=...`;
 * - a command-line argument `--name=value` whose name looks like a secret keeps the name only, and so
 *   does the argument after such a flag; an argument that is itself a credential ({@link BARE_SECRET}: an
 *   issued key's prefix, a JWT, a long random token) goes, and so does the value of a `NAME=value` argument
 *   whose name or value says secret, and the credential of a `Bearer`/`Basic`/`Token` header value.
 */
export const REDACTED = '[redacted]';

const SECRET_KEY = /(secret|token|password|passphrase|credential)s?$|^(key|keyPrevious|digestKey|apiKey)$/i;
const SECRET_MAPS = new Set(['headers', 'env', 'credentialHeaders']);
const SECRET_FLAG = /^--?[\w-]*(secret|token|password|passphrase|key|credential)[\w-]*$/i;
/**
 * An argument that is a credential by itself, with no flag naming it (a try-out's `sk-ant-api03-...`): the
 * prefixes API keys are issued with (OpenAI and Anthropic `sk-`, Stripe `sk_`/`rk_`, GitHub `ghp_`...,
 * Slack `xox?-`, GitLab `glpat-`, AWS `AKIA`, Google `AIza`), or 24 and more letters, digits, `_` and `-`
 * mixing letters and digits, as random tokens are (a path or a host has `/` or `.`).
 */
const BARE_SECRET =
  /^(?:(?:sk|rk|pk)[-_]|gh[pousr]_|github_pat_|xox[abprs]-|glpat-|AKIA[0-9A-Z]{12}|AIza|eyJ[\w-]+\.[\w-]+\.)|^(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{24,}$/;
/** `NAME=value` (an environment-style argument) whose name says secret, as a word of it (`API_KEY`, not `KEYBOARD` or `MAX_TOKENS`). */
const SECRET_ASSIGNMENT = /^(?:[A-Za-z][\w.-]*[_.-])?(secret|token|password|passphrase|key|apikey|credential)=/i;
/** A credential in an HTTP header value given as an argument (`--header "Authorization: Bearer ..."`); the scheme as written, so prose ("basic usage") stays. */
const SCHEMED_CREDENTIAL = /\b(Bearer|Basic|Token)\s+\S+/g;
/** A header given as an argument (`X-API-Key: ...`, `Authorization: ...`) whose name says secret. */
const SECRET_HEADER = /^([\w-]*(?:authorization|key|secret|token|password|credential)[\w-]*):\s*\S/i;

/**
 * `value` without the credentials a URL can carry: user info and query string replaced by
 * {@link REDACTED} (RFC 3986 §3.2.1 says user info SHOULD NOT hold a password; many do anyway), the
 * fragment dropped. Text that is not an absolute URL is returned as it is.
 */
export function redactUrl(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  const url = URL.parse(value);
  if (!url) return value;
  const userinfo = url.username || url.password ? `${REDACTED}@` : '';
  const query = url.search ? `?${REDACTED}` : '';
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${query}`;
}

/** A command line (stdio upstream) with its secret-looking flags' values replaced and every URL redacted. */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, i) => {
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
