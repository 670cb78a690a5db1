import type { Tool } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../../config/types.ts';
import { buildCatalog, tooDeep, type Catalog, type HeldTool } from './catalog.ts';
import { contentHash, stableStringify } from '../checks/content-hash.ts';
import type { PendingChange, PinRecord } from '../store/pin-store.ts';

/**
 * Tool definition pins (issue 30), the pure part: what a pin covers, its digest, how two definitions
 * differ in words an operator reads, and whether an upstream still takes calls made under a pinned
 * definition. The state (which pins exist, what is held) is the pin guard's (pin-guard.ts); the store
 * is store/pin-store.ts.
 */

/**
 * `_meta` keys that change what the gateway or a client does with a tool, so a change of them is a
 * change of the tool: the upstream's scope and category declaration (`upstreams[].metaKey`), MCP Apps'
 * `ui` (the view it opens, and whether the model may call it at all), the early flat `ui/resourceUri`,
 * and Claude Code's `anthropic/alwaysLoad`. Other `_meta` keys (timestamps, trace data, vendor notes)
 * are left out, so an upstream that stamps its lists does not put every tool on hold.
 */
const BEHAVIOURAL_META = ['ui', 'ui/resourceUri', 'anthropic/alwaysLoad'] as const;

/** Top-level fields a pin covers besides `_meta`: everything a client is shown of the tool but its icons. */
const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'execution'] as const;

/**
 * The parts of a definition a pin covers ({@link PINNED_FIELDS} and the behavioural `_meta` keys), absent
 * ones left out. `metaKey` undefined: no upstream key, the behavioural ones only.
 */
export function pinnedParts(tool: Tool, metaKey: string | undefined): Record<string, unknown> {
  const parts: Record<string, unknown> = {};
  for (const field of PINNED_FIELDS) if (tool[field] !== undefined) parts[field] = tool[field];
  const meta: Record<string, unknown> = {};
  for (const key of metaKey === undefined ? BEHAVIOURAL_META : [metaKey, ...BEHAVIOURAL_META]) if (tool._meta?.[key] !== undefined) meta[key] = tool._meta[key];
  if (Object.keys(meta).length) parts._meta = meta;
  return parts;
}

/** `sha256:<hex>` of the pinned parts, key order aside: equal definitions, equal digests. */
export function definitionDigest(tool: Tool, metaKey: string | undefined): string {
  return `sha256:${contentHash(pinnedParts(tool, metaKey))}`;
}

/**
 * Whether `digest`, a pin's as a file states it (store/pin-lock-file.ts), is the digest of the pin's own
 * `definition`: {@link definitionDigest} under `metaKey`, the key of its upstream (undefined: an upstream
 * the configuration does not name, whose key is not known: under none). Also true for the digest under
 * another `_meta` key the definition carries (a pin recorded before `upstreams[].metaKey` changed): that
 * digest covers a key the guard does not read under `metaKey`, so no definition an upstream lists ever
 * matches it, and the tool is judged changed, as a running gateway judges it after such a change. Never
 * true for a digest of other pinned parts: a harmless definition beside a poisoned one's digest.
 */
export function pinDigestAgrees(definition: Tool, digest: string, metaKey: string | undefined): boolean {
  const meta: Record<string, unknown> = typeof definition._meta === 'object' && definition._meta !== null ? definition._meta : {};
  const behavioural: readonly string[] = BEHAVIOURAL_META;
  // A key the definition lacks, or a behavioural one (always covered), would digest as `metaKey` absent: not another key.
  const others = Object.keys(meta).filter((key) => key !== metaKey && meta[key] !== undefined && !behavioural.includes(key));
  return [metaKey, ...others].some((key) => definitionDigest(definition, key) === digest);
}

/**
 * The check a pin read from the lock file (store/pin-lock-file.ts) must pass to be trusted, given each
 * configured upstream's `metaKey` by name: its definition is named as the tool it is filed under, nests no
 * deeper than a catalogue takes (catalog.ts `tooDeep`: every pass over it recurses per level), and its
 * digest is that definition's ({@link pinDigestAgrees}; an upstream the configuration no longer names is
 * checked under none). Answers why not, for an error naming the entry; undefined when it passes.
 */
