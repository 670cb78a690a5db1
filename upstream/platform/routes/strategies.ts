import { randomUUID } from 'node:crypto';
import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { notFound } from '../http-errors.ts';
import { page, parseListQuery } from '../list-query.ts';
import type { Strategy } from '../records.ts';
import { newestFirst, recordById, type RouteContext } from './route-context.ts';

export const STRATEGY_TYPES = ['momentum', 'mean_reversion', 'pairs', 'trend_following', 'statistical_arbitrage', 'hedging'] as const;
export const STRATEGY_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;

const editable = {
  title: { type: 'string', minLength: 1, maxLength: 120 },
  description: { type: 'string', maxLength: 2000 },
  strategy_type: { enum: STRATEGY_TYPES },
  status: { enum: STRATEGY_STATUSES },
  symbols: { type: 'array', items: { type: 'string', pattern: '^[A-Z][A-Z0-9.]{0,9}$' }, minItems: 1, maxItems: 50, uniqueItems: true },
  account_id: { type: 'string', format: 'uuid' },
  parameters: { type: 'object' },
  code: { type: 'string', maxLength: 20_000 },
};

type StrategyInput = Partial<Pick<Strategy, 'title' | 'description' | 'strategy_type' | 'status' | 'symbols' | 'account_id' | 'parameters' | 'code'>>;

const createBody = bodyValidator<StrategyInput & Pick<Strategy, 'title' | 'strategy_type'>>({
  type: 'object',
  properties: editable,
  required: ['title', 'strategy_type'],
  additionalProperties: false,
});
const updateBody = bodyValidator<StrategyInput>({ type: 'object', properties: editable, minProperties: 1, additionalProperties: false });

/** Strategies: list/get (strategies:read), create/update (strategies:write). */
export function strategyRoutes({ router, store, now }: RouteContext): void {
  const checkAccount = (accountId: string | null | undefined) => {
    if (accountId && !store.accounts.some((a) => a.id === accountId)) throw notFound('account', accountId);
  };

  router.get('/v1/strategies', requireScope('strategies:read'), (ctx) => {
    const query = parseListQuery(ctx.query, { status: STRATEGY_STATUSES, strategy_type: STRATEGY_TYPES, title: 'string' });
    const { status, strategy_type, title } = query.filters;
    ctx.body = page(
      newestFirst(store.strategies, 'updated_at').filter(
        (s) =>
          (status === undefined || s.status === status) &&
          (strategy_type === undefined || s.strategy_type === strategy_type) &&
          (title === undefined || s.title.toLowerCase().includes(String(title).toLowerCase())),
      ),
      query,
    );
  });

  router.get('/v1/strategies/:id', requireScope('strategies:read'), (ctx) => {
    ctx.body = { data: recordById(store.strategies, ctx.params.id, 'strategy') };
  });

  router.post('/v1/strategies', requireScope('strategies:write'), (ctx) => {
    const input = createBody(ctx.request.body);
    checkAccount(input.account_id);
    const at = new Date(now()).toISOString();
    const strategy: Strategy = {
      id: randomUUID(),
      title: input.title,
      description: input.description ?? '',
      strategy_type: input.strategy_type,
      status: input.status ?? 'draft',
      role: 'standalone',
      symbols: input.symbols ?? [],
      account_id: input.account_id ?? null,
      parameters: input.parameters ?? {},
      code: input.code ?? '',
      version: 1,
      overlay: null,
      created_at: at,
      updated_at: at,
    };
    store.strategies.push(strategy);
    ctx.status = 201;
    ctx.body = { data: strategy };
  });

  router.patch('/v1/strategies/:id', requireScope('strategies:write'), (ctx) => {
    const strategy = recordById(store.strategies, ctx.params.id, 'strategy');
    const input = updateBody(ctx.request.body);
    checkAccount(input.account_id);
    Object.assign(strategy, input, { version: strategy.version + 1, updated_at: new Date(now()).toISOString() });
    ctx.body = { data: strategy };
  });
}
