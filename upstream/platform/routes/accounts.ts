import { requireScope } from '../auth.ts';
import { page, parseListQuery } from '../list-query.ts';
import type { RouteContext } from './route-context.ts';

/** GET /v1/accounts (accounts:read): broker accounts; limit defaults to 100. */
export function accountRoutes({ router, store }: RouteContext): void {
  router.get('/v1/accounts', requireScope('accounts:read'), (ctx) => {
    const query = parseListQuery(
      ctx.query,
      {
        broker: ['alpaca', 'interactive_brokers', 'tradier'],
        environment: ['paper', 'live'],
        tradable: 'boolean',
      },
      100,
    );
    const { broker, environment, tradable } = query.filters;
    ctx.body = page(
      store.accounts.filter(
        (a) =>
          (broker === undefined || a.broker === broker) &&
          (environment === undefined || a.environment === environment) &&
          (tradable === undefined || a.tradable === tradable),
      ),
      query,
    );
  });
}
