/**
 * The built-in authorization server under attack (issue 28), measured on the reference stack (platform
 * and reference upstream in one process, each gateway replica in its own process, config/cpzai.yaml),
 * once with the memory store and once with Redis, two replicas each:
 *
 *   npm run bench:oauth-attack                          both stores (Redis: needs redis-server on PATH)
 *   npm run bench:oauth-attack -- --store redis         one store
 *   npm run bench:oauth-attack -- --flood 10000 --revocation-flood 100000 --races 100 --stored 20000
 *
 * Ports: the replicas listen on BENCH_PORT_BASE (4200) and BENCH_PORT_BASE+3, Redis on +10; the
 * backends take free ports. Attackers are told apart by their source address (127.0.0.x: the gateway
 * trusts no X-Forwarded-For). What it prints (JSON, one object per store):
 * - flood: `--flood` RFC 7591 registrations from one address, alternating replicas: how many 201 and
 *   429, each replica's RSS growth (after a full GC, MB), Redis used_memory growth (MB), and the
 *   Redis keys written without a TTL (must be none);
 * - revocation: an access token and a refresh token revoked, then `--revocation-flood` registrations
 *   (memory store: default bounds, so nearly all are 429) and, with `--stored N`, N registrations
 *   that are all stored (registration budgets lifted, client_name of 3 KB: the 64 MiB
 *   oauth.memoryStoreBytes fills and evicts); Redis: both replicas restarted. Both tokens must stay refused;
 * - races: `--races` tries of 20 concurrent refreshes of one refresh token split across both replicas
 *   (memory store: one replica, its store is its own): successes per try (at most 1), and whether the
 *   family is dead afterwards (the first access token, the winner's tokens refused);
 * - guessing: 40 concurrent wrong secrets and then a stream for `--stream-seconds`, aimed at one key,
 *   at one address (every guess a new key), and at one client (from 200 addresses): how many reached
 *   the key check (mcp_oauth_refusals_total{endpoint="sign_in",reason="invalid_credentials"} over both
 *   replicas) against rateLimits.signIns (per replica with the memory store, shared with Redis).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import type { DeepPartial, GatewayConfig } from '../config/load.ts';
import { authorizeUrl, csrfOf, Jar, oauthClient, pkce, REDIRECT_URI, step } from '../tests/helpers/oauth-harness.ts';
import { startServiceProcess, stopAll, waitReady, type ServiceProcess } from './services.ts';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    flood: { type: 'string', default: '10000' },
    'revocation-flood': { type: 'string', default: '100000' },
    stored: { type: 'string', default: '0' },
    races: { type: 'string', default: '100' },
    'stream-seconds': { type: 'string', default: '20' },
  },
});
const FLOOD = Number(args.flood);
const REVOCATION_FLOOD = Number(args['revocation-flood']);
const STORED = Number(args.stored);
const RACES = Number(args.races);
const STREAM_MS = Number(args['stream-seconds']) * 1000;
const BASE = Number(process.env.BENCH_PORT_BASE ?? 4200);
const PORTS = [BASE, BASE + 3];
const REDIS_PORT = BASE + 10;
const ISSUER = `http://127.0.0.1:${PORTS[0]}`;
const MB = 1024 * 1024;
/** The reference platform's demo key (upstream/platform/credentials.ts) and what the sign-ins ask for. */
const USER = { key: 'cpz_demo_data', secret: 'demo-secret-data' };

