/**
 * The `pins` subcommand (issue 30): reviews and approves tool definition pins of a running gateway
 * through its console API (gateway/http/console/pins.ts), with the console's admin token. Every replica
 * shares the pins (Redis), so any one of them answers for all.
 *
 *   pins list                 every pin: state (pinned, held, warned, not listed now, waiting, upstream no
 *                             longer configured), what changed, lint findings
 *   pins diff TOOL            the pinned and the waiting definition of TOOL as a unified diff
 *   pins approve TOOL --digest D   makes the waiting definition of TOOL the pin, if it is still the one
 *                             `pins diff` showed (D: its digest, or a prefix of 12+ hex digits)
 *   pins approve --all        makes every waiting definition, as it is now, the pin
 *
 * TOOL is the name callers use (`get_bars`, `cpzai__get_bars`), or `<upstream>/<tool>` for a tool the
 * catalogue does not list now.
 */
import type { PinDetail, PinReviewEntry } from '../ops/pin-review.ts';
import { UsageError } from './args.ts';

/** Where the gateway's console is and how to get in. */
export interface ConsoleTarget {
  /** Base URL, e.g. http://127.0.0.1:3000. */
  url: string;
  adminToken: string;
  /** Default: global fetch. */
  fetch?: typeof fetch;
}

/** A failure to report in one line (exit 1): the gateway refused or could not be reached. */
export class PinsCommandError extends Error {
  override name = 'PinsCommandError';
}

/** Runs `pins <action> [TOOL]` and returns what to print. @throws UsageError, PinsCommandError */
export async function runPinsCommand(
  target: ConsoleTarget,
  args: readonly string[],
  options: { all?: boolean; digest?: string; json?: boolean },
): Promise<string> {
  const [action, tool, extra] = args;
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  if (action === 'list') {
    if (tool !== undefined) throw new UsageError('pins list takes no tool');
    const { entries } = await api<{ entries: PinReviewEntry[] }>(target, 'GET', '/console/api/pins');
    return options.json ? json(entries) : formatList(entries);
  }
  if (action === 'diff') {
    if (tool === undefined) throw new UsageError('pins diff needs a tool: pins diff TOOL');
    const entry = resolve(await list(target), tool);
    const detail = await api<PinDetail>(target, 'GET', `/console/api/pins/${encodeURIComponent(entry.upstream)}/${encodeURIComponent(entry.name)}`);
    return options.json ? json(detail) : formatDetail(detail);
  }
  if (action === 'approve') {
    if (options.all && tool !== undefined) throw new UsageError('pins approve takes a tool or --all, not both');
    if (!options.all && tool === undefined) throw new UsageError('pins approve needs a tool or --all');
    if (options.all && options.digest !== undefined) throw new UsageError('--digest names one definition: pins approve TOOL --digest D');
    let body: Record<string, unknown> = { all: true };
    if (!options.all) {
      // An approval confirms the definition the operator reviewed, not whatever waits when the command
      // runs: the upstream may have changed it again since `pins diff` (issue 30).
      if (options.digest === undefined)
        throw new UsageError(`pins approve ${tool} needs --digest: the waiting digest \`pins diff ${tool}\` shows (the definition you reviewed)`);
      const wanted = digestPrefix(options.digest);
      const entry = resolve(await list(target), tool!);
      if (!entry.pending) throw new PinsCommandError(`nothing waits for approval for ${label(entry)}: it is served as pinned`);
      if (!entry.pending.digest.startsWith(wanted))
        throw new PinsCommandError(
          `the definition waiting for ${label(entry)} is ${entry.pending.digest}, not the ${options.digest} you reviewed: it changed since; run pins diff ${label(entry)} again`,
        );
      // The full digest: a definition that changes between this read and the approval is refused by the gateway (409).
      body = { upstream: entry.upstream, name: entry.name, digest: entry.pending.digest };
    }
    const { approved } = await api<{ approved: { upstream: string; name: string }[] }>(target, 'POST', '/console/api/pins/approve', body);
    if (options.json) return json(approved);
    return approved.length ? `approved ${approved.map((a) => `${a.upstream}/${a.name}`).join(', ')}\n` : 'nothing waited for approval\n';
  }
  throw new UsageError(
    action === undefined ? 'pins needs an action: list, diff TOOL or approve TOOL|--all' : `unknown pins action "${action}" (list, diff, approve)`,
  );
}

/** `sha256:<hex>` or bare hex, at least 12 digits (a prefix names one definition in practice): the `sha256:` form. @throws UsageError */
function digestPrefix(digest: string): string {
  const hex = digest.startsWith('sha256:') ? digest.slice('sha256:'.length) : digest;
  if (!/^[0-9a-f]{12,64}$/.test(hex))
    throw new UsageError(`--digest: sha256:<hex digits> or its first 12+ hex digits (as pins diff shows it), not "${digest}"`);
  return `sha256:${hex}`;
}

