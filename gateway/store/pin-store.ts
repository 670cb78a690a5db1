import { randomUUID } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/client';
import type { GatewayConfig } from '../../config/types.ts';
import { outageLog, type Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { closeRedisConnection, createRedisConnection } from './redis-connection.ts';
import { DeadlineExceeded, withinDeadline } from './deadline.ts';

/**
 * Where tool definition pins live (issue 30): per upstream, the definition each tool was pinned with
 * and the changed definition waiting for an operator. In memory (one process; carried over live
 * reloads), or in Redis so that every replica compares against the same pins and an approval on one
 * reaches the others (they poll {@link PinStore.revision}). Unlike the caches (store/kv-store.ts), a
 * pin store never answers "absent" for "unreachable": a failed read throws {@link PinStoreUnavailable},
 * so an outage can never make a changed definition look like a first sight.
 */
export interface PinStore {
  readonly kind: 'memory' | 'redis';
  /**
   * With `pinning.lockFile` only (store/pin-lock-file.ts): reads and checks the file again, as a reload that
   * keeps it does (an operator who edited it, or pulled a reviewed one, and sent SIGHUP), and returns what
   * applies its pins as at start, for when the reload is done. @throws ConfigError (`pinning.lockFile`) as
   * at start: the reload is refused, nothing applied.
   */
  readLockFileAgain?(): () => Promise<void>;
  /** Every pin of `upstream`, by the upstream's own tool name. @throws PinStoreUnavailable */
  pins(upstream: string): Promise<Map<string, PinRecord>>;
  /** Every change of `upstream` waiting for approval. @throws PinStoreUnavailable */
  pending(upstream: string): Promise<Map<string, PendingChange>>;
  /**
   * Pins each record whose tool has no pin yet (the first replica to see a tool wins); resolves with the
   * pins in force afterwards for those tools. @throws PinStoreUnavailable
   */
  pinAllIfAbsent(upstream: string, records: readonly (readonly [string, PinRecord])[]): Promise<Map<string, PinRecord>>;
  /** Records (or replaces) changes waiting for approval, by tool name. @throws PinStoreUnavailable */
  notePendingAll(upstream: string, changes: readonly (readonly [string, PendingChange])[]): Promise<void>;
  /** Forgets a waiting change (the upstream went back to the pinned definition). @throws PinStoreUnavailable */
  clearPending(upstream: string, name: string): Promise<void>;
  /**
   * Makes the waiting change of `name` its pin (`by: approval`), forgets the change and bumps the
   * revision. With `digest`, only when the waiting change is that definition (what the operator saw).
   * @returns the new pin; `none` when nothing waits; `stale` when the waiting change is another digest.
   * @throws PinStoreUnavailable
   */
  approve(upstream: string, name: string, digest?: string): Promise<PinRecord | 'none' | 'stale'>;
  /** Sets the pin of `name` whatever it was (a lock file's pin at start) and renews the revision. @throws PinStoreUnavailable */
  setPin(upstream: string, name: string, record: PinRecord): Promise<void>;
  /** A value that changes whenever an approval is made anywhere. @throws PinStoreUnavailable */
  revision(): Promise<string>;
  /** The upstreams that have pins or waiting changes. @throws PinStoreUnavailable */
  upstreams(): Promise<string[]>;
  close(): Promise<void>;
}

/** The definition a tool is pinned with: served (or compared against) until an operator approves another. */
export interface PinRecord {
  /** definitionDigest (catalog/pinning.ts) of `definition`. */
  digest: string;
  /** The definition as the upstream sent it (before the gateway's own changes). */
  definition: Tool;
  /** ISO 8601. */
  pinnedAt: string;
  /** `first_sight`: trusted on first use; `approval`: an operator approved it (console or CLI). */
  by: 'first_sight' | 'approval';
}

/** A definition the upstream lists that differs from the pin (or has no pin, or has lint findings), waiting for an operator. */
export interface PendingChange {
  digest: string;
  definition: Tool;
  /** ISO 8601, when a gateway first saw this digest. */
  seenAt: string;
  /** `changed`: differs from its pin; `new`: no pin (pinning.newTools: hold); `lint`: findings held (pinning.lint: hold). */
  kind: 'changed' | 'new' | 'lint';
}

/**
 * Pins of `from` that `to` lacks, copied into `to` (`pinAllIfAbsent`: a pin `to` already holds wins, as a
 * reviewed lock file's does): a live reload that moves the pin store (`pinning.lockFile`, `cache.store`)
 * keeps what was approved approved and what is held held, where the new store alone would pin every tool's
 * current definition at first sight, a changed one included. Waiting changes `to` lacks are copied too
 * (without them, an upstream renamed by the same reload would not find the change held under its old name:
 * catalog/pinning.ts `carriedOver`). With `approvals`, also a pin of `from` that an operator approved after
 * `to`'s pin of the same tool was made (an approval made through the old runtime while the reload was under
 * way: the second carry, just before the switch). Resolves with the number of pins copied.
 * @throws PinStoreUnavailable when either store cannot be read or written (nothing is half decided: the caller refuses the reload).
 */
export async function carryPins(from: PinStore, to: PinStore, options: { approvals?: boolean } = {}): Promise<number> {
  let copied = 0;
  for (const upstream of await from.upstreams()) {
    if (!options.approvals) {
      const theirs = await to.pending(upstream);
      const waiting = [...(await from.pending(upstream))].filter(([name]) => !theirs.has(name));
      if (waiting.length > 0) await to.notePendingAll(upstream, waiting);
    }
    const pins = await from.pins(upstream);
    if (pins.size === 0) continue;
    const present = await to.pins(upstream);
    const missing = [...pins].filter(([name]) => !present.has(name));
    if (missing.length > 0) {
      await to.pinAllIfAbsent(upstream, missing);
      copied += missing.length;
    }
    if (!options.approvals) continue;
    for (const [name, pin] of pins) {
      const theirs = present.get(name);
      if (!theirs || pin.by !== 'approval' || pin.digest === theirs.digest || pin.pinnedAt <= theirs.pinnedAt) continue;
      await to.setPin(upstream, name, pin);
      copied += 1;
    }
  }
  return copied;
}

/** The pin store could not be read or written (Redis down or slow); nothing was decided from it. */
export class PinStoreUnavailable extends Error {
  constructor(cause: unknown) {
    super(`pin store unavailable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'PinStoreUnavailable';
  }
}

/** In one process: the store of a gateway without Redis (a live reload hands it to the new runtime). */
export function memoryPinStore(): PinStore {
  const pins = new Map<string, Map<string, PinRecord>>();
  const pending = new Map<string, Map<string, PendingChange>>();
  let revision = 0;
  const of = <T>(maps: Map<string, Map<string, T>>, upstream: string) => {
    let map = maps.get(upstream);
    if (!map) maps.set(upstream, (map = new Map()));
    return map;
  };
  return {
    kind: 'memory',
    pins: async (upstream) => new Map(of(pins, upstream)),
    pending: async (upstream) => new Map(of(pending, upstream)),
    async pinAllIfAbsent(upstream, records) {
      const map = of(pins, upstream);
      for (const [name, record] of records) if (!map.has(name)) map.set(name, record);
      return new Map(records.map(([name]) => [name, map.get(name)!]));
    },
    async notePendingAll(upstream, changes) {
      for (const [name, change] of changes) of(pending, upstream).set(name, change);
    },
    clearPending: async (upstream, name) => void of(pending, upstream).delete(name),
    async approve(upstream, name, digest) {
      const change = of(pending, upstream).get(name);
      if (!change) return 'none';
      if (digest !== undefined && change.digest !== digest) return 'stale';
      const record: PinRecord = { digest: change.digest, definition: change.definition, pinnedAt: new Date().toISOString(), by: 'approval' };
      of(pins, upstream).set(name, record);
      of(pending, upstream).delete(name);
      revision += 1;
      return record;
    },
    async setPin(upstream, name, record) {
      of(pins, upstream).set(name, record);
      revision += 1;
    },
    revision: async () => String(revision),
    upstreams: async () => [...new Set([...pins.keys(), ...pending.keys()])].filter((u) => (pins.get(u)?.size ?? 0) + (pending.get(u)?.size ?? 0) > 0),
    close: async () => {},
  };
}

export interface RedisPinStoreOptions {
  /** `cache.redisUrl` and `cache.redis` (TLS, Sentinel, Cluster): store/redis-connection.ts. */
  cache: GatewayConfig['cache'];
  /** Budget of each operation, ms. */
  operationTimeoutMs: number;
  metrics: GatewayMetrics;
  log: Logger;
  /** Key prefix; default `{mcp-gateway:pins}` (a Cluster hash tag: every key of an approval in one slot). */
  keyPrefix?: string;
}

/**
 * Puts a pin back over the one Redis holds only if Redis still holds that one (the JSON read) and the revision
 * is still the one read (`'0'`: none): an approval, which sets both, is never undone. KEYS: the pins hash,
 * the revision key; ARGV: the tool, the pin read, the revision read, the pin to put back. 1 when put back.
 */
export const RESTORE_OVER_NEWER = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1`;

/**
 * Pins in Redis (`cache.redisUrl`): one hash of pins and one of waiting changes per upstream (field:
 * the tool's own name, value: JSON), a set of upstreams, and a revision key every approval sets anew.
 * First sight is `HSETNX` (two replicas seeing a new tool at once agree on one pin); an approval is one
 * MULTI (pin set, change removed, revision renewed), its keys in one Cluster slot (the prefix is a hash
 * tag). Every operation is bounded by `operationTimeoutMs`; a failure throws {@link PinStoreUnavailable}
 * (counted in `mcp_cache_store_errors_total{cache="pins"}`).
 *
 * Every pin this process read or wrote is kept in memory too, as a second copy: a Redis that lost its
 * data (FLUSHALL, an eviction, a restart without persistence) answers "no pin" for a tool this process
 * knew pinned, which would make a changed definition a first sight. A pin missing from Redis that the
 * copy holds is a store loss: logged at error, counted in `mcp_pin_store_losses_total`, written back
 * (`HSETNX`: a pin another replica wrote back first stays), and used, so a change is still held against it.
 * An approval made on another replica enters the copy when this one reads the new revision (its
 * revision poll, every second), so the copy written back after a loss is the approved pin.
 *
 * A loss is found within a poll, not at the next catalogue check: a marker key holds the store's generation
 * (a random id set once, read with the revision); gone, or another than the one this replica saw last, the
 * store lost its data (or another replica found that first and set a new one). Then every pin of the copy
 * missing from Redis is written back (`HSETNX`), and a `first_sight` pin of the new generation that differs
 * from the copy's (a replica started after the loss pinned what it saw: two-replica try-out) is replaced by
 * the copy's, only if Redis still holds the one read and no approval came meanwhile (one Lua compare-and-set:
 * an approval is never undone); then the revision is renewed, so every replica reads the pins in force and
 * judges again: a replica that knew no older pin takes the one written back, and a changed definition ends
 * held everywhere. Nothing is restored over a differing pin at a replica's first poll (no generation seen
 * yet: nothing says a loss happened).
 */
export function redisPinStore(options: RedisPinStoreOptions): PinStore {
  const prefix = options.keyPrefix ?? '{mcp-gateway:pins}';
  const key = {
    pins: (upstream: string) => `${prefix}:pin:${upstream}`,
    pending: (upstream: string) => `${prefix}:pending:${upstream}`,
    upstreams: `${prefix}:upstreams`,
    revision: `${prefix}:revision`,
    /** The store's generation (a random id), set by the first poll: gone or replaced, the store lost its data. */
    marker: `${prefix}:marker`,
  };
  const outage = outageLog(options.log, { failed: 'pin store operation failed', recovered: 'pin store answering again' });
  const client = createRedisConnection(options.cache, { role: 'pins', connectTimeoutMs: options.operationTimeoutMs, disableOfflineQueue: true });
  client.on('error', () => {});
  // node-redis's connect() resolves only once Redis answers (it retries for ever meanwhile), so the
  // operations wait for the first attempt only (connected or failed): later ones while Redis is down
  // fail at once (no offline queue) instead of each spending the whole budget.
  let connecting: Promise<unknown> | undefined = new Promise((resolve) => {
    client.once('error', resolve);
    client.connect().then(resolve, resolve);
  });
  const bounded = async <T>(op: string, run: () => Promise<T>): Promise<T> => {
    const ms = options.operationTimeoutMs;
    const late = () => new DeadlineExceeded(op, ms);
    try {
      // One budget for both: the first connection attempt, then the operation in what is left of it.
      const started = performance.now();
      if (connecting) await withinDeadline(connecting, ms, late);
      connecting = undefined;
      // Not sent once the budget is spent: a write that might land after the caller was told it failed (review).
      const left = ms - (performance.now() - started);
      if (left <= 0) throw late();
      const answer = await withinDeadline(run(), left, late);
      outage.recovered();
      return answer;
    } catch (error) {
      options.metrics.cacheStoreErrors.inc({ cache: 'pins', op });
      outage.failed({ op, err: (error as Error)?.message });
      throw new PinStoreUnavailable(error);
    }
  };
  const parsed = <T>(hash: Record<string, string>) => new Map(Object.entries(hash).map(([name, json]) => [name, JSON.parse(json) as T]));
  /** The revision {@link PinStore.revision} last read. */
  let seenRevision: string | undefined;
  /** The second copy: every pin read or written here, by upstream and tool (pins are never deleted, only replaced). */
  const remembered = new Map<string, Map<string, PinRecord>>();
  const remember = (upstream: string, pins: Iterable<readonly [string, PinRecord]>) => {
    let map = remembered.get(upstream);
    if (!map) remembered.set(upstream, (map = new Map()));
    for (const [name, pin] of pins) map.set(name, pin);
  };
  const lost = (upstream: string, names: readonly string[]) => {
    options.metrics.pinStoreLosses.inc({ upstream }, names.length);
    options.log.error(
      { upstream, tools: names.slice(0, 20), count: names.length },
      'pin store lost pins this gateway knew (Redis flushed, evicted or restarted without persistence); written back from memory, changes are held against them',
    );
  };
  /**
   * Writes each pin of `entries` unless the tool has one (HSETNX, one MULTI), then reads what is in force:
   * which were written, and every tool's pin (a concurrent writer's, else this one).
   */
  const setIfAbsent = async (upstream: string, entries: readonly (readonly [string, PinRecord])[]) => {
    const multi = client.multi();
    for (const [name, pin] of entries) multi.hSetNX(key.pins(upstream), name, JSON.stringify(pin));
    const written = (await multi.sAdd(key.upstreams, upstream).exec()).slice(0, entries.length).map((reply) => Number(reply) === 1);
    const stored = await client.hmGet(
      key.pins(upstream),
      entries.map(([name]) => name),
    );
    const inForce = new Map(entries.map(([name, pin], i) => [name, stored[i] ? (JSON.parse(stored[i]!) as PinRecord) : pin]));
    return { written, inForce };
  };
  /** The store generation (marker key) this replica saw last. */
  let seenGeneration: string | undefined;
  /**
   * After a loss (or at the first poll): each pin of the copy missing from Redis written back, and with
   * `overNewer` each `first_sight` pin that differs from the copy's replaced by it, where Redis still holds
   * what was read and the revision is still `revision` (no approval since). Returns how many were put back.
   */
  const writeBack = async (revision: string, overNewer: boolean): Promise<number> => {
    let count = 0;
    for (const [upstream, known] of [...remembered]) {
      if (known.size === 0) continue;
      const entries = [...known];
      const { written, inForce } = await setIfAbsent(upstream, entries);
      const restored = entries.filter((_, i) => written[i]).map(([name]) => name);
      if (overNewer)
        for (const [name, mine] of entries) {
          const there = inForce.get(name);
          if (!there || there.digest === mine.digest || there.by !== 'first_sight') continue;
          const replaced = await client.eval(RESTORE_OVER_NEWER, {
            keys: [key.pins(upstream), key.revision],
            arguments: [name, JSON.stringify(there), revision, JSON.stringify(mine)],
          });
          if (Number(replaced) === 1) restored.push(name);
        }
      if (restored.length) lost(upstream, restored);
      count += restored.length;
    }
    return count;
  };
  return {
    kind: 'redis',
    pins: (upstream) =>
      bounded('pins', async () => {
        const pins = parsed<PinRecord>(await client.hGetAll(key.pins(upstream)));
        const known = remembered.get(upstream);
        const missing = [...(known ?? [])].filter(([name]) => !pins.has(name));
        if (missing.length) {
          const { inForce } = await setIfAbsent(upstream, missing);
          lost(
            upstream,
            missing.map(([name]) => name),
          );
          // What Redis holds now: another replica may have written its copy back first.
          for (const [name, pin] of inForce) pins.set(name, pin);
        }
        remember(upstream, pins);
        return pins;
      }),
    pending: (upstream) => bounded('pending', async () => parsed<PendingChange>(await client.hGetAll(key.pending(upstream)))),
    pinAllIfAbsent: (upstream, records) =>
      bounded('pin', async () => {
        if (records.length === 0) return new Map();
        // A tool pinned before, whose pin the store lost since it was read: its remembered pin, not this sight.
        const known = remembered.get(upstream);
        const writes = records.map(([name, record]) => [name, known?.get(name) ?? record] as const);
        const { written, inForce } = await setIfAbsent(upstream, writes);
        const restored = writes.filter(([name], i) => written[i] && known?.has(name)).map(([name]) => name);
        if (restored.length) lost(upstream, restored);
        remember(upstream, inForce);
        return inForce;
      }),
    notePendingAll: (upstream, changes) =>
      bounded('pending', async () => {
        if (changes.length === 0) return;
        const multi = client.multi();
        for (const [name, change] of changes) multi.hSet(key.pending(upstream), name, JSON.stringify(change));
        await multi.sAdd(key.upstreams, upstream).exec();
      }),
    clearPending: (upstream, name) => bounded('pending', async () => void (await client.hDel(key.pending(upstream), name))),
    approve: (upstream, name, digest) =>
      bounded('approve', async () => {
        const json = await client.hGet(key.pending(upstream), name);
        if (!json) return 'none' as const;
        const change = JSON.parse(json) as PendingChange;
        if (digest !== undefined && change.digest !== digest) return 'stale' as const;
        const record: PinRecord = { digest: change.digest, definition: change.definition, pinnedAt: new Date().toISOString(), by: 'approval' };
        await client.multi().hSet(key.pins(upstream), name, JSON.stringify(record)).hDel(key.pending(upstream), name).set(key.revision, randomUUID()).exec();
        remember(upstream, [[name, record]]);
        return record;
      }),
    setPin: (upstream, name, record) =>
      bounded('pin', async () => {
        await client.multi().hSet(key.pins(upstream), name, JSON.stringify(record)).sAdd(key.upstreams, upstream).set(key.revision, randomUUID()).exec();
        remember(upstream, [[name, record]]);
      }),
    revision: () =>
      bounded('revision', async () => {
        const [stored, marker] = await client.mGet([key.revision, key.marker]);
        let revision = stored ?? '0';
        let generation = marker;
        if (generation === null) {
          await client.set(key.marker, randomUUID(), { NX: true });
          generation = await client.get(key.marker);
        }
        const lostSince = seenGeneration !== undefined && generation !== seenGeneration;
        seenGeneration = generation ?? undefined;
        if (marker === null || lostSince) {
          // What this replica knew goes back now, before a replica starting meanwhile judges against nothing.
          if ((await writeBack(revision, lostSince)) > 0) {
            revision = randomUUID();
            await client.set(key.revision, revision);
          }
        }
        // A new revision is an approval (or a lock file's pin) somewhere: the second copy takes the pins in
        // force now, so a loss of Redis's data before this replica reads them again writes back the approved
        // pin, not the one before it. '0' (no revision key) is a store that lost its data: nothing to take.
        if (revision !== '0' && revision !== seenRevision)
          for (const upstream of [...remembered.keys()]) remember(upstream, parsed<PinRecord>(await client.hGetAll(key.pins(upstream))));
        seenRevision = revision;
        return revision;
      }),
    upstreams: () =>
      bounded('upstreams', async () =>
        [...new Set([...(await client.sMembers(key.upstreams)), ...[...remembered].filter(([, pins]) => pins.size).map(([upstream]) => upstream)])].sort(),
      ),
    close: async () => {
      await closeRedisConnection(client, options.operationTimeoutMs);
    },
  };
}
