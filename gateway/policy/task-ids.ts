import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The task ids the gateway hands its callers (MCP tasks: 2025-11-25 basic/utilities/tasks; the
 * `io.modelcontextprotocol/tasks` extension, SEP-2663). An upstream's task id is namespaced by the
 * upstream that owns it and the catalogue tool that created it, and bound to the caller's credential
 * digest by an HMAC-SHA-256 under the server key (`cache.key`), so that:
 * - tasks/get, tasks/result, tasks/update and tasks/cancel reach the upstream that owns the task, under
 *   the upstream's own id, with no stored mapping (every replica sharing `cache.key` reads the same id);
 * - an id minted for another credential, altered, or never minted fails to open and is answered exactly
 *   as an unknown task (2025-11-25 §Security "Task Isolation and Access Control": receivers MUST reject
 *   tasks/get, tasks/result and tasks/cancel for tasks of another authorization context).
 * The id reveals the upstream's and the tool's name and the upstream's task id to its holder (who
 * created it), nothing about the credential. Pure.
 */

/** What a caller's task id stands for. */
export interface TaskRef {
  /** The upstream that owns the task (config name). */
  upstream: string;
  /** The task id that upstream issued. */
  upstreamTaskId: string;
  /** The catalogue tool (exposed name) whose call created it: its output check and visibility apply. */
  tool: string;
}

const VERSION = 'gwt1';
/** 128 bits of the HMAC: forging an id for someone else's credential is a 2^-128 guess. */
const MAC_BYTES = 16;

/** The caller's id for `ref`, bound to `owner` (the caller's credential digest). */
export function mintTaskId(ref: TaskRef, owner: string, key: Buffer): string {
  const body = Buffer.from(JSON.stringify([ref.upstream, ref.upstreamTaskId, ref.tool]), 'utf8').toString('base64url');
  return `${VERSION}.${body}.${mac(body, owner, key).toString('base64url')}`;
}

/**
 * The task `id` stands for when it was minted for `owner` under `key`; undefined for anything else (not
 * a string, not one of ours, altered, another credential's), which the caller answers as an unknown task.
 */
export function openTaskId(id: unknown, owner: string, key: Buffer): TaskRef | undefined {
  if (typeof id !== 'string' || id.length > 4096) return undefined;
  const [version, body, tag, extra] = id.split('.');
  if (version !== VERSION || !body || !tag || extra !== undefined) return undefined;
  const expected = mac(body, owner, key);
  const given = Buffer.from(tag, 'base64url');
  // Re-encoded to compare: base64url decoding ignores the last character's spare bits, so one id has one spelling only.
  if (given.length !== expected.length || given.toString('base64url') !== tag || !timingSafeEqual(given, expected)) return undefined;
  try {
    const [upstream, upstreamTaskId, tool] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[];
    if (typeof upstream !== 'string' || typeof upstreamTaskId !== 'string' || typeof tool !== 'string') return undefined;
    return { upstream, upstreamTaskId, tool };
  } catch {
    return undefined;
  }
}

function mac(body: string, owner: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(`mcp-task\0${owner}\0${body}`).digest().subarray(0, MAC_BYTES);
}
