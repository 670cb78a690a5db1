import { randomUUID } from 'node:crypto';
import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { notFound } from '../http-errors.ts';
import { page, parseListQuery } from '../list-query.ts';
import { computeRisk, type RiskRequest } from '../portfolio.ts';
import { newestFirst, recordById, type RouteContext } from './route-context.ts';

const computeBody = bodyValidator<RiskRequest & { account_id: string }>({
  type: 'object',
  properties: {
    account_id: { type: 'string', format: 'uuid' },
    method: { enum: ['historical', 'parametric'], default: 'historical' },
    confidence_level: { enum: [0.9, 0.95, 0.975, 0.99], default: 0.95 },
    horizon_days: { type: 'integer', minimum: 1, maximum: 20, default: 1 },
  },
  required: ['account_id'],
  additionalProperties: false,
});

/** Risk snapshots: compute and store (risk:write), list and get (risk:read). */
export function riskRoutes({ router, store, now }: RouteContext): void {
  router.post('/v1/risk/snapshots', requireScope('risk:write'), (ctx) => {
    const input = computeBody(ctx.request.body);
    const account = store.accounts.find((a) => a.id === input.account_id);
    if (!account) throw notFound('account', input.account_id);
    const held = store.positions.filter((p) => p.account_id === account.id);
    const snapshot = { id: randomUUID(), ...computeRisk(account, held, input, now()) };
    store.riskSnapshots.push(snapshot);
    ctx.status = 201;
    ctx.body = { data: snapshot };
  });

  router.get('/v1/risk/snapshots', requireScope('risk:read'), (ctx) => {
    const query = parseListQuery(ctx.query, { account_id: 'uuid' });
    const { account_id } = query.filters;
    ctx.body = page(
      newestFirst(store.riskSnapshots, 'computed_at').filter((s) => account_id === undefined || s.account_id === account_id),
      query,
    );
  });

  router.get('/v1/risk/snapshots/:id', requireScope('risk:read'), (ctx) => {
    ctx.body = { data: recordById(store.riskSnapshots, ctx.params.id, 'risk snapshot') };
  });
}
