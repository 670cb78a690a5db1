import { randomUUID } from 'node:crypto';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Logger } from 'pino';
import { authenticator, type PlatformState } from './auth.ts';
import { HttpError, errorResponder } from './http-errors.ts';
import type { PlatformStore } from './store.ts';
import { accountRoutes } from './routes/accounts.ts';
import { backtestRoutes } from './routes/backtests.ts';
import { connectionRoutes } from './routes/connections.ts';
import { executionRoutes } from './routes/executions.ts';
import { fileRoutes } from './routes/files.ts';
import { marketDataRoutes } from './routes/market-data.ts';
import { middleOfficeRoutes } from './routes/middle-office.ts';
import { orderRoutes } from './routes/orders.ts';
import { overlayRoutes } from './routes/overlays.ts';
import { positionRoutes } from './routes/positions.ts';
import { profileRoutes } from './routes/profile.ts';
import { riskRoutes } from './routes/risk.ts';
import { strategyRoutes } from './routes/strategies.ts';
import { webhookRoutes } from './routes/webhooks.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Echoes a well-formed inbound `X-Request-Id` (else a fresh UUID) on the response and in logs. */
async function requestId(ctx: Context, next: Next): Promise<void> {
  const inbound = ctx.get('x-request-id');
  ctx.state.requestId = REQUEST_ID.test(inbound) ? inbound : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
}

/** Builds the platform's Koa app over `store`; `now` is the clock every route reads. */
export function buildPlatformApp(store: PlatformStore, options: { logger?: Logger; now?: () => number } = {}): Koa<PlatformState> {
  const { logger, now = Date.now } = options;
  const app = new Koa<PlatformState>();
  const router = new Router<PlatformState>();
  app.use(requestId);
  if (logger) {
    // Method, path and status only: query strings and headers may carry identifiers and credentials.
    app.use(async (ctx, next) => {
      const started = performance.now();
      try {
        await next();
      } finally {
        logger.info(
          { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) },
          'platform request',
        );
      }
    });
  }
  app.use(errorResponder((error, ctx) => logger?.error({ err: error, requestId: ctx.state.requestId }, 'platform route failed')));
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: '256kb',
      onError: () => {
        throw new HttpError(400, 'invalid_json', 'The request body is not valid JSON');
      },
    }),
  );
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  app.use(authenticator(() => store.credentials));
  const context = { router, store, now };
  for (const register of [
    profileRoutes,
    accountRoutes,
    strategyRoutes,
    executionRoutes,
    overlayRoutes,
    backtestRoutes,
    orderRoutes,
    positionRoutes,
    connectionRoutes,
    fileRoutes,
    marketDataRoutes,
    riskRoutes,
    middleOfficeRoutes,
    webhookRoutes,
  ]) {
    register(context);
  }
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
