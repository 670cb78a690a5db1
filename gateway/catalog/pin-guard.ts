import type { Tool } from '@modelcontextprotocol/client';
import type { PinningConfig, UpstreamConfig } from '../../config/types.ts';
import type { Approver, AuditLog, DefinitionOutcome } from '../obs/audit.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { PinStoreUnavailable, type PendingChange, type PinRecord, type PinStore } from '../store/pin-store.ts';
import { sourceOf, type Catalog } from './catalog.ts';
import { LINT_RULES, lintDefinition, type LintFinding } from './description-lint.ts';
import { acceptsCallsUnder, carriedOver, definitionDigest, describeChanges, heldView, type Carried, type Filed, type Hold } from './pinning.ts';

/** How long one read of the whole pin store serves the carry-over checks of the catalogues judged meanwhile, ms. */
const FILED_MEMO_MS = 1000;

/** How often a replica asks the shared store whether an approval was made elsewhere, ms. */
const REVISION_POLL_MS = 1000;
/** After the pin store failed, how long a view decided without it is served before the store is asked again, ms. */
const RETRY_AFTER_STORE_FAILURE_MS = 2000;
/** Bound of the "told once" set of change events (one entry per tool, digest and outcome). */
const TOLD_LIMIT = 10_000;
/** How many tool names a line standing for several outcomes names (the rest are counted). */
const TOLD_NAMES = 10;

/** One change event's log line, as {@link PinGuard} tells it. */
interface ToldLine {
  readonly outcome: DefinitionOutcome;
  readonly upstream: string;
  readonly name: string;
  readonly changes: readonly string[];
  readonly current: string;
  readonly approver?: Approver;
}

/** One upstream tool as the guard last judged it: for `/readyz`, the console and the CLI. */
export interface ToolJudgement {
  readonly upstream: string;
  /** The upstream's own name. */
  readonly name: string;
  /** `pinned`: served as pinned; `held`: on hold; `warned`: changed and served anyway (`pinning.mode: warn`). */
  readonly state: 'pinned' | 'held' | 'warned';
  readonly reason?: Hold['reason'];
  readonly changes: readonly string[];
  /** Lint findings of the upstream's current definition (invisible characters included: removed when served). */
  readonly findings: readonly LintFinding[];
  readonly digest: string;
  /** The pinned definition is served while held. */
  readonly listed?: boolean;
}

/** One pin or waiting change as the operator reviews it (console, CLI). */
export interface PinEntry {
  readonly upstream: string;
  readonly name: string;
  /**
   * `removed`: pinned, but the upstream's last catalogue did not list it (its pin stays); `unseen`: pinned,
   * its configured upstream not fetched yet by this process; `unconfigured`: pinned for an upstream the
   * configuration no longer names (removed or renamed; a rename's successor carries the pins over).
   */
  readonly state: ToolJudgement['state'] | 'removed' | 'unseen' | 'unconfigured';
  readonly reason?: Hold['reason'];
  readonly changes: readonly string[];
  readonly findings: readonly LintFinding[];
  readonly pin?: PinRecord;
  readonly pending?: PendingChange;
}

export interface PinGuardOptions {
  readonly metrics: GatewayMetrics;
  readonly audit: AuditLog;
  readonly log: Logger;
  /** Called when what is served may have changed without a new upstream catalogue (an approval here or elsewhere). */
  readonly onChange?: () => void;
  /**
   * The upstream names the configuration names: {@link PinGuard.held} reports their tools only (a removed
   * or renamed upstream's last judgements are no hold of a tool served), and an upstream name not among
   * them can be a renamed upstream's predecessor (catalog/pinning.ts `carriedOver`).
   */
  readonly upstreams: readonly string[];
  /**
   * Live reload over the same pin store: the retired runtime's guard, whose judgements (of the upstreams
   * still configured), known pins, unwritten changes and "told once" events carry over (a kept upstream's
   * held tools stay held and listed, and are not announced again). Each catalogue is judged again under
   * the new configuration.
   */
  readonly inherit?: PinGuard;
}

type Known = { pins: Map<string, PinRecord>; pending: Map<string, PendingChange> };