export function lockedPinProblem(
  metaKeys: ReadonlyMap<string, string>,
): (upstream: string, name: string, pin: { digest: string; definition: Tool }) => string | undefined {
  return (upstream, name, pin) => {
    if (pin.definition.name !== name)
      return `its definition is named ${JSON.stringify(pin.definition.name)}, not ${JSON.stringify(name)} (a pin is filed under its tool's name)`;
    const deep = tooDeep(pin.definition);
    if (deep) return `${deep}, so no upstream's tool is pinned with it`;
    const metaKey = metaKeys.get(upstream);
    let agrees: boolean;
    try {
      agrees = pinDigestAgrees(pin.definition, pin.digest, metaKey);
    } catch (error) {
      return `its definition cannot be digested (${(error as Error).message})`;
    }
    if (agrees) return undefined;
    return `its digest ${pin.digest} is not the digest of the definition beside it (${definitionDigest(pin.definition, metaKey)}${metaKey === undefined ? '' : `, under metaKey ${metaKey}`}): the digest decides which definition is served as pinned, the definition is what a review reads, so the file is refused. Restore the entry as the gateway wrote it, or remove it (the tool is then pinned anew: at first sight, or held by pinning.newTools: hold)`;
  };
}

/**
 * What changed from `before` to `after`, one short line per change, for the call refusal, the audit
 * event, the CLI and the console: `description changed`, `inputSchema: property note added`,
 * `annotations.readOnlyHint: true -> false`, `outputSchema changed`. Empty when the pinned parts are equal.
 */
export function describeChanges(before: Tool, after: Tool, metaKey: string): string[] {
  const a = pinnedParts(before, metaKey);
  const b = pinnedParts(after, metaKey);
  const changes: string[] = [];
  for (const field of [...PINNED_FIELDS, '_meta'] as const) {
    const x = a[field];
    const y = b[field];
    if (stableStringify(x) === stableStringify(y)) continue;
    if (field === 'annotations' || field === '_meta') changes.push(...keyChanges(field, x, y));
    else if (field === 'inputSchema' || field === 'outputSchema') changes.push(...schemaChanges(field, x, y));
    else if (x === undefined) changes.push(`${field} added`);
    else if (y === undefined) changes.push(`${field} removed`);
    else changes.push(`${field} changed`);
  }
  return changes;
}

/** Key-by-key changes of a flat object (annotations, `_meta`): values shown when they are scalars. */
function keyChanges(field: string, before: unknown, after: unknown): string[] {
  const x = (before ?? {}) as Record<string, unknown>;
  const y = (after ?? {}) as Record<string, unknown>;
  // Own keys only: an annotation named `constructor` absent on one side is absent, not Object.
  const at = (o: Record<string, unknown>, key: string) => (Object.hasOwn(o, key) ? o[key] : undefined);
  return [...new Set([...Object.keys(x), ...Object.keys(y)])]
    .sort()
    .filter((key) => stableStringify(at(x, key)) !== stableStringify(at(y, key)))
    .map((key) => `${field}.${key}: ${shown(at(x, key))} -> ${shown(at(y, key))}`);
}

function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** Property-level changes of an object schema (added, removed, changed, newly required); anything else as one line. */
function schemaChanges(field: string, before: unknown, after: unknown): string[] {
  if (before === undefined) return [`${field} added`];
  if (after === undefined) return [`${field} removed`];
  const x = before as { properties?: Record<string, unknown>; required?: string[] };
  const y = after as { properties?: Record<string, unknown>; required?: string[] };
  const px = x.properties ?? {};
  const py = y.properties ?? {};
  const changes: string[] = [];
  // Own keys only: a property named `constructor` or `toString` is not Object.prototype's.
  for (const key of Object.keys(py)) if (!Object.hasOwn(px, key)) changes.push(`${field}: property ${key} added`);
  for (const key of Object.keys(px)) if (!Object.hasOwn(py, key)) changes.push(`${field}: property ${key} removed`);
  for (const key of Object.keys(px))
    if (Object.hasOwn(py, key) && stableStringify(px[key]) !== stableStringify(py[key])) changes.push(`${field}: property ${key} changed`);
  const rx = new Set(x.required ?? []);
  const ry = new Set(y.required ?? []);
  for (const key of ry) if (!rx.has(key)) changes.push(`${field}: ${key} now required`);
  for (const key of rx) if (!ry.has(key)) changes.push(`${field}: ${key} no longer required`);
  const rest = (s: Record<string, unknown>) => stableStringify({ ...s, properties: undefined, required: undefined });
  if (rest(x as Record<string, unknown>) !== rest(y as Record<string, unknown>)) changes.push(`${field} changed`);
  return changes.length ? changes : [`${field} changed`];
}

