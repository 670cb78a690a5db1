import { failureOf, GatewayError } from '../errors.ts';
import { forward, forwardError } from '../upstream/forwarding.ts';
import type { DispatchContext } from '../ports.ts';
import { decidedAccess, type Routed } from './access-decision.ts';

type SubscriptionMethod = 'resources/subscribe' | 'resources/unsubscribe';

/**
 * logging/setLevel (2025 wire, server/utilities/logging): forwarded with the caller's credential to every
 * 2025-era upstream that declares logging and that the caller may reach (an upstream closed to it by
 * `scopes.required` is never sent anything on its behalf: try-out), where it sets the level of the
 * caller's upstream session (a sessionful upstream keeps one per credential; with `forwardCredentials:
 * false` its callers share one) and is harmless on a stateless one. A 2026-07-28
 * upstream has no such method: the level travels on each forwarded request instead (forwarding.ts).
 * An upstream's JSON-RPC error (an invalid level) is relayed; an unreachable upstream is skipped and
 * logged, since the level only matters for calls that reach it. Answers `{}`.
 */
export async function setLoggingLevel(d: DispatchContext, params: Record<string, unknown>): Promise<Record<string, never>> {
  const described = await Promise.all(
    d.runtime.upstreams
      .filter((u) => d.caller.reaches(u.client.name))
      .map(async (u) => ({ client: u.client, info: await u.client.describe(d.caller.onBehalfOf).catch(() => undefined) })),
  );
  const targets = described.filter(({ info }) => info?.era === 'legacy' && info.capabilities.logging !== undefined);
  const settled = await Promise.allSettled(targets.map(({ client }) => forward(d, client, 'logging/setLevel', params)));
  settled.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') return;
    const upstream = targets[i]!.client.name;
    if (failureOf(outcome.reason, upstream).kind === 'upstream_rejected') throw forwardError(outcome.reason, upstream, { d, method: 'logging/setLevel' });
    d.log.warn({ upstream, err: (outcome.reason as Error)?.message }, 'logging/setLevel did not reach the upstream');
  });
  return {};
}

/**
 * resources/subscribe and resources/unsubscribe (2025 wire): sent to the upstream that owns the URI
 * (resource routing, as resources/read). A 2025-era owner receives it with the caller's credential (in
 * the caller's session when it is sessionful). A 2026-07-28 owner has no such method (subscriptions
 * travel on subscriptions/listen), and a 2025-era caller of this stateless gateway has no stream on
 * which `notifications/resources/updated` could reach it in either case, so the gateway acknowledges
 * it. An owner that does not declare `resources.subscribe` answers -32601. Answers `{}`. Its decision is
 * reported once (access-decision.ts).
 */
export function subscription(d: DispatchContext, method: SubscriptionMethod, params: Record<string, unknown>): Promise<Record<string, never>> {
  return decidedAccess(d, method, params, (routed) => subscriptionArm(d, method, params, routed));
}

async function subscriptionArm(
  d: DispatchContext,
  method: SubscriptionMethod,
  params: Record<string, unknown>,
  routed: Routed,
): Promise<Record<string, never>> {
  const route = await d.caller.route('resources/read', params);
  const { client } = route.upstream;
  routed.upstream = client.name;
  const info = await client.describe(d.caller.onBehalfOf).catch(() => undefined);
  if (info && info.capabilities.resources?.subscribe !== true)
    throw new GatewayError('method_not_found', `Method not found: upstream ${client.name} does not support ${method}`);
  if (info?.era === 'modern') return {};
  try {
    await forward(d, client, method, route.params);
  } catch (error) {
    throw forwardError(error, client.name, { d, method });
  }
  return {};
}
