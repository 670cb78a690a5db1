/**
 * A JSON Pointer (RFC 6901 §3-4) from reference tokens: each token prefixed by `/`, `~` escaped as
 * `~0` and `/` as `~1`; `[]` is the whole document (`''`).
 */
export function jsonPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${String(token).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