/** `judgement`, or a `pinned` one when `pin` is the very definition it judged (approved since). */
function settledBy(judgement: ToolJudgement | undefined, pin: PinRecord | undefined): ToolJudgement | undefined {
  if (!judgement || judgement.state === 'pinned' || pin?.digest !== judgement.digest) return judgement;
  return { upstream: judgement.upstream, name: judgement.name, state: 'pinned', changes: [], findings: judgement.findings, digest: judgement.digest };
}
type ViewEntry = { revision: number; view: Promise<Catalog>; value?: Catalog; retryAt?: number };

/**
 * The pin guard (issue 30): turns each upstream catalogue the gateway fetches into the catalogue it
 * serves, against the pins in the store (store/pin-store.ts).
 * - First sight: a tool without a pin is pinned as it is (trust on first use; `pinning.newTools: hold`
 *   holds tools that appear after the upstream's first catalogue was pinned). Not a tool held (or, for a
 *   renamed upstream, pinned) under another upstream name: it takes that state over (pinning.ts `carriedOver`).
 * - A pinned tool whose definition changed (catalog/pinning.ts digest: name, title, description,
 *   schemas, annotations, execution, behavioural `_meta`): `pinning.mode: hold` holds it (its pinned
 *   definition stays listed when the upstream still takes calls under it, else it is withheld; a call
 *   is refused either way), `warn` serves the new one, both record the change as waiting for approval.
 *   A tool that disappears keeps its pin, so one that comes back changed is still caught.
 * - The description lint (description-lint.ts) runs on each new definition; with `pinning.lint: hold`
 *   a definition with findings is held until approved.
 * Every change and approval is logged, audited (`tool_definition_change`) and counted
 * (`mcp_tool_definition_changes_total{upstream,outcome}`) once per process. An approval (console, CLI)
 * is written to the store; other replicas see the store's revision change within {@link REVISION_POLL_MS}
 * and judge again. A view is computed once per catalogue version and revision; a warm request pays a
 * WeakMap lookup.
 */
export class PinGuard {
  private revision = 0;
  private storeRevision?: string;
  /** The store's pins and waiting changes as last read for a rename's carry-over ({@link filedElsewhere}). */
  private filed?: { at: number; read: Promise<Map<string, Filed>> };
  private readonly views = new WeakMap<Catalog, ViewEntry>();
  private readonly judged = new Map<string, Map<string, ToolJudgement>>();
  private readonly known = new Map<string, Known>();
  /** Changes judged while the store could not be written, by upstream: written at the next revision poll, report or judgement. */
  private readonly unwritten = new Map<string, Map<string, PendingChange>>();
  private readonly toolNames = new Map<string, ReadonlySet<string>>();
  /** Per upstream, the other upstreams' names of `toolNames`, made on first need after each change of it:
   *  made per tool linted, they were 76% of a first 10,000-tool catalogue's CPU (10 upstreams: 8 of 14 s). */
  private readonly otherToolNames = new Map<string, ReadonlySet<string>>();
  private readonly told = new Set<string>();
  /** While a catalogue is judged: its change events' log lines, told together once it is ({@link tellTogether}). */
  private telling?: ToldLine[];
  /** Upstreams whose last catalogue was judged without the store: judged again as soon as a poll reaches it. */
  private readonly unread = new Map<string, { policy: UpstreamConfig; raw: Catalog }>();
  private readonly digests = new WeakMap<Tool, { metaKey: string; digest: string }>();
  private readonly lints = new WeakMap<Tool, LintFinding[]>();
  private readonly timer?: NodeJS.Timeout;
  private readonly options: Omit<PinGuardOptions, 'inherit'>;

  constructor(
    private readonly config: PinningConfig,
    readonly store: PinStore,
    options: PinGuardOptions,
  ) {
    // The retired guard is copied from, never kept: kept, each reload's guard held the one before it, and
    // through its onChange that runtime whole (catalogues, search index), one more per reload (try-out:
    // +21 MB a reload at 10,000 tools, out of memory after ~19 SIGHUPs).
    const { inherit: from, ...own } = options;
    this.options = own;
    const configured = new Set(options.upstreams);
    if (from) {
      // Not an upstream the configuration no longer names: it serves nothing, so nothing of it is judged again or held.
      for (const [upstream, judgements] of from.judged) if (configured.has(upstream)) this.judged.set(upstream, new Map(judgements));
      for (const [upstream, known] of from.known) this.known.set(upstream, { pins: new Map(known.pins), pending: new Map(known.pending) });
      for (const [upstream, changes] of from.unwritten) this.unwritten.set(upstream, new Map(changes));
      for (const [upstream, names] of from.toolNames) this.toolNames.set(upstream, names);
      for (const [upstream, entry] of from.unread) if (configured.has(upstream)) this.unread.set(upstream, entry);
      for (const key of from.told) this.told.add(key);
      this.storeRevision = from.storeRevision;
    }
    if (store.kind === 'redis' && this.usesStore) {
      this.timer = setInterval(() => void this.poll(), REVISION_POLL_MS);
      this.timer.unref();
    }
  }

