import { jsonPointer } from './json-pointer.ts';

/**
 * Structural limits on a parsed JSON request body: nesting depth, string length (values and object
 * keys, in UTF-16 code units as JavaScript counts them) and array length. Bodies are already bounded in
 * bytes (`limits.bodyBytes`); these bound what a small body can make the rest of the gateway do: 4,500
 * levels of `[` fit in 9 KB and overflow the stack of any recursive validator behind the edge.
 *
 * Pure; it stops at the first breach and visits each value once, recursing no deeper than the depth
 * limit allows (at most JSON_DEPTH_CEILING + 1 frames, far below Node's stack), so no input can overflow it. Limits are `config.limits.{jsonDepth,stringLength,arrayLength}`
 * (config/schema.json).
 */

/**
 * The deepest nesting any part of the gateway is asked to handle, whatever `limits.jsonDepth` says (its
 * schema maximum): the MCP SDK's Node handler re-serialises a 2025-era body with the recursive
 * JSON.stringify, which overflows Node 20's default stack at about 4,500 levels.
 */
export const JSON_DEPTH_CEILING = 1000;

export interface InputLimits {
  /** Most nested objects/arrays; the body's own top-level object or array is depth 1. */
  jsonDepth: number;
  /** Longest string value or object key, in UTF-16 code units. */
  stringLength: number;
  /** Most elements in one array (a batch body included). */
  arrayLength: number;
  /** Most members (keys) of one object. */
  objectMembers: number;
}

/** `nameLength`: a prompt name's or resource URI's own limit (http/classify.ts `nameBreach`), beside the structural ones. */
export type LimitName = keyof InputLimits | 'nameLength';

/** The first limit a value breaks: which, its configured maximum, and where (`path` from the checked value). */
export interface LimitBreach {
  limit: LimitName;
  max: number;
  path: (string | number)[];
}

/**
 * The first breach of `limits` in `value` (depth-first, document order; an object's keys are checked
 * before its values, the last over-long key first), or undefined. `base` is prepended to the reported
 * path (e.g. `['params', 'arguments']` when checking tool arguments alone). Recursive, but never deeper
 * than `limits.jsonDepth` + 1 frames (at most {@link JSON_DEPTH_CEILING} + 1): the depth is checked before
 * descending. Nothing is allocated but the keys of each object until a breach is found.
 */
export function findLimitBreach(value: unknown, limits: InputLimits, base: readonly (string | number)[] = []): LimitBreach | undefined {
  const found = breachIn(value, 0, limits);
  if (!found) return undefined;
  // The path was collected innermost first as the walk unwound.
  return { limit: found.limit, max: limits[found.limit], path: [...base, ...found.path.reverse()] };
}

interface Found {
  limit: keyof InputLimits;
  /** Innermost key first. */
  path: (string | number)[];
}

/** The first breach in `value`, whose parent is at `parentDepth` (the checked value's parent: 0). */
function breachIn(value: unknown, parentDepth: number, limits: InputLimits): Found | undefined {
  if (typeof value === 'string') return value.length > limits.stringLength ? { limit: 'stringLength', path: [] } : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  const depth = parentDepth + 1;
  if (depth > limits.jsonDepth) return { limit: 'jsonDepth', path: [] };
  if (Array.isArray(value)) {
    if (value.length > limits.arrayLength) return { limit: 'arrayLength', path: [] };
    for (let i = 0; i < value.length; i++) {
      const found = breachIn(value[i], depth, limits);
      if (found) {
        found.path.push(i);
        return found;
      }
    }
    return undefined;
  }
  const keys = Object.keys(value);
  if (keys.length > limits.objectMembers) return { limit: 'objectMembers', path: [] };
  for (let i = keys.length - 1; i >= 0; i--) {
    if (keys[i]!.length > limits.stringLength) return { limit: 'stringLength', path: [keys[i]!] };
  }
  for (let i = 0; i < keys.length; i++) {
    const found = breachIn((value as Record<string, unknown>)[keys[i]!], depth, limits);
    if (found) {
      found.path.push(keys[i]!);
      return found;
    }
  }
  return undefined;
}

const WHAT: Record<LimitName, string> = {
  jsonDepth: 'JSON nesting deeper than',
  stringLength: 'a string longer than',
  arrayLength: 'an array longer than',
  objectMembers: 'an object with more members than',
  nameLength: 'a name or URI longer than',
};

/** Most path segments a message shows (a 4,500-deep path would make the message the payload). */
const SHOWN_SEGMENTS = 8;
/** Most characters of one path segment a message shows (an object key may be as long as limits.stringLength). */
const SHOWN_SEGMENT_CHARS = 64;

/**
 * The path as a JSON Pointer (RFC 6901), `/params/arguments/items/3`, cut after {@link SHOWN_SEGMENTS}
 * segments and each segment after {@link SHOWN_SEGMENT_CHARS} characters (`…`); `(root)` for the value itself.
 */
export function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(root)';
  const shown = jsonPointer(
    path.slice(0, SHOWN_SEGMENTS).map((key) => (typeof key === 'string' && key.length > SHOWN_SEGMENT_CHARS ? `${key.slice(0, SHOWN_SEGMENT_CHARS)}…` : key)),
  );
  return path.length > SHOWN_SEGMENTS ? `${shown}/…` : shown;
}

/** What is wrong, without where: the limit, its configured key and value. */
export function breachProblem(breach: LimitBreach): string {
  return `${WHAT[breach.limit]} limits.${breach.limit} (${breach.max})`;
}

/** One line naming the limit, its configured key and value, and where it broke. */
export function describeBreach(breach: LimitBreach): string {
  return `${breachProblem(breach)} at ${formatPath(breach.path)}`;
}

/**
 * Whether a breach lies inside a request's `params` (JSON-RPC 2.0 §5.1: -32602 Invalid params) rather
 * than in the envelope or a batch (-32600 Invalid Request). A single request object's `params` only.
 */
export function breachIsInParams(breach: LimitBreach): boolean {
  return breach.path[0] === 'params' && breach.path.length > 1;
}

/** Whether a breach lies inside a tools/call's `arguments`: the call answers an isError result instead. */
export function breachIsInToolArguments(body: unknown, breach: LimitBreach): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    (body as { method?: unknown }).method === 'tools/call' &&
    breach.path[0] === 'params' &&
    breach.path[1] === 'arguments' &&
    // Inside the arguments: the arguments object itself over a limit is the request's (400): an own tool of
    // /mcp/compact would check its schema against it first, one error per member.
    breach.path.length > 2
  );
}
