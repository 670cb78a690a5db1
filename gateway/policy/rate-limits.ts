import { ownEntry } from '../catalog/catalog.ts';
import type { GatewayConfig, RateBudget, UpstreamConfig } from '../../config/types.ts';
import type { BudgetCharge } from '../store/rate-limiter.ts';
import { checksKeyPairs } from '../auth/refused-credentials.ts';

/**
 * Which rate budgets a request or a tool call spends (issue 17). Pure: a function of config and the
 * call's identity only; gateway/store/rate-limiter.ts keeps the counters (memory, or Redis so replicas
 * share them).
 *
 * The budgets of MCP requests, each counted per account (a keyed digest of the key behind the
 * credential, whichever form it came in: key pair, bearer, OAuth token; auth/account.ts), never the
 * credential itself:
 * - `requests`: every MCP message of the account; over it the edge answers HTTP 429 with Retry-After;
 * - `reads` / `writes`: the account's tool calls of read-only / state-changing tools, so a burst of
 *   reads never eats the budget that placing an order needs (and the reverse);
 * - `tool`: the account's calls of one tool.
 * The budgets that bound guessing and registration are the auth layer's (auth/attempt-budgets.ts).
 * Tool-call budgets come from `rateLimits` and may be overridden per upstream (`upstreams[i].rateLimits`
 * `reads`, `writes`, `tool`) and per tool (`upstreams[i].rateLimits.tools[name]`). An override has its
 * own counter (keyed by upstream, or by tool), so a tighter limit on one upstream never spends the
 * gateway-wide one. An absent budget is no limit.
 */
/** The tool a call names, as the catalogue knows it. */
export interface ChargedTool {
  /** The upstream that serves it (`upstreams[i].name`). */
  upstream: string;
  /** Its name on that upstream (what `upstreams[i].rateLimits.tools` is keyed by). */
  upstreamName: string;
  readOnly: boolean;
}

/**
 * The `requests` budget of one MCP POST, or undefined when `rateLimits.requests` is not set: one point
 * per JSON-RPC message, so a 2025-03-26 batch of 100 costs what 100 POSTs do.
 * @param account - the keyed digest of the account behind the credential (auth/account.ts), whatever its form.
 */
/**
 * Methods that spend no `requests` point: discovery (2026-07-28 `server/discover`) and `ping` (basic/utilities/ping).
 * A client that asks them before its work would otherwise read a spent budget as a failed negotiation
 * (the v2 client reports a 429 on discovery as ERA_NEGOTIATION_FAILED), and they cost the gateway nothing upstream.
 */
const FREE_METHODS = new Set(['server/discover', 'ping']);

/** How many of a POST's JSON-RPC messages spend a `requests` point: all but {@link FREE_METHODS}. */
export function chargedMessages(messages: readonly Record<string, unknown>[]): number {
  return messages.filter((m) => !(typeof m.method === 'string' && FREE_METHODS.has(m.method))).length;
}

export function requestCharge(limits: GatewayConfig['rateLimits'], account: string, messages = 1): BudgetCharge | undefined {
  return limits.requests ? { budget: 'requests', key: `requests:${account}`, limit: limits.requests, points: Math.max(1, messages) } : undefined;
}

/**
 * The budgets one tool call spends, in the order they are checked: the class budget (`reads` or
 * `writes`), then `tool`. Empty when none applies.
 * @param upstream - the configuration of the tool's upstream (undefined: gateway-wide budgets only).
 */
export function toolCallCharges(
  limits: GatewayConfig['rateLimits'],
  upstream: Pick<UpstreamConfig, 'name' | 'rateLimits'> | undefined,
  tool: ChargedTool,
  account: string,
): BudgetCharge[] {
  const own = upstream?.rateLimits;
  const charges: BudgetCharge[] = [];
  const kind = tool.readOnly ? 'reads' : 'writes';
  const classBudget = own?.[kind]
    ? { limit: own[kind]!, key: `${kind}:${tool.upstream}:${account}` }
    : limits[kind]
      ? { limit: limits[kind]!, key: `${kind}:${account}` }
      : undefined;
  if (classBudget) charges.push({ budget: kind, ...classBudget });
  const perTool = (own ? ownEntry(own.tools, tool.upstreamName) : undefined) ?? own?.tool ?? limits.tool;
  if (perTool) charges.push({ budget: 'tool', key: `tool:${tool.upstream}:${tool.upstreamName}:${account}`, limit: perTool });
  return charges;
}

/**
 * Whether any budget applies at all (the limiter is built only then): an MCP budget, or the built-in
 * authorization server (its sign-in pages always count attempts), the console's admin token budget, or
 * the refused key pairs' where a key pair can be refused (auth/refused-credentials.ts).
 */
export function anyBudget(config: Pick<GatewayConfig, 'rateLimits' | 'upstreams' | 'oauth' | 'console' | 'scopes' | 'credentials'>): boolean {
  if (config.oauth.mode === 'builtin') return true;
  if (config.console.adminToken && config.rateLimits.consoleSignIns.perAddress) return true;
  if (config.rateLimits.refusedCredentials.perKey && checksKeyPairs(config)) return true;
  return accountBudgets(config);
}

/** Whether a budget counts MCP requests or tool calls per account (authentication then names each credential's account). */
export function accountBudgets(config: Pick<GatewayConfig, 'rateLimits' | 'upstreams'>): boolean {
  const { requests, reads, writes, tool } = config.rateLimits;
  if (requests || reads || writes || tool) return true;
  return config.upstreams.some((u) => u.rateLimits.reads || u.rateLimits.writes || u.rateLimits.tool || Object.keys(u.rateLimits.tools).length > 0);
}

/** "10 per 60 s": a budget as a model or an operator reads it. */
export function describeBudget(limit: RateBudget): string {
  return `${limit.points} per ${limit.durationMs / 1000} s`;
}
