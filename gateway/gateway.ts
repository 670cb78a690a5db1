import type { Server as HttpServer } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import Koa from 'koa';
import { ConfigError, type GatewayConfig } from '../config/load.ts';
import { metricsRoute } from './http/app.ts';
import { forgetUpstreams } from './obs/metrics.ts';
import { createGatewayServer } from './http/node-server.ts';
import type { UnreadAnswer } from './http/send-timeout.ts';
import { originGuard, rejectAtEdge, unparsedRequestAccounting } from './http/edge.ts';
import type { GatewayRuntime, UpstreamRuntime } from './runtime-state.ts';
import { loggableUrl } from './obs/log.ts';
import { checkReplicas } from './ops/replica-check.ts';
import { checkSharedKeys } from './ops/shared-keys.ts';
import { processKeyId } from './auth/credentials.ts';
import { planReload, ReloadRefused, type ReloadPlan } from './reload/plan.ts';
import { createPinStore, createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';
import { carryPins } from './store/pin-store.ts';
import { SchemaCompiler } from './checks/schema-compiler.ts';
import { redisRefusal } from './store/redis-connection.ts';

export type { GatewayConfig } from '../config/load.ts';
export type { Surface, DispatchContext } from './ports.ts';
export type { SurfaceName } from './policy/tool-resolution.ts';
export { ReloadRefused, type ReloadPlan } from './reload/plan.ts';

/** createRuntime's options (logger or log destination, surfaces, upstream transport). */
export type StartGatewayOptions = RuntimeOptions;

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:3000 (MCP endpoints at /mcp, /mcp/compact). */
  url: string;
  /**
   * Live reload (gateway/reload/plan.ts): builds a runtime for `config` (validated by loadConfig),
   * taking over the upstream connections that did not change (and the pin store), fetches its
   * catalogues and search index while the old runtime serves (at most the slowest upstream's
   * `timeoutMs`), then serves new requests with it; names the old configuration served stay callable as
   * aliases (`naming.aliasTtlMs`) where the new one renames their tools; requests in flight finish on the old runtime, however long they run (an hour at
   * most), which then closes what was not taken over (listen streams then, `shutdown.graceMs` after the reload at the earliest: their clients reconnect).
   * Reloads run one at a time. `config` may be a loader, called in turn (its ConfigError is a refusal).
   * Each outcome is counted in `mcp_config_reloads_total{outcome}` (applied, refused, failed) and logged.
   * @throws ReloadRefused when a key bound to a socket changed, ConfigError from the loader; the running
   *   configuration keeps serving.
   */
  reload(config: GatewayConfig | (() => GatewayConfig)): Promise<ReloadPlan>;
  /** Base URL of the separate metrics listener when `metrics.port` is set. */
  metricsUrl?: string;
  /**
   * Graceful stop. With `drain` (SIGTERM: an orchestrator stopping it), first `shutdown.drainMs` of
   * draining: `/readyz` answers 503 `draining` and every request is still served, each answer closing
   * its keep-alive connection, so load balancers take the instance out and clients re-dial elsewhere
   * before it stops accepting. Then it stops accepting connections, lets in-flight requests and SSE
   * streams finish for up to `shutdown.graceMs`, and closes what is left, the MCP handlers, upstream
   * connections and caches. Calls after the first return the first one's promise. `reason` (the signal,
   * say) is logged with the close's first and last lines.
   */
  close(options?: { drain?: boolean; reason?: string }): Promise<void>;
}

/**
 * Starts a gateway for `config` (see config/load.ts): {@link createRuntime} plus the HTTP listeners,
 * resolving once they listen. The catalogues are fetched in the background (`/readyz` answers 503
 * until one is); stdio upstreams are spawned then.
 */
