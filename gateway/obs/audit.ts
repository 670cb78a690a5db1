import { createHmac, randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { clip } from '../wire/clip.ts';
import { pino, type DestinationStream, type Logger } from 'pino';
import { ConfigError } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { loggableUrl, throttled } from './log.ts';
import { makeFolders } from './folders.ts';
import type { GatewayMetrics } from './metrics.ts';

/**
 * The audit trail (issues 17, 28): one JSON line per tool decision and per refused request (and one per
 * sign-in or OAuth endpoint decision, {@link AuthDecision}), on its own destination (a file, stdout or
 * stderr, through its own pino logger), never mixed into the access log.
 * Every tools/call the gateway decides is recorded (`"event":"tool_decision"`): direct calls, call_tool
 * dispatches, and refusals of any kind (out of scope, a write through call_tool, invalid arguments, rate
 * limited, unknown tool, refused at the edge), so every state-changing call shows up whether it ran or
 * not. Every other MCP request the gateway refuses is one `"event":"request_refused"` line: a refused
 * credential (with its form and the reason, never the secret), a body or message refused at the edge,
 * a spent budget, a scope lookup down; a batch refused as a whole is one line per message. The MCP
 * lines are written by subscribing to the gateway's outcome events (obs/outcomes.ts).
 *
 * What an event holds ({@link AuditEvent}): time, request id, trace id, a keyed digest of the
 * credential and of the arguments (HMAC-SHA-256 under `audit.digestKey`, so neither can be recovered
 * by hashing guesses without the key, and events of one credential correlate across replicas sharing
 * the key), the client's name when its request said it (2026-07-28 `clientInfo`), surface, upstream,
 * tool, outcome and duration. Never a credential, an argument value or a result. A call of a tool that
 * one of the same credential's recent search_tools answers returned carries `foundBySearch` (that
 * search's request id, the tool's rank, how long ago), so "the model searched, then ran the tool" is one
 * line to read; the link is kept in this process only ({@link SEARCH_TRAIL}).
 */
export interface AuditLog {
  readonly enabled: boolean;
  record(decision: ToolDecision): void;
  /** One decision of the authorization server or another sign-in (an `auth_decision` line; gateway/auth/decisions.ts). */
  recordAuth(decision: AuthDecision): void;
  /** One line for a request (or one message of it) refused before dispatch that is no tools/call. */
  refused(refusal: RequestRefusal): void;
  /** One prompt, resource or completion request decided (an `access_decision` line; mcp/access-decision.ts). */
  recordAccess(decision: AccessDecision): void;
  /** Notes what one search_tools answer returned (exposed names, best first), for {@link AuditEvent.foundBySearch}. */
  noteSearch(search: { credentialDigest: string; requestId?: string; names: readonly string[] }): void;
  /** Records a change of a pinned tool definition, or an approval (a `tool_definition_change` line). */
  definitionChange(change: DefinitionChange): void;
  /** Flushes and closes the destination. */
  close(): Promise<void>;
  /** The digest key this process generated because `audit.digestKey` is not set, for the next audit log of a live reload. */
  readonly generatedKey?: string;
}

/**
 * What the gateway decided about one tool call, named for the operator:
 * - `ok` ran and answered; `error` ran (or tried) and failed: an isError result, an upstream error or
 *   an unreachable upstream (one whose catalogue cannot be read too: `reason` `upstream_unavailable`);
 *   `input_required` the upstream asked the caller for input;
 * - `refused_scope` the caller's scopes do not include the tool; `refused_write_via_call_tool` a
 *   state-changing tool asked of call_tool; `refused_advertised` an advertised tool asked of call_tool;
 * - `invalid_arguments` arguments failed the inputSchema (the gateway's check or the upstream's -32602);
 * - `rate_limited` a budget ran out; `unknown_tool` no such tool; `output_schema_violation` the result
 *   broke the tool's outputSchema (withheld from the caller); `refused_held` the tool is on hold until an
 *   operator approves its changed definition (catalog/pin-guard.ts);
 * - refused at the HTTP edge before dispatch: `unauthorized` the scope endpoint refused the credential,
 *   `invalid_request` a batch under a revision without batches (and `rate_limited`, `invalid_arguments`
 *   for a request over its budget or with `Mcp-Param-*` headers contradicting the arguments).
 */
export type AuditOutcome =
  | 'ok'
  | 'error'
  | 'input_required'
  | 'refused_scope'
  | 'refused_write_via_call_tool'
  | 'refused_advertised'
  | 'invalid_arguments'
  | 'rate_limited'
  | 'unknown_tool'
  | 'output_schema_violation'
  | 'refused_held'
  | 'refused_reloaded'
  | 'unauthorized'
  | 'invalid_request';

/**
 * What happened to one upstream tool's definition (catalog/pin-guard.ts), named for the operator:
 * - `held`: it changed since pinned and is held (`pinning.mode: hold`); `warned`: it changed and the new
 *   definition is served (`warn`); `reverted`: the upstream went back to the pinned definition;
 * - `new_held`: a tool the upstream did not list before, held (`pinning.newTools: hold`); `new_accepted`: one
 *   served and pinned as first seen (`accept`; not the tools of an upstream's first catalogue);
 * - `lint_held` / `lint_warned`: the description lint found something (`pinning.lint`);
 * - `approved`: an operator made the waiting definition the pin (console or CLI).
 */
export type DefinitionOutcome = 'held' | 'warned' | 'reverted' | 'new_held' | 'new_accepted' | 'lint_held' | 'lint_warned' | 'approved';

/** One line of `"event":"tool_definition_change"` (digests are of public definitions, not secrets). */
export interface DefinitionChange {
  upstream: string;
  /** The upstream's own name for the tool. */
  tool: string;
  outcome: DefinitionOutcome;
  /** What changed (catalog/pinning.ts describeChanges), or the lint rules found. */
  changes: readonly string[];
  /** Digest of the pinned definition, when there is one. */
  pinned?: string;
  /** Digest of the upstream's definition now (approved: the new pin). */
  current: string;
  /** Who approved: `console` or `cli`. */
  via?: string;
  /** An approval's request id and client address (http/client-address.ts). */
  requestId?: string;
  address?: string;
}

/** Who approves a waiting definition (catalog/pin-guard.ts): the console's page or API, its request id and client address. */
export interface Approver {
  via: string;
  requestId?: string;
  address?: string;
}

/**
 * The form of credential a request presented, never its value: no credential headers, a complete key
 * pair (`credentials.keyHeader` and `secretHeader`), an `Authorization: Bearer` token, both, or
 * something incomplete or malformed (a key without its secret, a header sent twice, another scheme).
 */
export type CredentialForm = 'none' | 'key_pair' | 'bearer' | 'key_pair_and_bearer' | 'incomplete';

/**
 * Who an OAuth access token speaks for, none of it a secret: the account it was issued to (its `sub`:
 * the built-in server's account id, the one its sign-in's `auth_decision` lines digest), the client
 * that holds it (its `client_id`, public), and, for the built-in server, the digest of the key pair it
 * signed in with (auth/credentials.ts `credentialDigest`, as that key's own requests are digested).
 */
export interface OAuthHolder {
  subject: string;
  clientId: string;
  keyDigest?: string;
}

/** The decision as the dispatch layer knows it; the audit log adds time and digests. */
export interface ToolDecision {
  requestId?: string;
  traceId?: string;
  /** The credential's gateway digest (auth/credentials.ts); keyed again before it is written. */
  credentialDigest: string;
  /** The configured key's name (`credentials.apiKeys[].name`), when the credential is one: written as `apiKey`. */
  apiKey?: string;
  client?: { name?: string; version?: string };
  surface: string;
  /** `direct` (the tool named in tools/call), `call_tool` (dispatched by the compact surface) or `run_code` (a script's tools.* call). */
  via: 'direct' | 'call_tool' | 'run_code';
  /** The run_code run an inner call belongs to (surfaces/run-code.ts): one id per run, on the run's own line too. */
  runId?: string;
  /** A run_code run's line: the `compact.codeMode.limits` key a run stopped for, and its tools.* calls. */
  limit?: string;
  calls?: number;
  /** The tool's upstream; absent when no catalogue tool matched. */
  upstream?: string;
  /** The name the caller used. */
  tool: string;
  /** Whether the tool changes state (unknown tools: undefined). */
  readOnly?: boolean;
  outcome: AuditOutcome;
  /** The gateway's error kind (errors.ts), or the upstream's JSON-RPC code, when not `ok`. */
  reason?: string;
  /** Only the JSON shape is digested, never logged. */
  arguments: unknown;
  durationMs: number;
  /** The budget that refused a `rate_limited` call. */
  budget?: string;
  /** A call refused at the HTTP edge, before dispatch: the status it was answered with, and the credential's form. */
  status?: number;
  credentialForm?: CredentialForm;
  /** An OAuth access token's holder: written as `account`, `oauthClient` and `keyCredential`. */
  oauth?: OAuthHolder;
  /** The client address (http/client-address.ts). */
  address?: string;
}

/**
 * What the gateway decided at a sign-in or an OAuth endpoint (gateway/auth/decisions.ts): where
 * (`endpoint`), `ok` or `refused`, and why as an RFC 6749 / RFC 7591 error code or the gateway's own
 * reason (`invalid_credentials`, `rate_limited`, `refresh_token_reuse`, `authorization_code_reuse`, a revocation
 * that revoked nothing: `token_of_another_client`, `unknown_token`, ...). `account` is a keyed
 * digest of the key behind the request, never the key; `client` the OAuth client_id (public).
 */
export interface AuthDecision {
  requestId?: string;
  /** `console_revoke`: an operator revoked a grant in the console (admin.ts). */
  endpoint: 'register' | 'authorize' | 'sign_in' | 'consent' | 'token' | 'revoke' | 'console' | 'console_revoke';
  outcome: 'ok' | 'refused';
  reason?: string;
  client?: string;
  /** The account's digest as the decision knows it (keyed again before it is written). */
  account?: string;
  /** The budget that refused a `rate_limited` decision. */
  budget?: string;
  /** token: the grant type asked for. */
  grantType?: string;
  /** The client address (http/client-address.ts), where the decision is made in the gateway's own routes (the console, the sign-in pages). */
  address?: string;
}

/**
 * What the gateway decided about one request for a prompt, a resource or a completion, or a resource
 * subscription (mcp/access-decision.ts): `ok` answered; `input_required` the upstream asked the caller for
 * input first (the retry has its own line); `not_found` refused as unknown, whether no upstream
 * has it or the caller may not reach the one that does (the caller is told the same: no leak of what
 * exists); `error` the owning upstream failed or refused it (`reason`: the gateway's error kind, or
 * `upstream_rejected <code>`, the upstream's JSON-RPC error by the code the caller was answered, in its
 * revision's numbering). With one upstream every name is routed to it: an unknown one is its refusal, `error`.
 */
export interface AccessDecision {
  requestId?: string;
  traceId?: string;
  /** The credential's gateway digest (auth/credentials.ts); keyed again before it is written. */
  credentialDigest: string;
  /** The configured key's name, when the credential is one: written as `apiKey`. */
  apiKey?: string;
  client?: { name?: string; version?: string };
  oauth?: OAuthHolder;
  address?: string;
  surface: string;
  method: 'resources/read' | 'prompts/get' | 'completion/complete' | 'resources/subscribe' | 'resources/unsubscribe';
  /** The prompt's name or the resource's URI as the caller named it (a URI without userinfo, query or fragment). */
  target?: string;
  /** The upstream it was routed to; absent when none was (`not_found`). */
  upstream?: string;
  outcome: 'ok' | 'input_required' | 'not_found' | 'error';
  reason?: string;
  durationMs: number;
}

/** A request, or one message of it that is no tools/call, refused before dispatch. */
export interface RequestRefusal {
  requestId?: string;
  traceId?: string;
  /** The credential's gateway digest, when one was presented in full (keyed again before it is written). */
  credentialDigest?: string;
  credentialForm: CredentialForm;
  /** The configured key's name, when the credential is one and was accepted: written as `apiKey`. */
  apiKey?: string;
  client?: { name?: string; version?: string };
  surface: string;
  /** The JSON-RPC method, when a message was read (the bounded label: message-metrics.ts). */
  method?: string;
  outcome: AuditOutcome;
  /** Why: the gateway's error kind, the SDK ladder's cell, or the credential's refusal reason. */
  reason: string;
  budget?: string;
  /** The HTTP status it was answered with. */
  status: number;
  durationMs: number;
  /** An OAuth access token's holder: written as `account`, `oauthClient` and `keyCredential`. */
  oauth?: OAuthHolder;
  /**
   * The account a refused credential named, as an id (keyed before it is written, as `account`): a known
   * key id presented with another secret, so guesses against one key are told apart from the rest.
   */
  account?: string;
  /** The client address (http/client-address.ts). */
  address?: string;
  /** The tool a refused tools/call named: its message's, else its Mcp-Name header's (a body never read). */
  tool?: string;
}

/** One line of the audit file (`event` first: the kind of line). */
export interface AuditEvent {
  event: 'tool_decision' | 'request_refused';
  time: string;
  requestId?: string;
  traceId?: string;
  /** The keyed digest of the credential; absent when none was presented in full. */
  credential?: string;
  credentialForm?: CredentialForm;
  /**
   * An OAuth token's caller: the keyed digest of the account it was issued to (the `account` of its
   * sign-in's `auth_decision` lines), the client_id holding it, and the keyed digest of the key it
   * signed in with (the `credential` of that key's own requests; built-in server only).
   */
  account?: string;
  oauthClient?: string;
  keyCredential?: string;
  /** The configured key's name (`credentials.apiKeys[].name`), when the credential is one: not a secret. */
  apiKey?: string;
  /** The client address (http/client-address.ts), as the access log and the per-address budgets have it. */
  address?: string;
  client?: string;
  clientVersion?: string;
  surface: string;
  /** A refused request's JSON-RPC method. */
  method?: string;
  via?: 'direct' | 'call_tool' | 'run_code';
  runId?: string;
  upstream?: string;
  tool?: string;
  readOnly?: boolean;
  outcome: AuditOutcome;
  reason?: string;
  budget?: string;
  /** A run_code run's line: the limit it stopped at, and its tools.* calls. */
  limit?: string;
  calls?: number;
  /** The HTTP status of a request refused at the edge. */
  status?: number;
  arguments?: string;
  /** Arguments over a structural input limit: the breach (`limits.arrayLength at /symbols`); `arguments` is then its digest, not theirs. */
  argumentsOverLimit?: string;
  durationMs: number;
  /** The most recent search_tools answer of this credential that returned the tool (within {@link SEARCH_TRAIL}.maxAgeMs). */
  foundBySearch?: { requestId?: string; rank: number; ageMs: number };
}

/**
 * Bounds of the search-to-call link: searches remembered per credential, credentials remembered
 * (least recently searching dropped first), and how old a search may be to explain a call.
 */
export const SEARCH_TRAIL = { perCredential: 8, credentials: 10_000, maxAgeMs: 15 * 60_000 };

interface NotedSearch {
  requestId?: string;
  at: number;
  names: readonly string[];
}

export interface AuditOptions {
  /** Where lines go instead of `audit.destination` (tests). */
  destination?: DestinationStream;
  /** The gateway's own log, for the warning about a generated digest key and for lines that could not be written. */
  log?: Logger;
  /** Counts failed writes (`mcp_audit_write_errors_total`) and lines dropped past the buffer (`mcp_audit_lines_dropped_total`). */
  metrics?: Pick<GatewayMetrics, 'auditWriteErrors' | 'auditLinesDropped'>;
  /**
   * The key a previous audit log of this process generated ({@link AuditLog.generatedKey}, a live
   * reload): kept, so digests stay the same across the reload and the warning is not given again.
   */
  generatedKey?: string;
  /**
   * The structural input limit a value breaks, described (`config.limits`, checks/input-limits.ts: found at the
   * first breach, without visiting the rest), else undefined: arguments over one are not digested element by
   * element ({@link argumentsDigested}). Without it every value is digested whole. Given, not imported: obs/
   * sits below checks/.
   */
  overLimit?: (value: unknown) => string | undefined;
}

const MIB = 1024 * 1024;
/**
 * Bytes of audit lines held while the destination does not take them (a full disk, a stalled pipe):
 * sonic-boom keeps a failed write's lines and writes them again with the next line, so a destination that
 * recovers loses nothing; without a bound a destination that never does grew the heap without end (about
 * 0.5 MB for every 1,000 decisions).
 */
export const AUDIT_BUFFER_BYTES = 16 * MIB;

/**
 * Builds the audit log for `audit` config: `off` records nothing; `stdout`, `stderr` or a file path.
 * A file is opened for appending here, so a destination that cannot be written (no such folder and none
 * can be made, no permission, a read-only mount) refuses the start instead of losing every line; a write
 * that fails later is logged at error (at most once a minute, with how many were not) and counted; its
 * lines are held and written again (up to {@link AUDIT_BUFFER_BYTES}), and a line past that is dropped,
 * logged and counted.
 * @throws ConfigError naming `audit.destination` when the file cannot be opened for appending.
 */
export function createAuditLog(config: GatewayConfig['audit'], options: AuditOptions = {}): AuditLog {
  if (config.destination === 'off' && !options.destination)
    return {
      enabled: false,
      record: () => {},
      refused: () => {},
      recordAuth: () => {},
      recordAccess: () => {},
      noteSearch: () => {},
      definitionChange: () => {},
      close: async () => {},
    };
  // Opened first: a destination that refuses the start says so alone, with no warning after its fatal line.
  const destination =
    options.destination ??
    (config.destination === 'stdout'
      ? pino.destination({ fd: 1, sync: false, maxLength: AUDIT_BUFFER_BYTES })
      : config.destination === 'stderr'
        ? pino.destination({ fd: 2, sync: false, maxLength: AUDIT_BUFFER_BYTES })
        : pino.destination({ dest: openable(config.destination), sync: false, append: true, maxLength: AUDIT_BUFFER_BYTES }));
  let key = config.digestKey;
  const generatedKey = key ? undefined : (options.generatedKey ?? randomBytes(32).toString('hex'));
  if (!key && !options.generatedKey)
    options.log?.warn(
      'audit.digestKey is not set: credential and argument digests use a key generated for this process and will not match across restarts or replicas',
    );
  key ??= generatedKey!;
  const writeFailed = throttled(60_000);
  const stream = destination as DestinationStream & {
    on?: ((event: 'error', fn: (error: Error) => void) => void) & ((event: 'drop', fn: () => void) => void);
    flushSync?: () => void;
  };
  let lastError: Error | undefined;
  stream.on?.('error', (error) => {
    // pino's own listener hands the first error on by emitting it again: one failure, one count.
    if (error === lastError) return;
    lastError = error;
    // sonic-boom's flushSync retries a failed write (ENOSPC, EIO) forever, which would hang close() and
    // the process's exit: what a failing destination holds is lost either way.
    if (stream.flushSync) stream.flushSync = () => {};
    options.metrics?.auditWriteErrors.inc();
    writeFailed((notLogged) =>
      options.log?.error(
        { destination: config.destination, error: error.message, ...(notLogged ? { notLogged } : {}) },
        `audit: a write to audit.destination failed; its lines are held (up to ${AUDIT_BUFFER_BYTES / MIB} MiB) and written again with the next line`,
      ),
    );
  });
  // A destination that takes lines again has recovered: what it holds at close is its writes under way, not a loss.
  (stream as { on?: (event: 'write', fn: () => void) => void }).on?.('write', () => {
    lastError = undefined;
  });
  // Past the buffer, sonic-boom drops a line (one write, one line) instead of growing without bound.
  const dropped = throttled(60_000);
  stream.on?.('drop', () => {
    options.metrics?.auditLinesDropped.inc();
    dropped((notLogged) =>
      options.log?.error(
        { destination: config.destination, ...(notLogged ? { notLogged } : {}) },
        `audit: a line was dropped: audit.destination has not taken the last ${AUDIT_BUFFER_BYTES / MIB} MiB of lines`,
      ),
    );
  });
  // Its own logger: no base fields (pid, hostname), the event's own `time`, and `event` where the level
  // would go (pino's line always opens with the level slot): one level per kind of line.
  const logger = pino(
    {
      base: null,
      timestamp: false,
      customLevels: { tool_decision: 30, request_refused: 31 },
      useOnlyCustomLevels: true,
      level: 'tool_decision',
      formatters: { level: (label) => ({ event: label }) },
    },
    destination,
  );
  const authLogger = pino({ base: null, timestamp: false, formatters: { level: () => ({ event: 'auth_decision' }) } }, destination);
  const changes = pino({ base: null, timestamp: false, formatters: { level: () => ({ event: 'tool_definition_change' }) } }, destination);
  const access = pino({ base: null, timestamp: false, formatters: { level: () => ({ event: 'access_decision' }) } }, destination);
  const digest = (value: string) => createHmac('sha256', key).update(value).digest('hex');
  // Keyed as the auth_decision lines' account and the key's own requests' credential: the same values, so they join.
  const holderFields = (holder: OAuthHolder | undefined): Pick<AuditEvent, 'account' | 'oauthClient' | 'keyCredential'> =>
    holder
      ? {
          ...(holder.subject ? { account: digest(`account:${holder.subject}`) } : {}),
          ...(holder.clientId ? { oauthClient: callerText(loggableUrl(holder.clientId)) } : {}),
          ...(holder.keyDigest ? { keyCredential: digest(`credential:${holder.keyDigest}`) } : {}),
        }
      : {};
  // Who asked, as every decision line names them after its credential: a token's holder, the address, the client.
  const callerFields = (who: { apiKey?: string; oauth?: OAuthHolder; address?: string; client?: { name?: string; version?: string } }) => ({
    ...(who.apiKey ? { apiKey: who.apiKey } : {}),
    ...holderFields(who.oauth),
    ...(who.address ? { address: who.address } : {}),
    ...(who.client?.name ? { client: callerText(who.client.name) } : {}),
    ...(who.client?.version ? { clientVersion: callerText(who.client.version) } : {}),
  });
  // Map order is recency: a credential that searches again moves to the end; the oldest go first.
  const searches = new Map<string, NotedSearch[]>();
  const foundBySearch = (credential: string, tool: string): AuditEvent['foundBySearch'] => {
    const now = performance.now();
    const list = searches.get(credential) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const search = list[i]!;
      if (now - search.at > SEARCH_TRAIL.maxAgeMs) break;
      const rank = search.names.indexOf(tool);
      if (rank >= 0) return { ...(search.requestId ? { requestId: search.requestId } : {}), rank: rank + 1, ageMs: Math.round(now - search.at) };
    }
    return undefined;
  };
  return {
    enabled: true,
    ...(generatedKey ? { generatedKey } : {}),
    noteSearch({ credentialDigest, requestId, names }) {
      if (names.length === 0) return;
      const list = searches.get(credentialDigest) ?? [];
      searches.delete(credentialDigest);
      list.push({ requestId, at: performance.now(), names });
      if (list.length > SEARCH_TRAIL.perCredential) list.shift();
      searches.set(credentialDigest, list);
      if (searches.size > SEARCH_TRAIL.credentials) searches.delete(searches.keys().next().value!);
    },
    definitionChange(change) {
      changes.info({ time: new Date().toISOString(), ...change });
    },
    recordAuth(decision) {
      authLogger.info({
        time: new Date().toISOString(),
        ...(decision.requestId ? { requestId: decision.requestId } : {}),
        endpoint: decision.endpoint,
        outcome: decision.outcome,
        ...(decision.reason ? { reason: decision.reason } : {}),
        // A client_id may be a URL the caller wrote (a client ID metadata document): no userinfo or query.
        ...(decision.client ? { client: callerText(loggableUrl(decision.client)) } : {}),
        ...(decision.account ? { account: digest(`account:${decision.account}`) } : {}),
        ...(decision.budget ? { budget: decision.budget } : {}),
        ...(decision.grantType ? { grantType: decision.grantType } : {}),
        ...(decision.address ? { address: decision.address } : {}),
      });
    },
    recordAccess(decision) {
      access.info({
        time: new Date().toISOString(),
        ...(decision.requestId ? { requestId: decision.requestId } : {}),
        ...(decision.traceId ? { traceId: decision.traceId } : {}),
        credential: digest(`credential:${decision.credentialDigest}`),
        ...callerFields(decision),
        surface: decision.surface,
        method: decision.method,
        ...(decision.upstream ? { upstream: decision.upstream } : {}),
        ...(decision.target !== undefined ? { target: callerText(resourceTarget(decision.target)) } : {}),
        outcome: decision.outcome,
        ...(decision.reason ? { reason: decision.reason } : {}),
        durationMs: Math.round(decision.durationMs * 10) / 10,
      });
    },
    refused(refusal) {
      const event: Omit<AuditEvent, 'event'> = {
        time: new Date().toISOString(),
        ...(refusal.requestId ? { requestId: refusal.requestId } : {}),
        ...(refusal.traceId ? { traceId: refusal.traceId } : {}),
        ...(refusal.credentialDigest ? { credential: digest(`credential:${refusal.credentialDigest}`) } : {}),
        credentialForm: refusal.credentialForm,
        ...callerFields(refusal),
        ...(refusal.account ? { account: digest(`account:${refusal.account}`) } : {}),
        surface: refusal.surface,
        ...(refusal.method ? { method: callerText(refusal.method) } : {}),
        ...(refusal.tool !== undefined ? { tool: callerText(refusal.tool) } : {}),
        outcome: refusal.outcome,
        reason: refusal.reason,
        ...(refusal.budget ? { budget: refusal.budget } : {}),
        status: refusal.status,
        durationMs: Math.round(refusal.durationMs * 10) / 10,
      };
      logger.request_refused(event);
    },
    record(decision) {
      const found = foundBySearch(decision.credentialDigest, decision.tool);
      const event: Omit<AuditEvent, 'event'> = {
        time: new Date().toISOString(),
        ...(decision.requestId ? { requestId: decision.requestId } : {}),
        ...(decision.traceId ? { traceId: decision.traceId } : {}),
        credential: digest(`credential:${decision.credentialDigest}`),
        ...(decision.credentialForm ? { credentialForm: decision.credentialForm } : {}),
        ...callerFields(decision),
        surface: decision.surface,
        via: decision.via,
        ...(decision.runId ? { runId: decision.runId } : {}),
        ...(decision.upstream ? { upstream: decision.upstream } : {}),
        tool: callerText(decision.tool),
        ...(decision.readOnly !== undefined ? { readOnly: decision.readOnly } : {}),
        outcome: decision.outcome,
        ...(decision.reason ? { reason: decision.reason } : {}),
        ...(decision.budget ? { budget: decision.budget } : {}),
        ...(decision.limit ? { limit: decision.limit } : {}),
        ...(decision.calls !== undefined ? { calls: decision.calls } : {}),
        ...(decision.status !== undefined ? { status: decision.status } : {}),
        ...argumentsDigested(decision.arguments ?? {}, options.overLimit, digest),
        durationMs: Math.round(decision.durationMs * 10) / 10,
        ...(found ? { foundBySearch: found } : {}),
      };
      logger.tool_decision(event);
    },
    close: () =>
      new Promise<void>((resolve) => {
        const stream = destination as DestinationStream & {
          flushSync?: () => void;
          end?: () => void;
          once?: (event: string, fn: () => void) => void;
          fd?: number;
        };
        try {
          stream.flushSync?.();
        } catch {
          // A destination that is not open yet has nothing to flush.
        }
        // What a failing destination still holds when it is closed (a reload to another destination, logrotate's
        // SIGHUP, an exit) is lost with it: counted as dropped and said once (SRE try-out: five lines held for a full
        // disk vanished at a reload with no count and no line).
        let settled = false;
        const done = () => {
          if (settled) return;
          settled = true;
          // Only while its last write failed (cleared by a write that succeeded since).
          const lost = lastError ? heldLines(stream) : 0;
          if (lost > 0) {
            options.metrics?.auditLinesDropped.inc(lost);
            options.log?.error(
              { destination: config.destination, lines: lost },
              `audit: ${lost} ${lost === 1 ? 'line' : 'lines'} held for a failing audit.destination ${lost === 1 ? 'was' : 'were'} lost when it was closed`,
            );
          }
          resolve();
        };
        // Never close the process's own stdout/stderr.
        if (options.destination || config.destination === 'stdout' || config.destination === 'stderr' || !stream.end) return done();
        stream.once?.('close', done);
        stream.end();
        setTimeout(done, 1000).unref();
      }),
  };
}