  /** Whether pins are kept at all (`pinning.mode` not `off`, or lint findings held until approved). */
  get usesStore(): boolean {
    return this.config.mode !== 'off' || this.config.lint === 'hold';
  }

  /**
   * The catalogue to serve for `raw`, one upstream's catalogue as fetched (built under `policy`).
   * Never rejects for the store: without it, tools already judged keep their state and any other is
   * held as `unverified` under `pinning.mode: hold` (served under `warn`), and the store is asked again
   * after {@link RETRY_AFTER_STORE_FAILURE_MS}.
   */
  view(policy: UpstreamConfig, raw: Catalog): Promise<Catalog> {
    const entry = this.views.get(raw);
    if (entry && this.current(entry)) return entry.view;
    const stored: ViewEntry = { revision: this.revision, view: Promise.resolve(raw) };
    stored.view = this.judge(policy, raw).then(
      ({ view, degraded }) => {
        stored.value = view;
        if (degraded) {
          stored.retryAt = Date.now() + RETRY_AFTER_STORE_FAILURE_MS;
          this.unread.set(policy.name, { policy, raw });
        } else this.unread.delete(policy.name);
        return view;
      },
      (error: unknown) => {
        this.views.delete(raw);
        throw error;
      },
    );
    this.views.set(raw, stored);
    return stored.view;
  }

  /** {@link view} when it is judged already and still current (no wait); else undefined. */
  viewNow(raw: Catalog): Catalog | undefined {
    const entry = this.views.get(raw);
    return entry && this.current(entry) ? entry.value : undefined;
  }

  /** Whether a view stands: judged at the current revision, and not a degraded one due for a retry. */
  private current(entry: ViewEntry): boolean {
    return entry.revision === this.revision && (entry.retryAt === undefined || Date.now() < entry.retryAt);
  }

  /** The view last computed for `raw`, without waiting; undefined before the first. */
  peek(raw: Catalog): Catalog | undefined {
    return this.views.get(raw)?.value;
  }

  /**
   * Every tool of a configured upstream on hold now, as last judged (`/readyz` details, as
   * `mcp_tools_held`): an upstream a reload removed or renamed serves no tool, so none of its is held
   * (its waiting changes stay in the store and on the console's review until approved).
   */
  held(): ToolJudgement[] {
    const configured = new Set(this.options.upstreams);
    return [...this.judged].flatMap(([upstream, tools]) => (configured.has(upstream) ? [...tools.values()].filter((t) => t.state === 'held') : []));
  }

  /** The last judgement of each tool of `upstream`'s last catalogue. */
  judgements(upstream: string): ReadonlyMap<string, ToolJudgement> {
    return this.judged.get(upstream) ?? new Map();
  }