export async function startGateway(config: GatewayConfig, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  refuseUncompilableOutputSchemas(config);
  await refuseRefusingRedis(config);
  let runtime = createRuntime(config, options);
  const { log } = runtime.state;
  // Each request is served by the runtime current when it arrives (a reload swaps it).
  const server = createGatewayServer(
    config,
    (req, res) => {
      // Draining: answer, then close the connection, so a keep-alive client's next request dials a fresh
      // one, which the load balancer (now seeing this instance unready) sends elsewhere.
      if (runtime.state.draining) res.setHeader('connection', 'close');
      runtime.listener(req, res);
    },
    unreadAnswerCut(runtime.state),
    unparsedRequestAccounting(log, runtime.state.metrics),
  );
  const retiring = new Set<Promise<void>>();
  /** Runtimes replaced by a reload whose requests (listen streams included) are still finishing. */
  const retiringRuntimes = new Set<Runtime>();
  let reloading: Promise<unknown> = Promise.resolve();
  let metricsServer: HttpServer | undefined;
  try {
    await listen(server, config.listen.port, config.listen.host);
    metricsServer = config.metrics.enabled && config.metrics.port !== undefined ? await startMetricsListener(runtime.state, config) : undefined;
    // The issuer identifier is fixed at creation: oauth.issuer or publicUrl, else the URL just bound.
    await runtime.startOAuth(urlOf(server, config.listen.host), () => runtime.state);
  } catch (error) {
    server.close();
    metricsServer?.close();
    await runtime.close();
    throw error;
  }
  runtime.warm();
  const stopReplicaCheck = checkReplicas(config, log, runtime.state.metrics);
  const sharedKeys = checkSharedKeys(
    () => runtime.state.config,
    log,
    Date.now,
    () => ({ cacheKey: processKeyId(), tokenKey: runtime.state.oauth?.generatedKeyId, auditKey: runtime.state.audit.generatedKey }),
  );
  const url = urlOf(server, config.listen.host);
  log.info({ url, upstreams: config.upstreams.map((u) => u.name), oauth: config.oauth.mode }, 'gateway listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    metricsUrl: metricsServer && urlOf(metricsServer, config.listen.host),
    close: (options) => (closing ??= shutdown(options?.drain === true, options?.reason)),
    reload(next) {
      const done = reloading
        .then(() => swap(typeof next === 'function' ? next() : next))
        .then(
          (plan) => {
            runtime.state.metrics.configReloads.inc({ outcome: 'applied' });
            return plan;
          },
          (error: unknown) => {
            const refused = error instanceof ConfigError || error instanceof ReloadRefused;
            runtime.state.metrics.configReloads.inc({ outcome: refused ? 'refused' : 'failed' });
            log.warn(
              { outcome: refused ? 'refused' : 'failed', key: (error as { keyPath?: string }).keyPath, reason: (error as Error).message },
              refused ? 'configuration not reloaded; the running configuration keeps serving' : 'configuration reload failed',
            );
            throw error;
          },
        );
      reloading = done.catch(() => undefined);
      return done;
    },
  };

  async function swap(next: GatewayConfig): Promise<ReloadPlan> {
    if (closing) throw new Error('the gateway is closing');
    const old = runtime;
    refuseUncompilableOutputSchemas(next);
    const plan = planReload(old.state.config, next);
    // A Redis the new configuration points the stores at must take it (the running one's already did).
    if (!isDeepStrictEqual(old.state.config.cache, next.cache) || old.state.config.rateLimits.store !== next.rateLimits.store) await refuseRefusingRedis(next);
    const byName = new Map(old.state.upstreams.map((u) => [u.client.name, u]));
    const reuse = new Map(
      plan.upstreams.flatMap(({ name, decision }) => (decision === 'replace' ? [] : [[name, { upstream: byName.get(name)!, decision }] as const])),
    );
    if (!options.logger) log.level = next.log.level;
    let pinStore = plan.pinStore === 'keep' ? old.state.pins.store : undefined;
    // The same lock file, read again: one that fails its checks refuses the reload as it refuses a start, and an edit of it
    // (a reviewed one pulled) applies once the reload is done (operator try-out: a hand-edited file was reported reloaded
    // unread, then overwritten; review: applied at once, a reload refused later had changed the pins in force all the same).
    const applyLockFile = pinStore && next.pinning.lockFile ? pinStore.readLockFileAgain?.() : undefined;
    // A pin store in a new place starts with what the old one holds (its own pins first): else every tool,
    // a held one at its changed definition included, would be pinned afresh at first sight. Carried before
    // the new runtime exists: its guard judges the kept upstreams' catalogues (requests the old runtime is
    // serving meanwhile included) from the moment it is made.
    if (plan.pinStore === 'replace') {
      const moved = createPinStore(next, old.state.metrics, log);
      try {
        const copied = await carryPins(old.state.pins.store, moved);
        if (copied > 0) log.info({ pins: copied }, 'pins carried over to the new pin store');
      } catch (error) {
        await moved.close().catch(() => {});
        const keyPath = old.state.config.pinning.lockFile !== next.pinning.lockFile ? 'pinning.lockFile' : 'cache';
        throw new ReloadRefused(keyPath, `it moves the pin store, and the pins in force could not be carried to the new one (${(error as Error).message})`);
      }
      pinStore = moved;
    }
    const rateLimiter = plan.rateLimiter === 'keep' ? old.state.rateLimiter : undefined;
    // Unchanged tracing (or tracing that stays off) is kept: its exporter, and one startup line per change.
    const tracing =
      isDeepStrictEqual(old.state.config.tracing, next.tracing) || (!old.state.tracing.enabled && next.tracing.exporter !== 'otlp' && !options.spanExporter)
        ? old.state.tracing
        : undefined;
    // Requests are served between the reload's steps (loading the file, building the runtime, its
    // authorization server, its catalogues and index): each is a few ms alone, tens of ms together. A
    // timer, not setImmediate: from an I/O callback (the signal) an immediate runs before any I/O is read.
    // Names the old configuration served stay callable where the new one renames their tools.
    // The moved pin store is this reload's own until the new runtime holds it: closed if none is built.
    const closeMoved = async () => {
      if (plan.pinStore === 'replace') await pinStore?.close().catch(() => {});
    };
    let aliases: Awaited<ReturnType<typeof old.state.upstreamSet.aliasesForNext>>;
    let fresh: Runtime;
    try {
      aliases = await old.state.upstreamSet.aliasesForNext(next.naming.aliasTtlMs, Math.max(...old.state.config.upstreams.map((u) => u.timeoutMs)));
      await delay(0);
      fresh = createRuntime(next, {
        ...options,
        logger: log,
        metrics: old.state.metrics,
        reuse,
        pinStore,
        pins: old.state.pins,
        rateLimiter,
        refusedCredentials: old.state.refusedCredentials,
        aliases,
        validators: { inputs: old.state.inputs, outputs: old.state.outputs },
        codeSandbox: old.state.codeSandbox,
        listenStreams: old.state.listenStreams,
        tracing,
        auditKey: old.state.audit.generatedKey,
      });
    } catch (error) {
      await closeMoved();
      throw error;
    }
    await delay(0);
    // Unchanged authorization settings keep the authorization server (its keys, sessions and tokens).
    const keepOAuth = old.state.oauth !== undefined && isDeepStrictEqual(old.state.config.oauth, next.oauth) && old.state.config.publicUrl === next.publicUrl;
    /** Closes the runtime a refused or failed reload built, and only what is its own: the old one keeps serving. */
    const abandon = async () => {
      // The upstreams it kept judge with the old runtime's guard again, and take their old settings back (timeoutMs, ...).
      for (const { catalog } of old.state.upstreams) catalog.guardWith(old.state.pins);
      for (const { upstream } of reuse.values())
        upstream.client.reconfigure(old.state.config.upstreams.find((u) => u.name === upstream.client.name)!, old.state.config.limits);
      await fresh.close(
        new Set<object>([
          ...old.state.upstreams.flatMap((u) => [u.client, u.catalog]),
          old.state.pins.store,
          old.state.codeSandbox,
          old.state.tracing,
          ...(old.state.rateLimiter ? [old.state.rateLimiter] : []),
          ...(keepOAuth ? [old.state.oauth!] : []),
        ]),
      );
      // Its own connections wrote mcp_upstream_up under the same names as they failed: the serving ones say again.
      for (const { client } of old.state.upstreams) old.state.metrics.upstreamUp.set({ upstream: client.name }, client.health().state === 'up' ? 1 : 0);
    };
    if (keepOAuth) fresh.state.oauth = old.state.oauth;
    else
      await fresh
        .startOAuth(url, () => runtime.state)
        .catch(async (error: unknown) => {
          await abandon();
          throw error;
        });
    // The old runtime serves until the new one has its catalogues and search index: no request waits
    // for a new upstream's connection or a rebuilt catalogue (bounded by the slowest upstream's timeout).
    fresh.state.upstreamSet.noting = false;
    // Its own new connections are on trial until it serves: a refusal is the reload's to say, not theirs (client.ts `trial`).
    const serving = new Set(old.state.upstreams.map((u) => u.client));
    const trial = fresh.state.upstreams.map((u) => u.client).filter((client) => !serving.has(client));
    for (const client of trial) client.trial = true;
    await fresh.prepare(Math.max(...next.upstreams.map((u) => u.timeoutMs)));
    const unreachable = unreachableReplacements(plan, old.state.upstreams, fresh.state.upstreams);
    if (unreachable) {
      await abandon();
      const index = next.upstreams.findIndex((u) => u.name === unreachable.name);
      throw new ReloadRefused(
        `upstreams[${index}]`,
        `its new connection (${unreachable.target}) could not be reached (${unreachable.reason}), while the one it replaces serves`,
      );
    }
    // Approvals made through the old runtime while this reload was under way went to the old store only.
    if (plan.pinStore === 'replace') {
      const approved = await carryPins(old.state.pins.store, fresh.state.pins.store, { approvals: true }).catch(async (error: unknown) => {
        await abandon();
        throw new ReloadRefused('pinning', `the pins approved during the reload could not be carried to the new pin store (${(error as Error).message})`);
      });
      if (approved > 0) log.info({ pins: approved }, 'pins approved during the reload carried over to the new pin store');
    }
    runtime = fresh;
    for (const client of trial) client.endTrial();
    // The new set notes exclusions from now on; the retiring one no more (an upstream the reload removed is no news).
    runtime.state.upstreamSet.noting = true;
    old.state.upstreamSet.noting = false;
    await applyLockFile?.();
    await delay(0);
    runtime.warm();
    log.info({ changed: plan.changed, upstreams: plan.upstreams, removed: plan.removed }, 'configuration reloaded');
    // Subscribed clients re-list: what each credential sees may have changed. A listen stream stays on
    // the runtime it was opened on until that one retires (shutdown.graceMs): those of runtimes still
    // retiring from earlier reloads are told too, or a second reload in that window went unannounced.
    // A reload of the same configuration changed no list (the catalogues and their versions are kept):
    // announcing it would make every listening client re-list for nothing on each periodic SIGHUP.
    if (plan.changed.length > 0) for (const earlier of [old, ...retiringRuntimes]) earlier.announceListsChanged();
    // Every runtime still retiring, not only the one just replaced: a script started before an unchanged reload runs on an
    // older one (review).
    if (plan.changed.length > 0) for (const earlier of [old, ...retiringRuntimes]) earlier.state.replacedByReload = true;
    retiringRuntimes.add(old);
    // Once the removed upstreams' clients are closed (their last state written), their gauges go.
    const retired = retire(old, next.shutdown.graceMs).then(() =>
      forgetUpstreams(
        runtime.state.metrics,
        // Not one a later reload brought back meanwhile.
        plan.removed.filter((name) => !runtime.state.config.upstreams.some((u) => u.name === name)),
      ).catch((error: unknown) => log.warn({ err: (error as Error).message }, 'gauges not cleared')),
    );
    retiring.add(retired);
    void retired.finally(() => {
      retiring.delete(retired);
      retiringRuntimes.delete(old);
    });
    return plan;
  }

  /**
   * What a runtime holds that a reload may hand to the next one (runtime.ts `close` leaves these open when another
   * runtime holds them): its upstreams' clients and catalogues, run_code's sandbox, the authorization server, the pin
   * store, tracing and the rate limiter.
   */
  function partsOf(held: Runtime): object[] {
    const { state } = held;
    const parts: (object | undefined)[] = [
      ...state.upstreams.flatMap((u) => [u.client, u.catalog]),
      state.codeSandbox,
      state.oauth,
      state.pins.store,
      state.tracing,
      state.rateLimiter,
    ];
    return parts.filter((part) => part !== undefined);
  }

  /**
   * Lets the old runtime finish the requests it is serving, then closes what was not carried over. Every
   * request other than a subscriptions/listen stream (a tool call, a read, a run_code run) runs to its end,
   * each bounded by its own timer (its upstream's `timeoutMs`, restarted by progress), at most
   * {@link RETIRE_MAX_MS}: a reload is no reason to cut a call short (try-out: a periodic SIGHUP killed every
   * call running past 10 s, with an empty 499, a write's outcome left unknown). Listen streams never end by
   * themselves: they close with the runtime, `graceMs` after the reload or when its last call ends if later
   * (their clients listen again, on the new configuration).
   */
  async function retire(old: Runtime, graceMs: number): Promise<void> {
    const started = Date.now();
    const { streamsOpen } = old.state;
    const callsMs = Math.max(graceMs, RETIRE_MAX_MS);
    const waiting = () => {
      // The gateway is shutting down and has closed every connection: nothing left to wait for (review).
      if (old.state.closingConnections) return false;
      const elapsed = Date.now() - started;
      const calls = old.inflight.count - streamsOpen.count;
      return (calls > 0 && elapsed < callsMs) || (old.inflight.count > 0 && elapsed < graceMs);
    };
    while (waiting()) await new Promise((r) => setTimeout(r, 25));
    // What another runtime still uses stays open, worked out now: a client an unchanged reload carried to the next runtime
    // is the older one's too, and closing it with that next runtime cut the older one's calls in flight (review).
    const inUse = new Set([runtime, ...retiringRuntimes].filter((other) => other !== old).flatMap(partsOf));
    await old.close(inUse).catch((error: unknown) => log.warn({ err: (error as Error).message }, 'closing the previous configuration failed'));
  }

  async function shutdown(drain: boolean, reason?: string): Promise<void> {
    stopReplicaCheck();
    sharedKeys.stop();
    const why = reason === undefined ? {} : { reason };
    log.info(why, 'gateway closing');
    const drainMs = runtime.state.config.shutdown.drainMs;
    if (drain && drainMs > 0) {
      runtime.state.draining = true;
      log.info({ drainMs }, 'draining: /readyz answers 503, still serving');
      await new Promise((resolve) => setTimeout(resolve, drainMs));
    }
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const deadline = Date.now() + runtime.state.config.shutdown.graceMs;
    while (runtime.inflight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const open = [runtime, ...retiringRuntimes];
    for (const each of open) each.state.closingConnections = true;
    // The calls still running are answered before their connections close: their upstream connections
    // close first, so each ends as the shutdown's ("may have run" for a write, with its outcome unknown),
    // and is written to a caller still connected, who can check before retrying elsewhere (a cut
    // connection left it an empty reply, and a retry on another replica could run the write twice: try-out).
    if (open.some((each) => each.inflight.count > each.state.streamsOpen.count)) {
      const answered = Date.now() + ANSWER_CUT_CALLS_MS;
      // Bounded: a stdio server's stop takes seconds, and one that never exits must not hold every connection open (review).
      await Promise.race([
        Promise.allSettled(open.flatMap((each) => each.state.upstreams.map((u) => u.client.close()))),
        new Promise((resolve) => setTimeout(resolve, ANSWER_CUT_CALLS_MS).unref()),
      ]);
      while (open.some((each) => each.inflight.count > each.state.streamsOpen.count) && Date.now() < answered) await new Promise((r) => setTimeout(r, 10));
    }
    // Listen streams ended cleanly (their clients listen again, elsewhere), not cut with their connections (operator try-out).
    await Promise.race([Promise.allSettled(open.map((each) => each.endStreams())), new Promise((resolve) => setTimeout(resolve, ANSWER_CUT_CALLS_MS).unref())]);
    server.closeAllConnections();
    try {
      await stopped;
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
    } finally {
      try {
        await reloading;
        await Promise.allSettled(retiring);
        await runtime.close();
      } finally {
        log.info(why, 'gateway closed');
        log.flush?.();
      }
    }
  }
}

/** At the end of a shutdown's grace, how long closing the upstream connections, and the calls that ended get to write their answers, may take (ms). */
const ANSWER_CUT_CALLS_MS = 1000;

/** The longest a retiring configuration waits for its calls in flight (1 h): a call whose progress keeps restarting its timer ends then. */
const RETIRE_MAX_MS = 3_600_000;

/**
 * The first upstream a reload gives a new connection (plan decision `replace`: its URL, command or another
 * connection key changed) that the new runtime could not connect to while the same-named upstream of the
 * running configuration serves (connected, its catalogue at hand): switching would trade working tools
 * for none, which is what a mistyped URL does, so the reload is refused instead (gateway.ts swap). An
 * upstream that was down before, or new, is switched to as it is (it serves once it can be reached).
 */
function unreachableReplacements(
  plan: ReloadPlan,
  running: readonly UpstreamRuntime[],
  next: readonly UpstreamRuntime[],
): { name: string; target: string; reason: string } | undefined {
  for (const { name, decision } of plan.upstreams) {
    if (decision !== 'replace') continue;
    const before = running.find((u) => u.client.name === name);
    const after = next.find((u) => u.client.name === name);
    if (!before || !after || before.client.health().state !== 'up' || before.catalog.lastCatalog() === undefined) continue;
    const health = after.client.health();
    // Refused at connect, or still trying past the deadline. Connected (a slow catalogue is served once it
    // comes, as before), or `idle` after a 401 (it answers; a caller's credential is what it asks for): switched to.
    if ((health.state !== 'down' && health.state !== 'connecting') || after.catalog.lastCatalog() !== undefined) continue;
    const { config } = after.client;
    const target = config.url !== undefined ? loggableUrl(config.url) : `"${config.command}"`;
    return { name, target, reason: health.reason ?? `no connection within its timeoutMs (${config.timeoutMs} ms)` };
  }
  return undefined;
}

function listen(server: HttpServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function urlOf(server: HttpServer, host: string): string {
  const { port } = server.address() as AddressInfo;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${port}`;
}

/**
 * `metrics.port`: `/metrics` on its own listener, bound like the main one (`listen.host`) and behind the
 * same Host/Origin guard (edge.ts `originGuard`), so a DNS-rebinding page cannot read it either.
 */
async function startMetricsListener(runtime: GatewayRuntime, config: GatewayConfig): Promise<HttpServer> {
  const app = new Koa();
  app.silent = true;
  const route = metricsRoute(runtime);
  app.use(originGuard(config));
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics') return;
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return route(ctx, next);
    // As the main listener answers a served path asked with another method (app.ts): 405 naming what it serves (SRE try-out: POST was 200).
    ctx.set('allow', 'HEAD, GET');
    rejectAtEdge(ctx, 'method_not_allowed', `Method Not Allowed: /metrics answers HEAD, GET, not ${ctx.method}`);
  });
  // Not counted in http_request_duration_seconds, as its parsed requests are not (review): no unparsed accounting either.
  const server = createGatewayServer(config, app.callback(), unreadAnswerCut(runtime));
  await listen(server, config.metrics.port!, config.listen.host);
  return server;
}

/**
 * What a listener does when it resets a connection whose client left an answer unread for
 * `server.sendTimeoutMs` (http/send-timeout.ts): counts it and logs one line. The metrics and the logger
 * outlive reloads, so the first runtime's serve every later one.
 */
function unreadAnswerCut({ metrics, log, config }: GatewayRuntime): (cut: UnreadAnswer) => void {
  const { sendTimeoutMs } = config.server;
  return (cut) => {
    metrics.sendTimeouts.inc();
    log.warn({ ...cut, sendTimeoutMs }, 'connection reset: its client took none of the answer for server.sendTimeoutMs');
  };
}

/**
 * Refuses a configuration whose `upstreams[].outputSchemas` override does not compile (the engine its
 * `$schema` names, checks/schema-compiler.ts), or holds a pattern RE2 cannot run (left unchecked): it would be advertised as it is, and the tool served
 * unchecked, with one warning at its first call (try-out). An upstream's own schema that does not compile
 * still degrades only its tool: that is the upstream's, not the operator's, to fix.
 * @throws ConfigError keyed `upstreams[i].outputSchemas.<tool>`, with the engine's reason.
 */
function refuseUncompilableOutputSchemas(config: GatewayConfig): void {
  const compiler = new SchemaCompiler();
  config.upstreams.forEach((upstream, i) => {
    for (const [tool, schema] of Object.entries(upstream.outputSchemas)) {
      const { entry } = compiler.compile(`${i}:${tool}`, schema as Record<string, unknown>);
      if ('compileError' in entry) throw new ConfigError(`upstreams[${i}].outputSchemas.${tool}`, `is not a JSON Schema that compiles: ${entry.compileError}`);
      // The operator's own schema: a pattern the gateway cannot run would go unchecked, which it can fix at once.
      if (entry.unchecked) throw new ConfigError(`upstreams[${i}].outputSchemas.${tool}`, `has a pattern the gateway cannot check: ${entry.unchecked[0]}`);
    }
  });
}

/**
 * Refuses a configuration whose Redis (`cache.redisUrl`: the cache, pins, rate-limit counters, OAuth
 * state) answers but refuses it: wrong credentials or rights (WRONGPASS, NOAUTH, NOPERM), or a database
 * index it does not have. Waiting cannot fix that, and the gateway would otherwise start and serve every
 * store degraded for good. A Redis that does not answer is an outage the stores ride out: not refused.
 * @throws ConfigError keyed `cache.redisUrl`, with Redis's reply (never the URL: it holds the password).
 */
async function refuseRefusingRedis(config: GatewayConfig): Promise<void> {
  if (config.cache.store !== 'redis' && config.rateLimits.store !== 'redis') return;
  if (!config.cache.redisUrl) return;
  const refusal = await redisRefusal(config.cache, Math.max(config.cache.operationTimeoutMs, 1000));
  if (refusal) throw new ConfigError('cache.redisUrl', `Redis refused the connection (${refusal}); waiting cannot fix this`);
}