/**
 * The lines sonic-boom (pino's destination) still holds unwritten after a failed write (none while a write is
 * under way, which may yet succeed): those of the failed write and those queued behind it, one newline each.
 * Read from its fields (`_len`, `_writing`, `_writingBuf`, `_bufs` in 4.x); a destination without them (another
 * stream) counts none.
 */
function heldLines(stream: unknown): number {
  const s = stream as { _len?: unknown; _writingBuf?: unknown; _bufs?: unknown; _writing?: unknown };
  // A write under way may yet succeed (stdout and stderr are never closed here): not counted as lost.
  if (typeof s._len !== 'number' || s._len <= 0 || s._writing === true) return 0;
  let lines = 0;
  const count = (piece: unknown) => {
    const text = typeof piece === 'string' ? piece : Buffer.isBuffer(piece) ? piece.toString('latin1') : '';
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines += 1;
  };
  count(s._writingBuf);
  if (Array.isArray(s._bufs)) for (const piece of s._bufs) count(piece);
  return Math.max(lines, 1);
}

/**
 * `path` once it is known to open for appending (its folder made first, by {@link makeFolders}: not
 * sonic-boom's own `mkdir` option, which never opened a file under `/proc` and lost every line, silently).
 * @throws ConfigError naming `audit.destination`.
 */
