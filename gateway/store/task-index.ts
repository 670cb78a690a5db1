import type { KvStore } from './kv-store.ts';

/**
 * The tasks each credential created through the gateway, for `tasks/list` (2025-11-25
 * basic/utilities/tasks §Task Listing: "If a task is retrievable via tasks/get for a requestor, it MUST
 * be retrievable via tasks/list for that requestor", and only that requestor's tasks are listed). The
 * gateway cannot take an upstream's own list for it: behind one upstream credential (a stdio server,
 * `forwardCredentials: false`, a shared session) the upstream lists every caller's tasks alike.
 *
 * One entry per credential digest in the store (memory, or Redis shared by the replicas): the caller's
 * task ids (policy/task-ids.ts, which carry their upstream and tool), newest first, each until its task's
 * ttl (capped at {@link MAX_TTL_MS}), at most {@link MAX_PER_OWNER}. A store failure loses entries, never
 * answers for another credential (the store's keys are keyed digests, kv-store.ts never throws).
 * Concurrent creations by one credential on two replicas may lose one entry: that task stays reachable
 * by its id, only missing from the list.
 */
export const MAX_PER_OWNER = 100;
/** Longest an entry is kept: a task the upstream keeps longer (or forever: ttl null) is listed this long. */
export const MAX_TTL_MS = 24 * 3_600_000;

interface Entry {
  id: string;
  expiresAt: number;
}

export class TaskIndex {
  constructor(
    private readonly store: KvStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records `id` for `owner` for `ttlMs` (undefined or null: {@link MAX_TTL_MS}). */
  async add(owner: string, id: string, ttlMs: number | null | undefined): Promise<void> {
    const now = this.now();
    const keep = Math.min(typeof ttlMs === 'number' && ttlMs > 0 ? ttlMs : MAX_TTL_MS, MAX_TTL_MS);
    const entries = [{ id, expiresAt: now + keep }, ...(await this.entries(owner)).filter((e) => e.id !== id)].slice(0, MAX_PER_OWNER);
    await this.store.set(owner, entries, Math.max(...entries.map((e) => e.expiresAt)) - now);
  }

  /** The owner's unexpired task ids, newest first. */
  async list(owner: string): Promise<string[]> {
    return (await this.entries(owner)).map((e) => e.id);
  }

  /** Forgets ids the upstream no longer knows (expired or deleted there). */
  async remove(owner: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const gone = new Set(ids);
    const entries = (await this.entries(owner)).filter((e) => !gone.has(e.id));
    if (entries.length === 0) return this.store.delete(owner);
    await this.store.set(owner, entries, Math.max(...entries.map((e) => e.expiresAt)) - this.now());
  }

  private async entries(owner: string): Promise<Entry[]> {
    const now = this.now();
    const stored = await this.store.get<Entry[]>(owner);
    return Array.isArray(stored) ? stored.filter((e) => typeof e?.id === 'string' && typeof e.expiresAt === 'number' && e.expiresAt > now) : [];
  }
}
