import { jsonPointer } from './json-pointer.ts';

/**
 * Numbers a request carries that JSON.parse cannot read exactly: an integer past ±(2^53 - 1) is rounded
 * (12345678901234567890 is read as 12345678901234567000), a decimal with more digits than a double holds
 * is cut (1.0000000000000001 is read as 1), one past ±1.8e308 is read as Infinity (sent on as null) and
 * one below 5e-324 as 0. Forwarded, each would reach the upstream as another value than the caller sent,
 * with no error anywhere: the edge refuses them instead (http/mcp-endpoint.ts), naming the member.
 * An integer request id or progress token is the classifier's (http/classify.ts), which refuses an unsafe one.
 */

/** The first number of `text` not carried exactly, with its JSON Pointer and what JSON.parse makes of it. */
export interface InexactNumber {
  path: (string | number)[];
  /** The number as the caller wrote it. */
  literal: string;
  /** What JSON.parse reads it as (`Infinity` for an overflow). */
  read: string;
}

/** One open container of the scan: an array and its element index, or an object and its current key (offsets into the text). */
interface Open {
  array: boolean;
  index: number;
  keyStart: number;
  keyEnd: number;
}

/**
 * The first number token of the JSON `text` (already parsed by JSON.parse, so well formed) that JSON.parse
 * does not read as the value written (see the module comment), in document order; undefined when every
 * number is carried exactly. One pass over the text (no pattern first: a regular expression over a 1 MB
 * run of digits cost 27-53 ms), strings skipped, no value built, any depth; only a token of 16 characters or
 * with an exponent is checked, and a key is decoded only to name the path of a number found. Every literal
 * counts, one a later duplicate key overrides included.
 */
export function inexactNumber(text: string): InexactNumber | undefined {
  const stack: Open[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push({ array: c === 0x5b, index: 0, keyStart: -1, keyEnd: -1 });
      expectKey = c === 0x7b;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack.at(-1);
      if (top?.array) top.index++;
      else expectKey = true;
      i++;
    } else if (c === 0x3a /* : */) {
      expectKey = false;
      i++;
    } else if (c === 0x22 /* " */) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
      const top = stack.at(-1);
      if (expectKey && top && !top.array) {
        top.keyStart = start;
        top.keyEnd = i;
      }
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      while (i < n && isNumberChar(text.charCodeAt(i))) i++;
      const literal = text.slice(start, i);
      if (i - start >= 16 || /[eE]/.test(literal)) {
        if (!carriedExactly(literal)) {
          const path = stack.map((open) => (open.array ? open.index : (JSON.parse(text.slice(open.keyStart, open.keyEnd)) as string)));
          if (!(isIdentifier(path) && /^-?\d+$/.test(literal))) return { path, literal, read: String(Number(literal)) };
        }
      }
    } else i++;
  }
  return undefined;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e /* . */ || c === 0x2d /* - */ || c === 0x2b /* + */ || c === 0x65 /* e */ || c === 0x45 /* E */;
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

/** A message's `id` (single or in a batch) or `params._meta.progressToken`: an integer one is the classifier's to refuse. */
function isIdentifier(path: readonly (string | number)[]): boolean {
  const at = typeof path[0] === 'number' ? path.slice(1) : path;
  return (at.length === 1 && at[0] === 'id') || (at.length === 3 && at[0] === 'params' && at[1] === '_meta' && at[2] === 'progressToken');
}
