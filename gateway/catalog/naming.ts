import { createHash } from 'node:crypto';

/**
 * The names callers may be given: ASCII letters, digits, `_` and `-`, 1 to 64 characters. That is the
 * MCP tool-name rule (spec 2026-07-28, server/tools §Tool Names: 1-128 of A-Z a-z 0-9 _ - .) narrowed
 * to what model APIs accept for a function name (no `.`, at most 64), so a merged name works everywhere.
 */
export const EXPOSED_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_LENGTH = 64;
const HASH_LENGTH = 8;

/** One upstream's own name for a tool (or prompt). */
export interface UpstreamName {
  readonly upstream: string;
  readonly name: string;
}

/**
 * Several-upstream naming, the one rule: with one upstream every name is served as that upstream gives
 * it; with several, tools and prompts are exposed as `<upstream><separator><name>` ({@link exposedNames})
 * and each catalogue tool keeps its `upstream` and own `upstreamName` as data (routing, search).
 */
export function namingOptions(upstreamCount: number, separator: string): NamingOptions {
  return { separator, prefixed: upstreamCount > 1 };
}

/** How exposed names are told apart, in words a caller reads (the merged server's instructions). */
export function namingHint(options: NamingOptions): string {
  return `<server>${options.separator}<name>`;
}

export interface NamingOptions {
  /** Between the upstream name and the tool name (config `naming.separator`, default `__`). */
  readonly separator: string;
  /** false with a single upstream: names are served exactly as the upstream gives them. */
  readonly prefixed: boolean;
}

/**
 * The exposed name of each entry, in input order: a lookup table is built from the result, nothing ever
 * splits an exposed name back into its parts.
 *
 * Prefixed: `<upstream><separator><name>` when that is a valid {@link EXPOSED_NAME}. Otherwise (a `.`,
 * `/`, space or non-ASCII character, or longer than 64) the name is spelled with invalid runs replaced by
 * `_`, cut to fit, and given `_<8 hex of SHA-256(upstream, name)>`, so the same tool always gets the same
 * name and two names that clean up alike stay apart. When two entries still want one name (a valid name
 * that equals another's, e.g. `a` + `__` + `_b` and `a_` + `__` + `b`), every one of them takes the hashed
 * form: none silently wins, and the result does not depend on list order. A repeated (upstream, name)
 * pair, which the caller should have removed, is numbered rather than thrown on.
 */
export function exposedNames(entries: readonly UpstreamName[], options: NamingOptions): string[] {
  if (!options.prefixed) return entries.map((e) => e.name);
  const names = entries.map((e) => {
    const plain = `${e.upstream}${options.separator}${e.name}`;
    return EXPOSED_NAME.test(plain) ? plain : hashedName(e, options.separator, HASH_LENGTH);
  });
  for (const hashLength of [HASH_LENGTH, 16, 32]) {
    const clashing = clashes(names);
    if (clashing.length === 0) return names;
    for (const i of clashing) names[i] = hashedName(entries[i]!, options.separator, hashLength);
  }
  // Only a repeated (upstream, name) pair gets here: number the repeats rather than fail the catalogue.
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name.slice(0, MAX_LENGTH - String(n).length - 1)}_${n}`;
  });
}

/** `<upstream><separator><cleaned name>` cut to fit, then `_<hash>`. */
function hashedName(entry: UpstreamName, separator: string, hashLength: number): string {
  const hash = createHash('sha256').update(`${entry.upstream}\u0000${entry.name}`).digest('hex').slice(0, hashLength);
  const cleaned = entry.name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  const readable = `${entry.upstream}${separator}${cleaned || 'tool'}`;
  return `${readable.slice(0, MAX_LENGTH - hash.length - 1)}_${hash}`;
}

/** Indexes of names that occur more than once. */
function clashes(names: readonly string[]): number[] {
  const count = new Map<string, number>();
  for (const name of names) count.set(name, (count.get(name) ?? 0) + 1);
  return names.flatMap((name, i) => ((count.get(name) ?? 0) > 1 ? [i] : []));
}