  /**
   * Every pin and waiting change in the store, with the last judgement of each tool, upstream by upstream
   * (configured ones first), tools by name. Changes judged while the store was out are written first, so
   * a held change has its waiting record (and the review its Approve). With `fromMemory`, the pins and
   * changes this process last read or judged instead of the store's (a page shown during an outage).
   * @throws PinStoreUnavailable (not with `fromMemory`)
   */
  async report(upstreams: readonly string[], options: { fromMemory?: boolean } = {}): Promise<PinEntry[]> {
    const read = async (upstream: string): Promise<Known> => {
      if (options.fromMemory) {
        const known = this.known.get(upstream);
        return { pins: new Map(known?.pins), pending: new Map([...(known?.pending ?? []), ...(this.unwritten.get(upstream) ?? [])]) };
      }
      const [pins, pending] = await Promise.all([this.store.pins(upstream), this.store.pending(upstream)]);
      return { pins, pending };
    };
    if (!options.fromMemory) await this.writeUnwritten();
    const names = [...new Set([...upstreams, ...(options.fromMemory ? this.known.keys() : await this.store.upstreams())])];
    const configured = new Set(upstreams);
    const entries: PinEntry[] = [];
    for (const upstream of names) {
      const { pins, pending } = await read(upstream);
      const judged = this.judged.get(upstream);
      const tools = [...new Set([...pins.keys(), ...pending.keys(), ...(judged?.keys() ?? [])])].sort();
      for (const name of tools) {
        // Approved (here or on another replica) since it was judged: what is served now is the pin.
        const judgement = settledBy(judged?.get(name), pins.get(name));
        entries.push({
          upstream,
          name,
          state: !configured.has(upstream) ? 'unconfigured' : (judgement?.state ?? (judged ? 'removed' : 'unseen')),
          ...(judgement?.reason ? { reason: judgement.reason } : {}),
          changes: judgement?.changes ?? [],
          findings: judgement?.findings ?? [],
          ...(pins.has(name) ? { pin: pins.get(name)! } : {}),
          ...(pending.has(name) ? { pending: pending.get(name)! } : {}),
        });
      }
    }
    return entries;
  }

  /**
   * Makes the definition waiting for `name` of `upstream` its pin (with `digest`: only if that is the
   * one waiting), audits and counts it, and has every view judged again (here at once; other replicas
   * at their next revision poll). @throws PinStoreUnavailable
   */
  async approve(upstream: string, name: string, options: Approver & { digest?: string }): Promise<PinRecord | 'none' | 'stale'> {
    const waiting = (await this.store.pending(upstream)).get(name);
    const previous = (await this.store.pins(upstream)).get(name);
    const result = await this.store.approve(upstream, name, options.digest);
    if (typeof result !== 'object') return result;
    this.filed = undefined;
    // What a view judged without the store reads (an outage): the approved pin, never the one it replaced.
    const known = this.known.get(upstream);
    if (known) {
      known.pins.set(name, result);
      known.pending.delete(name);
    }
    const judged = this.judged.get(upstream);
    const settled = settledBy(judged?.get(name), result);
    if (judged && settled) judged.set(name, settled);
    const { digest: _, ...approver } = options;
    this.emit('approved', upstream, name, waiting ? [`${waiting.kind} definition approved`] : [], result.digest, previous?.digest, approver);
    this.changed();
    return result;
  }

  /** {@link approve} for every waiting change of every upstream; returns what was approved. @throws PinStoreUnavailable */
  async approveAll(upstreams: readonly string[], approver: Approver): Promise<{ upstream: string; name: string }[]> {
    const approved: { upstream: string; name: string }[] = [];
    for (const upstream of new Set([...upstreams, ...(await this.store.upstreams())]))
      for (const [name, change] of await this.store.pending(upstream))
        if (typeof (await this.approve(upstream, name, { digest: change.digest, ...approver })) === 'object') approved.push({ upstream, name });
    return approved;
  }

  /** Stops the revision poll (the store is closed by its owner: it may outlive this guard on a reload). */
  close(): void {
    clearInterval(this.timer);
  }

  private changed(): void {
    this.revision += 1;
    this.options.onChange?.();
  }

  /**
   * Asks the shared store whether an approval was made anywhere since the last poll; writes changes
   * judged during an outage; once the store answers, judges again each catalogue judged without it
   * (its `unverified` holds lifted without waiting for a request: `/readyz` says not ready meanwhile,
   * so none may come).
   */
  private async poll(): Promise<void> {
    try {
      const revision = await this.store.revision();
      const again = [...this.unread.values()];
      if ((this.storeRevision !== undefined && revision !== this.storeRevision) || again.length) this.changed();
      // An approval elsewhere: the carry-over's read of the store is not the store's any more.
      if (revision !== this.storeRevision) this.filed = undefined;
      this.storeRevision = revision;
      for (const { policy, raw } of again) void this.view(policy, raw).catch(() => undefined);
      await this.writeUnwritten();
    } catch {
      // Logged and counted by the store; the next poll asks again.
    }
  }

  /** Writes the changes judged while the store was out (their tools are held meanwhile). @throws PinStoreUnavailable */
  private async writeUnwritten(): Promise<void> {
    for (const [upstream, changes] of this.unwritten) {
      await this.store.notePendingAll(upstream, [...changes]);
      this.filed = undefined;
      if (this.unwritten.get(upstream) === changes) this.unwritten.delete(upstream);
    }
  }

