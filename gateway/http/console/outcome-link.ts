/**
 * The outcome of a console form, carried by its redirect (POST, then 303 to a page that says what came of
 * it), sealed so that a link cannot make the console say it: without a valid seal the page shows no
 * outcome. A link `/console/pins?approved=999` showed "Approved 999 definitions." to an operator who
 * opened it (security try-out). HMAC-SHA256 (RFC 2104) under a key random to this process: a redirect
 * answered by another replica shows no outcome, which is harmless.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY = randomBytes(32);
const SEAL = 'seal';

function sealOf(query: string): string {
  return createHmac('sha256', KEY).update(query).digest('base64url').slice(0, 22);
}

/** `path?query&seal=...`: the redirect after a form, with `outcome` (names and values of the outcome). */
export function outcomeLocation(path: string, outcome: Record<string, string | number>): string {
  const query = new URLSearchParams(Object.entries(outcome).map(([k, v]) => [k, String(v)])).toString();
  return `${path}?${query}&${SEAL}=${sealOf(query)}`;
}

/** The outcome a page's URL carries, when its seal is this process's; else empty (nothing to say). */
export function sealedOutcome(querystring: string): URLSearchParams {
  const at = querystring.lastIndexOf(`&${SEAL}=`);
  if (at < 0) return new URLSearchParams();
  const query = querystring.slice(0, at);
  const given = Buffer.from(querystring.slice(at + SEAL.length + 2));
  const expected = Buffer.from(sealOf(query));
  return given.length === expected.length && timingSafeEqual(given, expected) ? new URLSearchParams(query) : new URLSearchParams();
}