// --- requests from a chosen source address, to a chosen replica ------------------------------------
const agents = new Map<string, Agent>();
function agentFor(address: string): Agent {
  let agent = agents.get(address);
  if (!agent) agents.set(address, (agent = new Agent({ localAddress: address, connections: 32 })));
  return agent;
}
/** A fetch for oauthClient: the request names the issuer; it goes to `origin` from `address`. */
function via(origin: string, address = '127.0.0.1') {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
    const headers = Object.fromEntries([...request.headers].filter(([name]) => name !== 'host'));
    const response = await undiciFetch(`${origin}${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body,
      redirect: 'manual',
      dispatcher: agentFor(address),
    });
    return response as unknown as Response;
  };
}
const clientOf = (origin: string, address?: string) => oauthClient(ISSUER, via(origin, address));

// --- services --------------------------------------------------------------------------------------
const redisCli = (...a: string[]) => spawnSync('redis-cli', ['-p', String(REDIS_PORT), ...a], { encoding: 'utf8' }).stdout.trim();
async function startRedis(): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100 && redisCli('PING') !== 'PONG'; i++) await sleep(50);
  if (redisCli('PING') !== 'PONG') throw new Error(`redis-server did not answer on ${REDIS_PORT}`);
  return child;
}
const usedMemory = () => Number(/used_memory:(\d+)/.exec(redisCli('INFO', 'memory'))![1]);

function gatewayOverrides(
  port: number,
  backends: ServiceProcess,
  store: 'memory' | 'redis',
  extra: DeepPartial<GatewayConfig> = {},
): DeepPartial<GatewayConfig> {
  return {
    ...extra,
    listen: { host: '127.0.0.1', port },
    publicUrl: ISSUER,
    log: { level: 'warn' },
    upstreams: [{ name: 'cpzai', url: backends.urls.upstream! }],
    scopes: { endpoint: `${backends.urls.platform}/v1/me` },
    metrics: { enabled: true },
    oauth: { mode: 'builtin', tokenSecret: 'bench-token-secret-0123456789abcdef', ...extra.oauth },
    ...(store === 'redis'
      ? {
          cache: { store: 'redis', redisUrl: `redis://127.0.0.1:${REDIS_PORT}`, key: 'bench-cache-key-0123456789abcdef0123' },
          rateLimits: { ...extra.rateLimits, store: 'redis' },
        }
      : { rateLimits: { ...extra.rateLimits } }),
  };
}
async function startReplicas(backends: ServiceProcess, store: 'memory' | 'redis', extra?: DeepPartial<GatewayConfig>): Promise<ServiceProcess[]> {
  const replicas = await Promise.all(
    PORTS.map((port, i) =>
      startServiceProcess({ gateway: { overrides: gatewayOverrides(port, backends, store, extra) } }, { name: `gateway-${store}-${i}`, exposeGc: true }),
    ),
  );
  await Promise.all(replicas.map((r) => waitReady(r.urls.gateway!)));
  return replicas;
}
const origins = PORTS.map((port) => `http://127.0.0.1:${port}`);

/** Sum over the replicas of one sample of their /metrics (a counter's labels as written there). */
async function counter(line: string): Promise<number> {
  let sum = 0;
  for (const origin of origins) {
    const text = await (await undiciFetch(`${origin}/metrics`)).text();
    const found = text.split('\n').find((l) => l.startsWith(`${line} `));
    sum += found ? Number(found.slice(line.length + 1)) : 0;
  }
  return sum;
}
const CHECKED = 'mcp_oauth_refusals_total{endpoint="sign_in",reason="invalid_credentials"}';

// --- the measurements ------------------------------------------------------------------------------
/** `count` registrations from `address`, `concurrency` at a time, alternating replicas: statuses counted. */
async function registrations(count: number, address: string, options: { clientName?: string; concurrency?: number } = {}) {
  const statuses: Record<number, number> = {};
  const dispatcher = agentFor(address);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const response = await undiciFetch(`${origins[i % origins.length]}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: options.clientName ?? `flood ${i}`, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
        dispatcher,
      });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker));
  return { statuses, perSecond: Math.round((count / (Date.now() - started)) * 1000) };
}

async function flood(replicas: ServiceProcess[], store: string) {
  const before = await Promise.all(replicas.map((r) => r.memory(true)));
  const redisBefore = store === 'redis' ? usedMemory() : 0;
  const result = await registrations(FLOOD, '127.0.0.2');
  const after = await Promise.all(replicas.map((r) => r.memory(true)));
  return {
    registrations: FLOOD,
    ...result,
    rssGrowthMb: after.map((a, i) => round((a.rss - before[i]!.rss) / MB)),
    heapGrowthMb: after.map((a, i) => round((a.heapUsed - before[i]!.heapUsed) / MB)),
    ...(store === 'redis' ? { redisUsedMemoryGrowthMb: round((usedMemory() - redisBefore) / MB) } : {}),
  };
}

/** Every Redis key without a TTL (TTL -1; -2 is a key that expired or was deleted since the scan), by its first three ':' parts. */
function keysWithoutTtl(): { keys: number; oauthKeys: number; withoutTtl: Record<string, number> } {
  const keys = redisCli('--scan').split('\n').filter(Boolean);
  const withoutTtl: Record<string, number> = {};
  for (const key of keys) {
    if (Number(redisCli('TTL', key)) !== -1) continue;
    const kind = key.split(':').slice(0, 3).join(':');
    withoutTtl[kind] = (withoutTtl[kind] ?? 0) + 1;
  }
  return { keys: keys.length, oauthKeys: keys.filter((k) => k.startsWith('mcp-gateway:oauth:')).length, withoutTtl };
}

/** A signed-in user whose access token and (another sign-in's) refresh token are revoked. */
async function revokedTokens(origin: string) {
  const oauth = clientOf(origin);
  const { client_id } = await oauth.register();
  const one = await oauth.tokens(client_id, USER);
  const two = await oauth.tokens(client_id, USER);
  if (one.status !== 200 || two.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify([one.body, two.body])}`);
  const revoked = [await oauth.revoke(client_id, String(one.body.access_token)), await oauth.revoke(client_id, String(two.body.refresh_token))];
  if (revoked.some((r) => r.status !== 200)) throw new Error('revocation refused');
  return { clientId: client_id, access: String(one.body.access_token), refresh: String(two.body.refresh_token), liveRefresh: String(one.body.refresh_token) };
}
/** Whether the revoked access token is refused (401 on /mcp) and the revoked refresh token too (invalid_grant), at `origin`. */
async function stillRefused(origin: string, tokens: Awaited<ReturnType<typeof revokedTokens>>) {
  const oauth = clientOf(origin);
  const access = (await oauth.listTools(tokens.access)).status;
  const refresh = await oauth.refresh(tokens.clientId, tokens.refresh);
  return { accessStatus: access, refreshError: refresh.body.error ?? refresh.status, refused: access === 401 && refresh.body.error === 'invalid_grant' };
}