  private async judge(policy: UpstreamConfig, raw: Catalog): Promise<{ view: Catalog; degraded: boolean }> {
    const upstream = policy.name;
    const { mode, newTools, lint } = this.config;
    this.toolNames.set(upstream, new Set(raw.tools.map((t) => t.upstreamName)));
    this.otherToolNames.clear();
    let degraded = false;
    let known: Known | undefined;
    if (this.usesStore) {
      try {
        const [pins, pending] = await Promise.all([this.store.pins(upstream), this.store.pending(upstream)]);
        known = { pins, pending };
        this.known.set(upstream, known);
      } catch (error) {
        if (!(error instanceof PinStoreUnavailable)) throw error;
        degraded = true;
        known = this.known.get(upstream);
      }
    }
    const now = new Date().toISOString();
    // An upstream with a waiting change was seen before (a tool held as new has no pin).
    let firstCatalogue = known !== undefined && known.pins.size === 0 && known.pending.size === 0;
    const tools = raw.tools.map((tool) => {
      const source = sourceOf(tool);
      return { name: tool.upstreamName, source, digest: this.digestOf(source, policy.metaKey), findings: this.findingsOf(source, upstream) };
    });

    // Seen for the first time under this name, but held or pinned under another (a renamed upstream): that state, not a first sight.
    let carried = new Map<string, Carried>();
    const unseen = known ? tools.filter((t) => !known.pins.has(t.name) && !known.pending.has(t.name)) : [];
    if (known && unseen.length && !degraded) {
      try {
        const found = carriedOver(unseen, await this.filedElsewhere(upstream), new Set(this.options.upstreams), firstCatalogue);
        carried = found.carried;
        if (found.predecessor !== undefined) firstCatalogue = false;
      } catch (error) {
        if (!(error instanceof PinStoreUnavailable)) throw error;
        degraded = true;
      }
    }

    // First sights and carried pins, in one write: every replica that sees a tool first agrees on one pin (the store's).
    const firstSights = tools
      .filter(
        (t) =>
          known &&
          !known.pins.has(t.name) &&
          !carried.get(t.name)?.pin &&
          (newTools === 'accept' || mode === 'off' || (firstCatalogue && !carried.has(t.name))),
      )
      .map((t): [string, PinRecord] => [t.name, { digest: t.digest, definition: t.source, pinnedAt: now, by: 'first_sight' }]);
    const carriedPins = [...carried].flatMap(([name, c]): [string, PinRecord][] => (c.pin && !known?.pins.has(name) ? [[name, c.pin]] : []));
    // A tool the upstream added after its first catalogue, accepted on first sight (`newTools: accept`): told, as every
    // other outcome is (upstream try-out: a tool added at run time was served to every caller with no line anywhere).
    const acceptedNew = new Set<string>();
    if (known && firstSights.length + carriedPins.length && !degraded) {
      try {
        for (const [name, pin] of await this.store.pinAllIfAbsent(upstream, [...carriedPins, ...firstSights])) known.pins.set(name, pin);
        if (!firstCatalogue && mode !== 'off') for (const [name] of firstSights) acceptedNew.add(name);
      } catch {
        degraded = true;
      }
    }

    const holds: Hold[] = [];
    const judgements = new Map<string, ToolJudgement>();
    const waiting: [string, PendingChange][] = [];
    const settled: string[] = [];
    // Carried only with their pins (written above): a waiting change filed without its pin would read as a tool new here.
    if (known && carried.size && !degraded) {
      for (const [name, c] of carried)
        if (c.pending) {
          known.pending.set(name, c.pending);
          waiting.push([name, c.pending]);
        }
      const from = new Map<string, string[]>();
      for (const [name, c] of carried) from.set(c.from, [...(from.get(c.from) ?? []), name]);
      for (const [previous, names] of from)
        this.options.log.warn(
          { upstream, from: previous, tools: names.slice(0, 20), count: names.length },
          // Still configured, the other upstream keeps its own: this one holds a copy (pinning try-out: "takes over" read as a move).
          this.options.upstreams.includes(previous)
            ? `upstream ${upstream} lists definitions upstream ${previous} holds for approval, under the same names: they are held here too (copied; ${previous} keeps its own) until approved under ${upstream}`
            : `upstream ${upstream} takes over upstream ${previous}'s pins and held changes of the tools it lists under the same names (a definition held or pinned there: a renamed upstream is no first sight); a change held there is held here until approved under ${upstream}`,
        );
    }
    const judge = (t: (typeof tools)[number], state: ToolJudgement['state'], hold?: Hold) => {
      // A `warned` tool carries its change for the report, and is served: it is no hold.
      if (hold && state === 'held') holds.push(hold);
      judgements.set(t.name, {
        upstream,
        name: t.name,
        state,
        ...(hold ? { reason: hold.reason, listed: hold.serve !== undefined } : {}),
        changes: hold?.changes ?? [],
        findings: t.findings,
        digest: t.digest,
      });
    };
    // The loop's log lines are told together after it (one per outcome, with a count): no await inside it.
    const told: ToldLine[] = [];
    this.telling = told;
    // Whatever the loop throws, what it collected is told, and lines after it are not collected into a dead array (review).
    try {
      for (const t of tools) {
        const serious = t.findings.filter((f) => f.rule !== 'invisible-characters');
        const lintChanges = serious.map((f) => `lint ${f.rule} at ${f.path}: ${f.excerpt}`);
        if (!this.usesStore) {
          if (lint === 'warn' && serious.length) this.emit('lint_warned', upstream, t.name, lintChanges, t.digest);
          judge(t, 'pinned');
          continue;
        }
        const pin = known?.pins.get(t.name);
        const pending = known?.pending.get(t.name);
        const note = (kind: PendingChange['kind']) => {
          if (pending?.digest !== t.digest) waiting.push([t.name, { digest: t.digest, definition: t.source, seenAt: now, kind }]);
        };
        if (!pin) {
          if (!known || degraded) {
            // Not knowing the pin, the change cannot be told from a first sight: hold it (mode hold) or serve it.
            if (mode === 'hold') judge(t, 'held', { name: t.name, reason: 'unverified', changes: ['the pin store could not be read'], digest: t.digest });
            else judge(t, 'pinned');
            continue;
          }
          judge(t, 'held', { name: t.name, reason: 'new', changes: ['a tool the upstream did not list before'], digest: t.digest });
          note('new');
          this.emit('new_held', upstream, t.name, [], t.digest);
          continue;
        }
        // Served: not when the lint holds it (review: told "served" of a tool held for its findings).
        if (acceptedNew.has(t.name) && pin.digest === t.digest && !(lint === 'hold' && serious.length))
          this.emit('new_accepted', upstream, t.name, ['a tool the upstream did not list before'], t.digest);
        const unchanged = pin.digest === t.digest;
        // A definition nobody approved yet: a first sight, or a change.
        const unapproved = !unchanged || pin.by === 'first_sight';
        if (lint === 'hold' && serious.length && unapproved) {
          const serve =
            !unchanged &&
            acceptsCallsUnder(pin.definition, t.source) &&
            this.findingsOf(pin.definition, upstream).every((f) => f.rule === 'invisible-characters');
          const changes = unchanged ? lintChanges : [...describeChanges(pin.definition, t.source, policy.metaKey), ...lintChanges];
          judge(t, 'held', { name: t.name, reason: 'lint', changes, digest: t.digest, ...(serve ? { serve: pin.definition } : {}) });
          note('lint');
          this.emit('lint_held', upstream, t.name, changes, t.digest, pin.digest);
          continue;
        }
        const lintWarned = lint === 'warn' && serious.length > 0 && unapproved;
        // Served with its findings unless the change itself is held: then the hold names them (one event, not a "served" one too).
        if (lintWarned && (unchanged || mode !== 'hold')) this.emit('lint_warned', upstream, t.name, lintChanges, t.digest, pin.digest);
        if (unchanged || mode === 'off') {
          if (pending && unchanged) {
            settled.push(t.name);
            if (pending.kind === 'changed') this.emit('reverted', upstream, t.name, [], t.digest, pin.digest);
          }
          judge(t, 'pinned');
          continue;
        }
        const changes = describeChanges(pin.definition, t.source, policy.metaKey);
        note('changed');
        if (mode === 'hold') {
          const serve = acceptsCallsUnder(pin.definition, t.source) ? { serve: pin.definition } : {};
          judge(t, 'held', { name: t.name, reason: 'changed', changes, digest: t.digest, ...serve });
          // The hold's one event names the lint findings too (the review lists them apart from the changes).
          this.emit('held', upstream, t.name, lintWarned ? [...changes, ...lintChanges] : changes, t.digest, pin.digest);
        } else {
          judge(t, 'warned', { name: t.name, reason: 'changed', changes, digest: t.digest });
          this.emit('warned', upstream, t.name, changes, t.digest, pin.digest);
        }
      }
    } finally {
      this.telling = undefined;
      this.tellTogether(upstream, told);
    }
    let written = !degraded;
    if (!degraded && (waiting.length || settled.length)) {
      try {
        await this.store.notePendingAll(upstream, waiting);
        for (const name of settled) await this.store.clearPending(upstream, name);
        // A rename moves what it carries: a waiting copy left under the old name would hold the tool again
        // once approved here and renamed once more (review). A configured name's own changes stay its own.
        const configured = new Set(this.options.upstreams);
        for (const [name, c] of carried)
          if (c.pending && !configured.has(c.from)) {
            await this.store.clearPending(c.from, name);
            this.unwritten.get(c.from)?.delete(name);
            this.known.get(c.from)?.pending.delete(name);
          }
      } catch {
        // Logged and counted by the store; kept below until written.
        written = false;
      }
    }
    // After the writes: a read made meanwhile would miss them.
    if (firstSights.length || carried.size || waiting.length || settled.length) this.filed = undefined;
    if (written) this.unwritten.delete(upstream);
    else if (waiting.length) {
      // A held change has its waiting record once the store is back, before the next catalogue is judged.
      const changes = new Map(this.unwritten.get(upstream));
      for (const [name, change] of waiting) changes.set(name, change);
      for (const name of settled) changes.delete(name);
      this.unwritten.set(upstream, changes);
    }
    this.judged.set(upstream, judgements);
    this.options.metrics.toolsHeld.set({ upstream }, holds.length);
    for (const rule of LINT_RULES)
      this.options.metrics.descriptionFindings.set({ upstream, rule: rule.id }, tools.filter((t) => t.findings.some((f) => f.rule === rule.id)).length);
    return { view: heldView(raw, holds, policy), degraded };
  }

