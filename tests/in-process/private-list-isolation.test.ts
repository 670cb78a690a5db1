/**
 * The catalogue cache never serves a list marked `private` to a credential other than the one it was
 * fetched with, whatever the upstream said before (issue 12: when an upstream's tools/list turned from
 * `cacheScope: public` to `private`, concurrent callers sharing the refresh were served the list
 * fetched with whichever caller started it). In process, with the memory store and with Redis
 * (`redis-server` on a free port; skipped only outside CI).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { inMemoryFakeUpstream, inProcessGateway, type InMemoryUpstream } from '../helpers/in-process.ts';
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.ts';

const CALLERS = ['alice', 'bob', 'carol', 'dave', 'erin'];
const ROUNDS = 60;
/** The upstream's list TTL: each round waits it out, so every round refetches and may flip the scope. */
const LIST_TTL_MS = 25;
/** Each store's budget for its rounds: the Redis rounds passed 60 s on a 2-core machine at load 25. */
const ROUND_BUDGET_MS = 180_000;

/**
 * An upstream whose tools/list depends on the caller (its bearer token) and flips its cache scope per
 * round: `public` rounds answer one list for everyone (`shared_<round>`), `private` rounds answer the
 * caller's own (`own_<caller>_<round>`). Each list answer takes a few ms, so concurrent refreshes overlap.
 */
function flippingUpstream(): InMemoryUpstream & { setRound(round: number): void } {
  let round = 0;
  const scope = (r: number) => (r % 2 === 0 ? 'public' : 'private');
  // The hint is read when a request arrives, the list a few ms later: a request that spans a change of
  // round (the gateway's keep-warm, say, under load) is answered in the round its hint said, so that the
  // upstream never labels a caller's own list public (which the gateway would rightly share).
  const hinted = new Map<string, number>();
  const upstream = inMemoryFakeUpstream({
    toolsListHint: (caller) => {
      hinted.set(caller, round);
      return { ttlMs: LIST_TTL_MS, cacheScope: scope(round) };
    },
    tools: async (caller) => {
      const r = hinted.get(caller) ?? round;
      await new Promise((resolve) => setTimeout(resolve, 3));
      const name = scope(r) === 'public' ? `shared_${r}` : `own_${caller || 'nobody'}_${r}`;
      return [{ definition: { name, description: 'per-caller listing', inputSchema: { type: 'object', properties: {} } } }];
    },
  });
  return Object.assign(upstream, { setRound: (r: number) => void (round = r) });
}

/** Runs the rounds and returns every answer that carried a tool meant for another caller. */
async function leakedAnswers(config: DeepPartial<GatewayConfig>): Promise<{ leaks: string[]; privateAnswers: number }> {
  const upstream = flippingUpstream();
  const gateway = inProcessGateway(config, { upstreams: { flipping: upstream } });
  const clients = new Map<string, Client>();
  try {
    for (const caller of CALLERS) {
      const client = new Client({ name: `caller-${caller}`, version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new StreamableHTTPClientTransport(gateway.mcpUrl, { fetch: gateway.fetchWith({ authorization: `Bearer ${caller}` }) }));
      clients.set(caller, client);
    }
    const leaks: string[] = [];
    let privateAnswers = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      upstream.setRound(round);
      await new Promise((resolve) => setTimeout(resolve, LIST_TTL_MS + 5));
      const answers = await Promise.all(CALLERS.map(async (caller) => ({ caller, names: (await clients.get(caller)!.listTools()).tools.map((t) => t.name) })));
      for (const { caller, names } of answers) {
        for (const name of names) {
          const owner = /^own_(\w+)_\d+$/.exec(name)?.[1];
          if (owner !== undefined) privateAnswers++;
          if (owner !== undefined && owner !== caller) leaks.push(`round ${round}: ${caller} got ${name}`);
        }
      }
    }
    return { leaks, privateAnswers };
  } finally {
    for (const client of clients.values()) await client.close().catch(() => undefined);
    await gateway.close();
  }
}

// Skipped only outside CI: under CI=true a missing redis-server fails the suite instead of hiding it.
describe('a tools/list that turns from public to private is never served to another credential', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => void (hasRedis && (redis = await startRedis())));
  afterAll(() => redis?.kill());

  // The two stores run at the same time, each with its own gateway and upstream: their rounds' waits
  // for the TTL overlap.
  it.concurrent(
    `memory store: ${ROUNDS} concurrent rounds of ${CALLERS.length} callers, 0 answers with another caller's tools`,
    async ({ expect }) => {
      const { leaks, privateAnswers } = await leakedAnswers({});
      expect(leaks).toEqual([]);
      // The private rounds really were served (the test can fail): every caller, every private round.
      expect(privateAnswers).toBeGreaterThanOrEqual((ROUNDS / 2) * CALLERS.length);
    },
    ROUND_BUDGET_MS,
  );

  it.skipIf(!hasRedis).concurrent(
    `Redis store: ${ROUNDS} concurrent rounds of ${CALLERS.length} callers, 0 answers with another caller's tools`,
    async ({ expect }) => {
      const { leaks, privateAnswers } = await leakedAnswers({ cache: { store: 'redis', redisUrl: redis!.url } });
      expect(leaks).toEqual([]);
      expect(privateAnswers).toBeGreaterThanOrEqual((ROUNDS / 2) * CALLERS.length);
    },
    ROUND_BUDGET_MS,
  );
});
