import { isLosslessNumber, parse } from 'lossless-json';
import { jsonPointer } from './json-pointer.ts';

/**
 * Numbers a request carries that JSON.parse cannot read exactly: an integer past ±(2^53 - 1) is rounded
 * (12345678901234567890 is read as 12345678901234567000), a decimal with more digits than a double holds
 * is cut (1.0000000000000001 is read as 1), one past ±1.8e308 is read as Infinity (sent on as null) and
 * one below 5e-324 as 0. Forwarded, each would reach the upstream as another value than the caller sent,
 * with no error anywhere: the edge refuses them instead (http/mcp-endpoint.ts), naming the member.
 * Request ids and progress tokens are the classifier's (http/classify.ts), which refuses an unsafe one.
 */

/** The first number of `text` not carried exactly, with its JSON Pointer and what JSON.parse makes of it. */
export interface InexactNumber {
  path: (string | number)[];
  /** The number as the caller wrote it. */
  literal: string;
  /** What JSON.parse reads it as (`Infinity` for an overflow). */
  read: string;
}

/**
 * Text that may hold such a number: a run of 16 digits (the most a double always carries is 15), or an
 * exponent of three digits. Only then is the text parsed again, keeping each number's literal.
 */
const SUSPECT = /\d{16}|[eE][+-]?\d{3}/;

/**
 * The first number of the JSON `text` that JSON.parse does not read as the value written (see the module
 * comment), shallowest first; undefined when every number is carried exactly, or when the text is no
 * JSON this parser takes (the checks that read the body say why).
 */
export function inexactNumber(text: string): InexactNumber | undefined {
  if (!SUSPECT.test(text)) return undefined;
  let value: unknown;
  try {
    value = parse(text);
  } catch {
    // Nesting past the stack, or duplicate keys lossless-json refuses: JSON.parse took it, the limits decide.
    return undefined;
  }
  const pending: [unknown, (string | number)[]][] = [[value, []]];
  for (let next = 0; next < pending.length; next++) {
    const [node, at] = pending[next]!;
    if (isLosslessNumber(node)) {
      if (!carriedExactly(node.value) && !isIdentifier(at)) {
        const read = Number(node.value);
        return { path: at, literal: node.value, read: String(read) };
      }
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) node.forEach((child, i) => pending.push([child, [...at, i]]));
    else for (const [key, child] of Object.entries(node)) pending.push([child, [...at, key]]);
  }
  return undefined;
}

/** One line: where, what was written, what it would become. */
export function describeInexactNumber(found: InexactNumber): string {
  const literal = found.literal.length > 40 ? `${found.literal.slice(0, 40)}…` : found.literal;
  const becomes = found.read === 'Infinity' || found.read === '-Infinity' ? `${found.read} (sent on as null)` : found.read;
  return `${jsonPointer(found.path)} is ${literal}, a number JSON.parse reads as ${becomes}: send it as a string`;
}

/** Whether the double nearest to `literal` has the same significant digits (so the same value). */
export function carriedExactly(literal: string): boolean {
  const read = Number(literal);
  return Number.isFinite(read) && significantDigits(literal) === significantDigits(String(read));
}

function significantDigits(number: string): string {
  const mantissa = number.replace(/^-/, '').split(/[eE]/)[0]!.replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '');
}

/** A message's `id` (single or in a batch) or `params._meta.progressToken`: the classifier's to refuse. */
function isIdentifier(path: readonly (string | number)[]): boolean {
  const at = typeof path[0] === 'number' ? path.slice(1) : path;
  return (at.length === 1 && at[0] === 'id') || (at.length === 3 && at[0] === 'params' && at[1] === '_meta' && at[2] === 'progressToken');
}
