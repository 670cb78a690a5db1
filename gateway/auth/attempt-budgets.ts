import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { GatewayConfig } from '../../config/types.ts';
import type { BudgetCharge } from '../store/rate-limiter.ts';

/**
 * The budgets that bound guessing and registration (issue 28), spent before the check they protect
 * (store/rate-limiter.ts counts them, in Redis when replicas share it): RFC 7591 registrations per
 * address and in total, sign-in attempts per key, client, address and sign-in page, the console's admin
 * token per address. Pure: a function of config and what the attempt names.
 */

/**
 * The client a per-address budget counts: an IPv4 address, or the /64 an IPv6 address is in (a host is
 * routinely handed a whole /64, RFC 7421: counted per address, one client would hold 2^64 budgets).
 */
export function addressBucket(address: string): string {
  if (isIP(address) !== 6) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toRFC5952String()}/64`;
}

/** The budgets of one RFC 7591 registration from `address`: that address's, then everyone's (`rateLimits.registrations`). */
export function registrationCharges(limits: GatewayConfig['rateLimits'], address: string): BudgetCharge[] {
  const { perAddress, total } = limits.registrations;
  return [
    ...(perAddress ? [{ budget: 'registrations_per_address' as const, key: `registrations:address:${addressBucket(address)}`, limit: perAddress }] : []),
    ...(total ? [{ budget: 'registrations_total' as const, key: 'registrations:total', limit: total }] : []),
  ];
}

/**
 * The budgets of one attempt on the OAuth sign-in page (`rateLimits.signIns`), spent before the key is
 * checked: the key named (`account`, a keyed digest of the key id), the client, the address, and the
 * sign-in page itself (`page`: its interaction uid, {@link SIGN_INS_PER_PAGE} attempts while it lives).
 * From an address the key signed in from before (`knownAddress`: interaction.ts remembers it for
 * {@link KNOWN_ADDRESS_SECONDS}) neither the key's budget nor the client's is spent: a key id is no secret
 * and a client id is public (one client ID metadata document URL serves every user of an app), so guesses
 * from elsewhere that spend them must not lock out an owner where they sign in (try-out: 300 guesses in
 * 2 s through one client locked out every user of it); the address's own budget still bounds whatever
 * comes from there.
 */
export function signInCharges(
  limits: GatewayConfig['rateLimits'],
  attempt: { account: string; client: string; address: string; page: string; pageTtlMs: number; knownAddress?: boolean },
): BudgetCharge[] {
  const { perKey, perClient, perAddress } = limits.signIns;
  const durationMs = Math.max(1000, Math.ceil(attempt.pageTtlMs / 1000) * 1000);
  return [
    { budget: 'sign_ins_per_page' as const, key: `sign-ins:page:${attempt.page}`, limit: { points: SIGN_INS_PER_PAGE, durationMs } },
    ...(perKey && !attempt.knownAddress ? [{ budget: 'sign_ins_per_key' as const, key: `sign-ins:key:${attempt.account}`, limit: perKey }] : []),
    ...(perClient && !attempt.knownAddress ? [{ budget: 'sign_ins_per_client' as const, key: `sign-ins:client:${attempt.client}`, limit: perClient }] : []),
    ...(perAddress ? [{ budget: 'sign_ins_per_address' as const, key: `sign-ins:address:${addressBucket(attempt.address)}`, limit: perAddress }] : []),
  ];
}

/** How long an address a key signed in from stays known to that key (30 days), seconds. */
export const KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600;

/** The store key remembering that `account` signed in from `address` (its IPv6 /64). */
export function knownAddressKey(account: string, address: string): string {
  return `sign-in-known:${account}:${addressBucket(address)}`;
}

/** Attempts one sign-in page allows; past them the authorization ends with access_denied (a new one needs the client again). */
export const SIGN_INS_PER_PAGE = 5;

/** The budget of one console request carrying an admin token, from `address` (`rateLimits.consoleSignIns`). */
export function consoleSignInCharges(limits: GatewayConfig['rateLimits'], address: string): BudgetCharge[] {
  const { perAddress } = limits.consoleSignIns;
  return perAddress ? [{ budget: 'console_sign_ins_per_address', key: `console-sign-ins:address:${addressBucket(address)}`, limit: perAddress }] : [];
}