function openable(path: string): string {
  try {
    makeFolders(dirname(path));
    closeSync(openSync(path, 'a'));
  } catch (error) {
    throw new ConfigError('audit.destination', `cannot append to ${path}: ${(error as Error).message}`);
  }
  return path;
}

/** Characters kept of a string the caller chose (a tool name, its client's name and version, a method). */
const CALLER_TEXT_CHARS = 256;

/** A caller's string as an audit line holds it (a 500,000-character tool name made a 1 MB line). */
const callerText = (text: string): string => clip(text, CALLER_TEXT_CHARS);

/**
 * A prompt's name or a resource's URI as an `access_decision` line names it. A URI may carry a token in its
 * userinfo, query or fragment (a signed link), in any scheme (`urn:x?sig=...`) and whether or not it parses:
 * those parts are cut (`?…` marks a cut query or fragment) and the userinfo masked, by text, never by a
 * parser that gives up on what it cannot read (review: `custom:x?token=` and an unparseable `https://u:p@...`
 * passed whole). A path segment that is a token is masked as the log masks it ({@link loggableUrl}).
 */
function resourceTarget(target: string): string {
  const cut = target.search(/[?#]/);
  const base = (cut < 0 ? target : target.slice(0, cut)).replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i, '$1***@');
  const masked = /^[a-z][a-z0-9+.-]*:\/\//i.test(base) && URL.canParse(base) ? loggableUrl(base) : base;
  return cut < 0 ? masked : `${masked}?…`;
}

/**
 * A decision's `arguments` field: the keyed digest of their canonical JSON, or, for arguments over a
 * structural input limit (`overLimit`), the digest of the breach, named in `argumentsOverLimit`. Such arguments are refused whatever
 * the decision; digesting them cost about 0.5 µs of the event loop per array element, so a script's 20
 * calls with 400,000 elements each held it for seconds (security try-out).
 */
function argumentsDigested(
  value: unknown,
  overLimit: ((value: unknown) => string | undefined) | undefined,
  digest: (text: string) => string,
): { arguments: string; argumentsOverLimit?: string } {
  const over = overLimit?.(value);
  if (over === undefined) return { arguments: digest(`arguments:${canonicalJson(value)}`) };
  return { arguments: digest(`arguments over a limit:${over}`), argumentsOverLimit: over };
}

/**
 * JSON with object keys sorted at every depth: the same arguments give the same digest in any key order.
 * Iterative, so arguments nested deeper than the call stack (a tools/call's `arguments` may reach here
 * before its input limits are checked) digest instead of throwing RangeError.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Literal tokens as strings, values still to write as { value }; popped last-in first-out.
  const work: (string | { value: unknown })[] = [{ value }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const current = item.value;
    if (Array.isArray(current)) {
      work.push(']');
      for (let i = current.length - 1; i >= 0; i--) work.push({ value: current[i] }, ...(i > 0 ? [','] : []));
      work.push('[');
    } else if (current && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      work.push('}');
      for (let i = entries.length - 1; i >= 0; i--) work.push({ value: entries[i]![1] }, `${JSON.stringify(entries[i]![0])}:`, ...(i > 0 ? [','] : []));
      work.push('{');
    } else out.push(JSON.stringify(current) ?? 'null');
  }
  return out.join('');
}