async function races(clientId: string, originsUsed: string[]) {
  const successes: Record<number, number> = {};
  let familiesAlive = 0;
  const oauth = originsUsed.map((o) => clientOf(o));
  for (let round = 0; round < RACES; round++) {
    const signedIn = await oauth[0]!.tokens(clientId, USER);
    if (signedIn.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(signedIn.body)}`);
    const refresh = String(signedIn.body.refresh_token);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => oauth[i % oauth.length]!.refresh(clientId, refresh)));
    const won = answers.filter((a) => a.status === 200);
    successes[won.length] = (successes[won.length] ?? 0) + 1;
    // The family is dead: the first access token and every winner's tokens are refused on every replica.
    let alive = false;
    for (const o of oauth) {
      if ((await o.listTools(String(signedIn.body.access_token))).status !== 401) alive = true;
      for (const w of won) {
        if ((await o.listTools(String(w.body.access_token))).status !== 401) alive = true;
        if ((await o.refresh(clientId, String(w.body.refresh_token))).status === 200) alive = true;
      }
    }
    if (alive) familiesAlive++;
  }
  return { tries: RACES, concurrent: 20, triesBySuccesses: successes, familiesAliveAfter: familiesAlive };
}

/** A sign-in page of `clientId` opened from `address` at `origin`: where to post and its form token. */
async function openPage(origin: string, clientId: string, address: string) {
  const jar = new Jar();
  const serve = via(origin, address);
  const send = ((url: string, init?: RequestInit) => serve(new Request(url, init))) as typeof fetch;
  const p = pkce();
  let response = await step(
    jar,
    authorizeUrl(ISSUER, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'accounts:read',
      resource: `${ISSUER}/mcp`,
      state: 's',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    }),
    undefined,
    {},
    send,
  );
  const interaction = new URL(response.headers.get('location')!, ISSUER).href;
  response = await step(jar, interaction, undefined, {}, send);
  const csrf = csrfOf(await response.text());
  return { attempt: async (key: string, secret: string) => (await step(jar, `${interaction}/login`, { csrf, key, secret }, {}, send)).status };
}

/** 40 concurrent guesses (8 pages x 5), then a stream for STREAM_MS: the key checks they caused. */
async function guessing(targets: string[], clientId: string, guess: (i: number) => { key: string; address: string }) {
  const statuses: Record<number, number> = {};
  const before = await counter(CHECKED);
  let i = 0;
  let pages = 0;
  // Pages alternate between the replicas; every attempt of a page goes where the page was opened.
  const page = async () => {
    // A page's attempts all come from the address it was opened from.
    const n = pages++;
    const p = await openPage(targets[n % targets.length]!, clientId, guess(n * 5).address);
    return Array.from({ length: 5 }, () => {
      const g = guess(i++);
      return () => p.attempt(g.key, `wrong-secret-${i}`);
    });
  };
  const burst = (await Promise.all(Array.from({ length: 8 }, page))).flat();
  for (const status of await Promise.all(burst.map((attempt) => attempt()))) statuses[status] = (statuses[status] ?? 0) + 1;
  const afterBurst = (await counter(CHECKED)) - before;
  const deadline = Date.now() + STREAM_MS;
  let streamed = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (Date.now() < deadline) {
        for (const attempt of await page()) {
          const status = await attempt();
          statuses[status] = (statuses[status] ?? 0) + 1;
          streamed++;
        }
      }
    }),
  );
  return { burst: 40, streamed, statuses, checkedInBurst: afterBurst, checked: (await counter(CHECKED)) - before };
}

async function measure(store: 'memory' | 'redis', backends: ServiceProcess) {
  const redis = store === 'redis' ? await startRedis() : undefined;
  let replicas = await startReplicas(backends, store);
  const out: Record<string, unknown> = { store, replicas: replicas.length };
  try {
    // Clients for the later parts, registered before the flood spends the registration budgets.
    const a = clientOf(origins[0]!);
    const raceClient = (await a.register()).client_id;
    const guessClients = [(await a.register()).client_id, (await a.register()).client_id, (await a.register()).client_id];
    const revoked = await revokedTokens(origins[0]!);

    out.flood = await flood(replicas, store);
    if (redis) out.redisKeys = keysWithoutTtl();

    if (store === 'memory') {
      const flooded = await registrations(REVOCATION_FLOOD, '127.0.0.3', { concurrency: 32 });
      out.revocation = { registrations: REVOCATION_FLOOD, ...flooded, ...(await stillRefused(origins[0]!, revoked)) };
    } else {
      await stopAll(replicas);
      replicas = await startReplicas(backends, store);
      out.revocation = { afterRestart: await Promise.all(origins.map((o) => stillRefused(o, revoked))) };
    }

    out.races = await races(raceClient, store === 'redis' ? origins : [origins[0]!]);

    const { signIns } = (await import('../config/load.ts')).loadConfig({ env: {} }).rateLimits;
    // Memory store: a client exists on the replica it registered with, so the guesses go there (the other keeps budgets of its own).
    const guessed = store === 'redis' ? origins : [origins[0]!];
    out.guessing = {
      budgets: { perKey: signIns.perKey, perClient: signIns.perClient, perAddress: signIns.perAddress, scope: store === 'redis' ? 'shared' : 'per replica' },
      oneKey: await guessing(guessed, guessClients[0]!, () => ({ key: 'cpz_guess_target', address: '127.0.0.4' })),
      oneAddress: await guessing(guessed, guessClients[1]!, (i) => ({ key: `cpz_guess_a${i}`, address: '127.0.0.5' })),
      oneClient: await guessing(guessed, guessClients[2]!, (i) => ({ key: `cpz_guess_c${i}`, address: `127.0.1.${1 + (i % 200)}` })),
    };
  } finally {
    await stopAll(replicas);
  }

  if (store === 'memory' && STORED > 0) {
    // Registrations stored, not refused: budgets lifted, documents of ~3 KB, the byte-bounded store evicting.
    const lifted = { rateLimits: { registrations: { perAddress: { points: 1e9, durationMs: 3_600_000 }, total: { points: 1e9, durationMs: 3_600_000 } } } };
    replicas = await startReplicas(backends, store, lifted);
    try {
      const revoked = await revokedTokens(origins[0]!);
      const before = await replicas[0]!.memory(true);
      const flooded = await registrations(STORED, '127.0.0.6', { clientName: 'x'.repeat(3000), concurrency: 32 });
      const after = await replicas[0]!.memory(true);
      out.revocationStored = {
        registrations: STORED,
        ...flooded,
        heapGrowthMb: round((after.heapUsed - before.heapUsed) / MB),
        ...(await stillRefused(origins[0]!, revoked)),
      };
    } finally {
      await stopAll(replicas);
    }
  }
  redis?.kill('SIGKILL');
  return out;
}

const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const backends = await startServiceProcess({ reference: true }, { name: 'backends' });
try {
  for (const store of args.store === 'both' ? (['memory', 'redis'] as const) : [args.store as 'memory' | 'redis']) {
    console.log(JSON.stringify(await measure(store, backends), null, 2));
  }
} finally {
  await backends.stop();
  await Promise.all([...agents.values()].map((a) => a.close()));
}