/** Schema keywords that only annotate (JSON Schema 2020-12 §9 meta-data, and `$comment`): they change no instance's validity. */
const ANNOTATION_KEYWORDS = new Set(['title', 'description', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', '$comment']);

/** A schema without its annotation keywords, at any depth (keys inside `properties` are names, kept). */
function validityOf(schema: unknown, propertyNames = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => validityOf(s));
  if (!schema || typeof schema !== 'object') return schema;
  // No prototype: a property named `__proto__` stays a key of the copy.
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) {
    if (!propertyNames && ANNOTATION_KEYWORDS.has(key)) continue;
    out[key] = validityOf(value, !propertyNames && (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions'));
  }
  return out;
}

/**
 * Whether arguments valid under `pinned`'s inputSchema are still valid under `current`'s, judged
 * conservatively: the schemas are equal once annotations (descriptions, titles, examples, defaults) are
 * set aside, or `current` only adds optional top-level properties (a client shown `pinned` sends only
 * the properties it declares). A new
 * required property, a removed or narrowed one, or any other change of validity answers false.
 * The pin guard serves a held tool's pinned definition only when this holds (otherwise it withholds it).
 */
export function acceptsCallsUnder(pinned: Tool, current: Tool): boolean {
  const x = validityOf(pinned.inputSchema) as Record<string, unknown>;
  const y = validityOf(current.inputSchema) as Record<string, unknown>;
  if (stableStringify(x) === stableStringify(y)) return true;
  const px = (x.properties ?? {}) as Record<string, unknown>;
  const py = (y.properties ?? {}) as Record<string, unknown>;
  const requiredBefore = new Set((x.required as string[] | undefined) ?? []);
  const onlyAdded =
    Object.keys(px).every((key) => Object.hasOwn(py, key) && stableStringify(px[key]) === stableStringify(py[key])) &&
    ((y.required as string[] | undefined) ?? []).every((key) => requiredBefore.has(key));
  const rest = (s: Record<string, unknown>) => stableStringify({ ...s, properties: undefined, required: undefined });
  return onlyAdded && rest(x) === rest(y);
}

/** One tool the pin guard holds: the upstream's own name, why, what changed, and the pinned definition when it is served. */
export interface Hold {
  readonly name: string;
  readonly reason: HeldTool['reason'];
  readonly changes: readonly string[];
  /** Digest of the upstream's current definition (the one waiting for approval). */
  readonly digest: string;
  /** The pinned definition to serve instead, when the upstream still takes calls under it ({@link acceptsCallsUnder}). */
  readonly serve?: Tool;
}

/**
 * The catalogue clients are served for one upstream's `raw` catalogue under `holds`: a held tool with a
 * definition to serve is listed with it (built like any catalogue tool: the same policy, the same
 * sanitising); any other held tool leaves the list. Both are in `held`, so a call of either is refused.
 * No holds: `raw` itself. The version covers the holds, so every listing and search index built from
 * the view holds the pinned text, never the new one.
 */
export function heldView(raw: Catalog, holds: readonly Hold[], policy: UpstreamConfig): Catalog {
  if (holds.length === 0) return raw;
  const served = buildCatalog(
    policy,
    holds.flatMap((h) => (h.serve ? [h.serve] : [])),
  ).byName;
  const held = new Map<string, HeldTool>();
  for (const hold of holds) {
    const pinned = hold.serve && served.get(hold.serve.name);
    const current = raw.byName.get(hold.name);
    if (!pinned && !current) continue;
    held.set(hold.name, {
      held: true,
      tool: pinned ?? current!,
      listed: pinned !== undefined,
      reason: hold.reason,
      changes: hold.changes,
      digest: hold.digest,
    });
  }
  const tools = raw.tools.flatMap((tool) => {
    const hold = held.get(tool.name);
    return hold ? (hold.listed ? [hold.tool] : []) : [tool];
  });
  return {
    ...raw,
    version: contentHash([raw.version, holds.map((h) => [h.name, h.digest, h.serve ? contentHash(h.serve) : null])]),
    tools,
    byName: new Map(tools.map((tool) => [tool.name, tool])),
    scopesInUse: new Set(tools.flatMap((tool) => [...tool.requiredScopes, ...(tool.floorScopes ?? [])])),
    held,
  };
}

/** What a tool seen for the first time under its upstream's name takes over from another upstream name ({@link carriedOver}). */
export interface Carried {
  /** The upstream name the pin and the waiting change are filed under. */
  readonly from: string;
  /** That name's pin of the tool (absent: a tool held as new there). */
  readonly pin?: PinRecord;
  /** That name's waiting change of the tool, when it is the definition seen now. */
  readonly pending?: PendingChange;
}

/** One upstream name's pins and waiting changes, by tool name, as the pin store files them. */
export interface Filed {
  readonly pins: ReadonlyMap<string, PinRecord>;
  readonly pending: ReadonlyMap<string, PendingChange>;
}

/**
 * The rule that keeps a rename of an upstream from being a first sight (trust on first use would pin
 * whatever the renamed upstream serves, a definition held under the old name included). `unseen`: the
 * tools of `upstream`'s catalogue with neither pin nor waiting change under its name, with their digests;
 * `others`: what the store files under every other upstream name; `configured`: the upstream names the
 * configuration names now; `first`: `upstream` has neither pins nor waiting changes (its first catalogue).
 * - Held: a tool whose definition waits for approval under another upstream name (configured or not),
 *   under the same tool name and with the same digest, takes that name's pin (if any) and waiting change:
 *   it is held as it was there, never trusted; unless the name is no longer configured and an operator has
 *   approved that very definition under some name since (a stale copy a replica on the old configuration
 *   wrote back). The pin guard moves what it carries from a name no longer configured (cleared there).
 * - Renamed: on `upstream`'s first catalogue, an upstream name the configuration no longer names that
 *   pinned or held, under the same tool name, a definition identical (digest) to one `unseen` lists is
 *   taken for its predecessor (the same server, renamed; the most identical pins, then identical waiting
 *   changes, then the name, decides between several): each of its pins of an `unseen` tool is carried over, so a definition that differs
 *   from it is judged changed, not trusted, and a tool it never pinned is a new tool (`pinning.newTools`),
 *   not a first catalogue's. One identical definition is the evidence asked for: without it (another
 *   server that shares only tool names with a removed one, a one-tool upstream renamed while changing its
 *   one tool) nothing is carried by this rule.
 * The predecessor's state of a tool comes first, then a held change of another name.
 * Answers the predecessor (if any) and what each carried tool takes, by tool name.
 */
export function carriedOver(
  unseen: readonly { readonly name: string; readonly digest: string }[],
  others: ReadonlyMap<string, Filed>,
  configured: ReadonlySet<string>,
  first: boolean,
): { predecessor?: string; carried: Map<string, Carried> } {
  const carried = new Map<string, Carried>();
  const names = [...others.keys()].sort();
  // A definition an operator approved under some name: a waiting copy of it under a name no longer configured is
  // stale (a replica still on the old configuration wrote it back after the move: review), never a reason to hold.
  const approved = (tool: string, digest: string) =>
    names.some((name) => {
      const pin = others.get(name)!.pins.get(tool);
      return pin?.by === 'approval' && pin.digest === digest;
    });
  const waiting = (name: string, tool: string, digest: string) =>
    others.get(name)!.pending.get(tool)?.digest === digest && (configured.has(name) || !approved(tool, digest));
  let predecessor: string | undefined;
  if (first) {
    // Identical pins first (what was approved or trusted there), then identical waiting changes.
    let best = 0;
    for (const name of names) {
      if (configured.has(name)) continue;
      const filed = others.get(name)!;
      const pins = unseen.filter((t) => filed.pins.get(t.name)?.digest === t.digest).length;
      const pending = unseen.filter((t) => waiting(name, t.name, t.digest)).length;
      const score = pins * (unseen.length + 1) + pending;
      if (score > best) [best, predecessor] = [score, name];
    }
  }
  for (const t of unseen) {
    // The predecessor first (its pin is this tool's history), then a change of this definition held under any name.
    const previous = predecessor === undefined ? undefined : others.get(predecessor)!;
    const fromPredecessor = previous && (previous.pins.has(t.name) || waiting(predecessor!, t.name, t.digest)) ? predecessor : undefined;
    const from = fromPredecessor ?? names.find((name) => waiting(name, t.name, t.digest));
    if (from === undefined) continue;
    const filed = others.get(from)!;
    const pin = filed.pins.get(t.name);
    const pending = waiting(from, t.name, t.digest) ? filed.pending.get(t.name) : undefined;
    carried.set(t.name, { from, ...(pin ? { pin } : {}), ...(pending ? { pending } : {}) });
  }
  return { ...(predecessor !== undefined ? { predecessor } : {}), carried };
}