  /** What the store files under every upstream name but `upstream` (changes judged during an outage included). @throws PinStoreUnavailable */
  private async filedElsewhere(upstream: string): Promise<Map<string, Filed>> {
    // One read of the whole store serves every upstream judged within FILED_MEMO_MS (a start judges them all at
    // once: review, a 10,000-pin store took 126-226 ms to read); a write of the guard's own drops it.
    const now = Date.now();
    if (!this.filed || now - this.filed.at > FILED_MEMO_MS) {
      const read = this.readFiled();
      this.filed = { at: now, read };
      read.catch(() => {
        if (this.filed?.read === read) this.filed = undefined;
      });
    }
    const everything = await this.filed.read;
    const others = new Map<string, Filed>();
    for (const [name, filed] of everything) {
      if (name === upstream) continue;
      const unwritten = this.unwritten.get(name);
      others.set(name, unwritten?.size ? { pins: filed.pins, pending: new Map([...filed.pending, ...unwritten]) } : filed);
    }
    return others;
  }

  /** Every upstream name's pins and waiting changes, as the store files them. @throws PinStoreUnavailable */
  private async readFiled(): Promise<Map<string, Filed>> {
    const names = await this.store.upstreams();
    return new Map(
      await Promise.all(
        names.map(async (name): Promise<[string, Filed]> => [name, { pins: await this.store.pins(name), pending: await this.store.pending(name) }]),
      ),
    );
  }

