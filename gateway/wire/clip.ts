/**
 * Caller text echoed back or recorded, bounded: an answer or an audit line holds at most `max`
 * characters of a string the caller chose (a tool name, a client name, a header value), then `…`.
 */

/** `value` cut to `max` characters plus `…` when longer; the same string otherwise. */
export function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
