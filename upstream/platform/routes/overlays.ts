import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { HttpError, notFound } from '../http-errors.ts';
import { page, parseListQuery } from '../list-query.ts';
import { overlayExposure, overlayView } from '../overlay-exposure.ts';
import type { OverlayConfig } from '../records.ts';
import { recordById, type RouteContext } from './route-context.ts';

interface OverlayBody {
  role: 'overlay' | 'none';
  policy?: OverlayConfig['policy'];
  targets?: OverlayConfig['targets'];
  account_id?: string;
  account_environment?: 'paper' | 'live';
}

const configureBody = bodyValidator<OverlayBody>({
  type: 'object',
  properties: {
    role: { enum: ['overlay', 'none'] },
    policy: {
      type: 'object',
      properties: {
        objective: { enum: ['beta', 'dollar_neutral'] },
        hedge_ratio: { type: 'number', minimum: 0, maximum: 5 },
        tolerance_band: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        benchmark_symbol: { type: 'string', pattern: '^[A-Z][A-Z0-9.]{0,9}$' },
      },
      required: ['objective', 'hedge_ratio', 'tolerance_band'],
      additionalProperties: false,
    },
    targets: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: {
        type: 'object',
        properties: { strategy_id: { type: 'string', format: 'uuid' }, weight: { type: 'number', exclusiveMinimum: 0, maximum: 10 } },
        required: ['strategy_id', 'weight'],
        additionalProperties: false,
      },
    },
    account_id: { type: 'string', format: 'uuid' },
    account_environment: { enum: ['paper', 'live'] },
  },
  required: ['role'],
  additionalProperties: false,
  if: { properties: { role: { const: 'overlay' } } },
  then: { required: ['policy', 'targets', 'account_environment'] },
  else: { not: { anyOf: [{ required: ['policy'] }, { required: ['targets'] }] } },
});

const invalid = (field: string, message: string) => new HttpError(400, 'invalid_body', message, field);

/** Overlays on the `/cpz` base: list and exposure (strategies:read), configure (strategies:write). */
export function overlayRoutes({ router, store, now }: RouteContext): void {
  router.get('/cpz/overlays', requireScope('strategies:read'), (ctx) => {
    const query = parseListQuery(ctx.query, {});
    ctx.body = page(
      store.strategies.filter((s) => s.role === 'overlay').map((s) => overlayView(s, store.strategies)),
      query,
    );
  });

  router.get('/cpz/overlays/:strategy_id/exposure', requireScope('strategies:read'), (ctx) => {
    const overlay = recordById(store.strategies, ctx.params.strategy_id, 'strategy', 'strategy_id');
    if (overlay.role !== 'overlay') throw new HttpError(404, 'not_found', `Strategy ${overlay.id} is not an overlay; configure it first`);
    ctx.body = { data: overlayExposure(overlay, store.strategies, store.positions, now()) };
  });

  /** Sets or removes the overlay role atomically: every check passes before anything changes. */
  router.put('/cpz/overlays/:strategy_id', requireScope('strategies:write'), (ctx) => {
    const strategy = recordById(store.strategies, ctx.params.strategy_id, 'strategy', 'strategy_id');
    const body = configureBody(ctx.request.body);
    if (body.role === 'none') {
      Object.assign(strategy, { role: 'standalone', overlay: null, version: strategy.version + 1, updated_at: new Date(now()).toISOString() });
      ctx.body = { data: { strategy_id: strategy.id, role: 'standalone', overlay: null } };
      return;
    }
    const { policy, targets } = body as Required<OverlayBody>;
    if (policy.objective === 'beta' && !policy.benchmark_symbol) throw invalid('policy.benchmark_symbol', 'A beta overlay needs policy.benchmark_symbol');
    const seen = new Set<string>();
    targets.forEach((target, i) => {
      if (target.strategy_id === strategy.id) throw invalid(`targets.${i}.strategy_id`, 'An overlay cannot target itself');
      if (seen.has(target.strategy_id)) throw invalid(`targets.${i}.strategy_id`, `Strategy ${target.strategy_id} is targeted twice`);
      seen.add(target.strategy_id);
      if (!store.strategies.some((s) => s.id === target.strategy_id)) throw notFound('strategy', target.strategy_id);
    });
    const accountId = body.account_id ?? strategy.account_id;
    if (!accountId) throw invalid('account_id', 'account_id is required: the strategy has no default account');
    const account = store.accounts.find((a) => a.id === accountId);
    if (!account) throw notFound('account', accountId);
    if (account.environment !== body.account_environment) {
      throw invalid('account_environment', `Account ${account.name} is ${account.environment}, not ${body.account_environment}`);
    }
    const at = new Date(now()).toISOString();
    Object.assign(strategy, {
      role: 'overlay',
      account_id: account.id,
      version: strategy.version + 1,
      updated_at: at,
      overlay: {
        policy: { ...policy, benchmark_symbol: policy.benchmark_symbol ?? null },
        targets,
        account_id: account.id,
        account_environment: account.environment,
        updated_at: at,
      },
    });
    ctx.body = { data: overlayView(strategy, store.strategies) };
  });
}