  private digestOf(source: Tool, metaKey: string): string {
    const cached = this.digests.get(source);
    if (cached?.metaKey === metaKey) return cached.digest;
    const digest = definitionDigest(source, metaKey);
    this.digests.set(source, { metaKey, digest });
    return digest;
  }

  /** Lint findings of a definition, once per definition object; other upstreams' tool names as they are now. */
  private findingsOf(source: Tool, upstream: string): LintFinding[] {
    if (this.config.lint === 'off') return [];
    let findings = this.lints.get(source);
    if (!findings) {
      let otherTools = this.otherToolNames.get(upstream);
      if (!otherTools) {
        otherTools = new Set([...this.toolNames].flatMap(([name, tools]) => (name === upstream ? [] : [...tools])));
        this.otherToolNames.set(upstream, otherTools);
      }
      findings = lintDefinition(source, { otherTools, ownTools: this.toolNames.get(upstream) });
      this.lints.set(source, findings);
    }
    return findings;
  }

  /** Logs, audits and counts one outcome, once per process for a tool, digest and outcome (approvals always). */
  private emit(
    outcome: DefinitionOutcome,
    upstream: string,
    name: string,
    changes: readonly string[],
    current: string,
    pinned?: string,
    approver?: Approver,
  ): void {
    const key = `${upstream}\u0000${name}\u0000${current}\u0000${outcome}`;
    if (outcome !== 'approved') {
      if (this.told.has(key)) return;
      if (this.told.size >= TOLD_LIMIT) this.told.clear();
      this.told.add(key);
    }
    const { metrics, audit } = this.options;
    metrics.toolDefinitionChanges.inc({ upstream, outcome });
    audit.definitionChange({ upstream, tool: name, outcome, changes, current, ...(pinned ? { pinned } : {}), ...approver });
    const line: ToldLine = { outcome, upstream, name, changes, current, approver };
    if (this.telling) this.telling.push(line);
    else this.tell(line);
  }

