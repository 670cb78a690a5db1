/**
 * The caller's task ids (gateway/policy/task-ids.ts) and the per-credential task index
 * (gateway/store/task-index.ts): an id opens only for the credential it was minted for, under the key
 * it was minted with, unaltered; the index lists a credential's own ids, newest first, until they expire.
 */
import { describe, expect, it } from 'vitest';
import { mintTaskId, openTaskId } from '../../gateway/policy/task-ids.ts';
import { MAX_PER_OWNER, TaskIndex } from '../../gateway/store/task-index.ts';
import type { KvStore } from '../../gateway/store/kv-store.ts';

const KEY = Buffer.from('k'.repeat(32));
const REF = { upstream: 'jobs', upstreamTaskId: 'task-1/with.dots', tool: 'jobs__slow_compute' };

describe('task ids', () => {
  it('opens for the credential it was minted for, to what it stands for', () => {
    const id = mintTaskId(REF, 'owner-a', KEY);
    expect(id).toMatch(/^gwt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(openTaskId(id, 'owner-a', KEY)).toEqual(REF);
  });

  it('opens for nobody else: another credential, another key, an altered body or tag, junk', () => {
    const id = mintTaskId(REF, 'owner-a', KEY);
    const [version, body, tag] = id.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify(['jobs', 'task-2', REF.tool])).toString('base64url');
    const flip = (s: string) => `${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`;
    for (const other of [
      [id, 'owner-b', KEY],
      [id, 'owner-a', Buffer.from('x'.repeat(32))],
      [`${version}.${forged}.${tag}`, 'owner-a', KEY],
      [`${version}.${body}.${flip(tag)}`, 'owner-a', KEY],
      [`gwt2.${body}.${tag}`, 'owner-a', KEY],
      [`${id}.extra`, 'owner-a', KEY],
      ['task-1', 'owner-a', KEY],
      [42, 'owner-a', KEY],
      [undefined, 'owner-a', KEY],
    ] as const) {
      expect(openTaskId(other[0], other[1], other[2])).toBeUndefined();
    }
  });
});

/** An in-memory KvStore honouring TTLs against a settable clock. */
function memoryStore(now: () => number): KvStore {
  const entries = new Map<string, { value: unknown; until: number }>();
  return {
    get: async <T>(key: string) => {
      const e = entries.get(key);
      return e && e.until > now() ? (e.value as T) : undefined;
    },
    set: async (key, value, ttlMs) => void entries.set(key, { value: structuredClone(value), until: now() + ttlMs }),
    delete: async (key) => void entries.delete(key),
    sweep: () => {},
    close: async () => {},
  };
}

describe('task index', () => {
  it("lists a credential's own ids, newest first, until each expires, at most MAX_PER_OWNER", async () => {
    let clock = 1_000_000;
    const index = new TaskIndex(
      memoryStore(() => clock),
      () => clock,
    );
    await index.add('a', 'id-1', 1000);
    await index.add('a', 'id-2', null);
    await index.add('b', 'id-3', 1000);
    expect(await index.list('a')).toEqual(['id-2', 'id-1']);
    expect(await index.list('b')).toEqual(['id-3']);
    clock += 1001;
    expect(await index.list('a')).toEqual(['id-2']);
    await index.remove('a', ['id-2']);
    expect(await index.list('a')).toEqual([]);
    for (let i = 0; i < MAX_PER_OWNER + 5; i++) await index.add('c', `c-${i}`, 60_000);
    const listed = await index.list('c');
    expect(listed).toHaveLength(MAX_PER_OWNER);
    expect(listed[0]).toBe(`c-${MAX_PER_OWNER + 4}`);
  });
});