async function list(target: ConsoleTarget): Promise<PinReviewEntry[]> {
  return (await api<{ entries: PinReviewEntry[] }>(target, 'GET', '/console/api/pins')).entries;
}

/** The entry TOOL names: its name for callers, `<upstream>/<name>`, or its upstream name when only one upstream has it. */
function resolve(entries: readonly PinReviewEntry[], tool: string): PinReviewEntry {
  const exact = entries.filter((e) => e.tool === tool || `${e.upstream}/${e.name}` === tool);
  const found = exact.length ? exact : entries.filter((e) => e.name === tool);
  if (found.length === 1) return found[0]!;
  if (found.length > 1)
    throw new PinsCommandError(`${tool} names ${found.length} tools: say which, as ${found.map((e) => `${e.upstream}/${e.name}`).join(' or ')}`);
  throw new PinsCommandError(`no pin or waiting change named ${tool} (pins list shows them)`);
}

async function api<T>(target: ConsoleTarget, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await (target.fetch ?? fetch)(new URL(path, target.url), {
      method,
      headers: { authorization: `Bearer ${target.adminToken}`, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    throw new PinsCommandError(`cannot reach the gateway at ${target.url}: ${(error as Error).cause ?? (error as Error).message}`);
  }
  if (response.status === 401) throw new PinsCommandError('the gateway refused the admin token (console.adminToken; --admin-token)');
  if (response.status === 404 && !(response.headers.get('content-type') ?? '').includes('json'))
    throw new PinsCommandError(`${target.url} serves no console (set console.adminToken on the gateway)`);
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new PinsCommandError(`the gateway answered ${response.status} without JSON: ${text.slice(0, 200)}`);
  }
  if (!response.ok) {
    // The console answers `{ error: string }`; anything else there (a JSON-RPC error body: no console on that path) is read for its message.
    const error = (parsed as { error?: unknown } | null)?.error;
    const reason = typeof error === 'string' ? error : (error as { message?: unknown } | undefined)?.message;
    if (response.status === 404 && typeof error !== 'string')
      throw new PinsCommandError(`${target.url} serves no console (set console.adminToken on the gateway)`);
    throw new PinsCommandError(`the gateway answered ${response.status}: ${typeof reason === 'string' ? reason : text.slice(0, 200)}`);
  }
  return parsed as T;
}

function label(e: PinReviewEntry): string {
  return e.tool ?? `${e.upstream}/${e.name}`;
}

function state(e: PinReviewEntry): string {
  if (e.state === 'held') return `held (${e.reason})`;
  if (e.state === 'warned') return 'changed, served';
  if (e.state === 'removed') return 'not listed now';
  if (e.pending) return `waiting (${e.pending.kind})${e.state === 'unconfigured' ? ', upstream no longer configured' : ''}`;
  if (e.state === 'unconfigured') return 'pinned, upstream no longer configured';
  return e.state === 'unseen' ? 'pinned, not seen yet' : 'pinned';
}

/** One line per pin: tool, upstream, state, what changed and the lint rules found; waiting ones first. */
function formatList(entries: readonly PinReviewEntry[]): string {
  if (entries.length === 0) return 'no pins yet (the gateway pins each tool the first time it fetches its upstream)\n';
  const rows = [...entries.filter((e) => e.pending), ...entries.filter((e) => !e.pending)].map((e) => [
    label(e),
    e.upstream,
    state(e),
    [...e.changes, ...new Set(e.findings.map((f) => `lint: ${f.rule}`))].join('; '),
  ]);
  const header = ['TOOL', 'UPSTREAM', 'STATE', 'CHANGES'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < cells.length - 1 ? c.padEnd(widths[i]!) : c))
      .join('  ')
      .trimEnd();
  const waiting = entries.filter((e) => e.pending).length;
  return `${[line(header), ...rows.map(line)].join('\n')}\n${waiting ? `\n${waiting} waiting for approval: pins diff TOOL, then pins approve TOOL --digest D\n` : ''}`;
}

function formatDetail(d: PinDetail): string {
  const lines = [`${label(d)} (upstream ${d.upstream}): ${state(d)}`];
  for (const change of d.changes) lines.push(`  ${change}`);
  for (const f of d.findings) lines.push(`  lint ${f.rule} at ${f.path}: ${f.excerpt}`);
  if (d.pin) lines.push(`pinned  ${d.pin.digest} (${d.pin.by.replace('_', ' ')}, ${d.pin.pinnedAt})`);
  if (d.pending) lines.push(`waiting ${d.pending.digest} (${d.pending.kind}, seen ${d.pending.seenAt})`);
  lines.push(
    '',
    d.pending
      ? d.diff
      : d.state === 'held'
        ? '(held, but nothing waits for approval yet: the gateway writes the change once its pin store answers; run pins diff again)'
        : '(nothing waits: the pinned definition is what the upstream lists)',
  );
  if (d.pending) lines.push(`approve it: pins approve ${label(d)} --digest ${d.pending.digest}`);
  return `${lines.join('\n')}\n`;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