  /**
   * The log lines of one catalogue's judgement: a tool's own line when it is the only one of its outcome, else one
   * line per outcome with the count and the first {@link TOLD_NAMES} names (an upstream that changed 3,000 tools
   * made 3,000 lines: try-out), except served changes (`warned`, `lint_warned`), told each. Each tool's change
   * stays in the audit trail, on the console and in `pins list`.
   */
  private tellTogether(upstream: string, lines: readonly ToldLine[]): void {
    const byOutcome = new Map<DefinitionOutcome, ToldLine[]>();
    for (const line of lines) byOutcome.set(line.outcome, [...(byOutcome.get(line.outcome) ?? []), line]);
    for (const [outcome, same] of byOutcome) {
      // A served change is told tool by tool, whatever the count: it is the only record of it in a default setup (audit
      // off), and a summary naming the first ten let an upstream hide the eleventh behind ten harmless ones (review).
      if (same.length === 1 || outcome === 'warned' || outcome === 'lint_warned') {
        for (const line of same) this.tell(line);
        continue;
      }
      const fields = { upstream, outcome, count: same.length, tools: same.slice(0, TOLD_NAMES).map((l) => l.name) };
      const { log } = this.options;
      if (outcome === 'reverted') log.info(fields, `the upstream serves the pinned definitions of ${same.length} tools again; their holds are lifted`);
      else if (outcome.endsWith('held'))
        log.warn(
          { ...fields, review: `pins list, then pins diff ${upstream}/<tool> and pins approve ${upstream}/<tool> --digest <digest>` },
          `${same.length} tool definitions held until an operator approves them (console: Definition changes; CLI: pins list, pins diff, pins approve)`,
        );
      else if (outcome === 'new_accepted')
        log.warn(fields, `${same.length} tools the upstream did not list before are served, pinned as first seen (pinning.newTools: accept)`);
      else log.info(fields, `${same.length} tool definition outcomes (${outcome})`);
    }
  }

  /** One outcome's own log line. */
  private tell({ outcome, upstream, name, changes, current, approver }: ToldLine): void {
    const { log } = this.options;
    const fields = { upstream, tool: name, outcome, changes };
    if (outcome === 'approved') log.info({ ...fields, ...approver }, 'tool definition approved; it is served from now on');
    else if (outcome === 'reverted') log.info(fields, 'the upstream serves the pinned tool definition again; the hold is lifted');
    else if (outcome.endsWith('held'))
      log.warn(
        { ...fields, approve: `pins diff ${upstream}/${name}, then pins approve ${upstream}/${name} --digest ${current}` },
        'tool definition held until an operator approves it (console: Definition changes; CLI: pins diff, pins approve)',
      );
    else if (outcome === 'lint_warned') log.warn(fields, 'tool definition has description lint findings; served (pinning.lint: warn)');
    else if (outcome === 'new_accepted') log.warn(fields, 'a tool the upstream did not list before is served, pinned as first seen (pinning.newTools: accept)');
    else log.warn(fields, 'tool definition changed; served (pinning.mode: warn)');
  }
}
