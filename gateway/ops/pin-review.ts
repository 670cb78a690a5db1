/**
 * What an operator reviews of the pinned tool definitions (issue 30), the same for the console's
 * Definition changes page and the `pins` CLI (which reads it as JSON from the console's API): every
 * pin and waiting change with the gateway's own judgement of it (catalog/pin-guard.ts), under the name
 * callers use, and for one tool the definition pinned, the definition waiting, and a line diff of the two.
 */
import type { Tool } from '@modelcontextprotocol/client';
import { createTwoFilesPatch, diffLines } from 'diff';
import type { Catalog } from '../catalog/catalog.ts';
import { stableStringify } from '../checks/content-hash.ts';
import { escapeInvisible } from '../checks/invisible-text.ts';
import type { LintFinding } from '../catalog/description-lint.ts';
import type { PinEntry, PinGuard } from '../catalog/pin-guard.ts';
import type { UpstreamSet } from '../catalog/upstream-set.ts';

/** What a review reads: the pin guard, the merged catalogue (for the names callers use), the configured upstreams in order. */
export interface PinReviewSource {
  readonly pins: PinGuard;
  readonly upstreamSet: Pick<UpstreamSet, 'lastCatalog' | 'catalog'>;
  readonly upstreams: readonly string[];
}

/** One pin or waiting change, for review. */
export interface PinReviewEntry {
  readonly upstream: string;
  /** The upstream's own tool name. */
  readonly name: string;
  /** The name callers use now (with several upstreams, prefixed), when the tool is in the catalogue. */
  readonly tool?: string;
  readonly state: PinEntry['state'];
  readonly reason?: PinEntry['reason'];
  readonly changes: readonly string[];
  readonly findings: readonly LintFinding[];
  readonly pin?: { digest: string; pinnedAt: string; by: string };
  readonly pending?: { digest: string; seenAt: string; kind: string };
}

/** One tool's review: both definitions (sorted, indented JSON) and their line diff. */
export interface PinDetail extends PinReviewEntry {
  readonly before?: Tool;
  readonly after?: Tool;
  /** Unified diff of {@link definitionText}(before) and (after), invisible characters written `\u{XXXX}`: `--- pinned`, `+++ waiting`. */
  readonly diff: string;
  /** The same diff as runs of lines, for a page. */
  readonly parts: readonly { kind: 'same' | 'removed' | 'added'; text: string }[];
}

/**
 * Every pin and waiting change, configured upstreams first; with `fromMemory`, as this process last read
 * and judged them (PinGuard.report). @throws PinStoreUnavailable (not with `fromMemory`)
 */
export async function pinReview(source: PinReviewSource, options: { fromMemory?: boolean } = {}): Promise<PinReviewEntry[]> {
  const entries = await source.pins.report(source.upstreams, options);
  // The catalogue fetched last, else one fetched now outside any caller (as the console's catalogue page does).
  const exposed = exposedNames(source.upstreamSet.lastCatalog() ?? (await source.upstreamSet.catalog().catch(() => undefined)));
  return entries.map((entry) => {
    const tool = exposed.get(`${entry.upstream}\u0000${entry.name}`);
    return {
      upstream: entry.upstream,
      name: entry.name,
      ...(tool ? { tool } : {}),
      state: entry.state,
      ...(entry.reason ? { reason: entry.reason } : {}),
      changes: entry.changes,
      findings: entry.findings,
      ...(entry.pin ? { pin: { digest: entry.pin.digest, pinnedAt: entry.pin.pinnedAt, by: entry.pin.by } } : {}),
      ...(entry.pending ? { pending: { digest: entry.pending.digest, seenAt: entry.pending.seenAt, kind: entry.pending.kind } } : {}),
    };
  });
}

/** The review of one tool (`upstream`'s own `name`); undefined when it has neither pin nor waiting change. @throws PinStoreUnavailable */
export async function pinDetail(source: PinReviewSource, upstream: string, name: string): Promise<PinDetail | undefined> {
  const entry = (await pinReview(source)).find((e) => e.upstream === upstream && e.name === name);
  if (!entry || (!entry.pin && !entry.pending)) return undefined;
  const [pins, pending] = await Promise.all([source.pins.store.pins(upstream), source.pins.store.pending(upstream)]);
  const pinned = pins.get(name);
  const waiting = pending.get(name);
  const before = pinned?.definition;
  const after = waiting?.definition;
  // Invisible characters escaped as the lint's excerpts are: raw, a zero-width or bidi change made both sides look the same (try-out).
  const a = before ? escapeInvisible(definitionText(before)) : '';
  const b = after ? escapeInvisible(definitionText(after)) : a;
  // The digests shown are those of the definitions diffed (this read), never of the review's earlier one:
  // an upstream alternating two definitions could otherwise put one's digest, the one an Approve carries, beside the other's diff (review).
  const { pin: _pin, pending: _pending, ...rest } = entry;
  return {
    ...rest,
    ...(pinned ? { pin: { digest: pinned.digest, pinnedAt: pinned.pinnedAt, by: pinned.by } } : {}),
    ...(waiting ? { pending: { digest: waiting.digest, seenAt: waiting.seenAt, kind: waiting.kind } } : {}),
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    diff: createTwoFilesPatch(`${upstream}/${name} (pinned)`, `${upstream}/${name} (waiting)`, a, b, undefined, undefined, { context: 3 }),
    parts: diffLines(a, b).map((part) => ({ kind: part.added ? 'added' : part.removed ? 'removed' : 'same', text: part.value })),
  };
}

/** A definition as reviewed: JSON, keys sorted at every depth, two-space indented (equal definitions, equal text). */
export function definitionText(tool: Tool): string {
  return `${stableStringify(tool, 2)}\n`;
}

/** Exposed name by `upstream \0 own name`, of every tool the catalogue serves, holds or withholds. */
function exposedNames(catalog: Catalog | undefined): Map<string, string> {
  const names = new Map<string, string>();
  if (!catalog) return names;
  for (const tool of [...catalog.tools, ...(catalog.withheld?.values() ?? []), ...[...(catalog.held?.values() ?? [])].map((h) => h.tool)])
    names.set(`${tool.upstream}\u0000${tool.upstreamName}`, tool.name);
  return names;
}
