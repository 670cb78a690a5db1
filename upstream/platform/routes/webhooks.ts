import { randomUUID } from 'node:crypto';
import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { page, parseListQuery } from '../list-query.ts';
import type { Webhook } from '../records.ts';
import { newestFirst, recordById, type RouteContext } from './route-context.ts';

export const WEBHOOK_EVENTS = [
  'order.filled',
  'order.canceled',
  'order.rejected',
  'position.updated',
  'strategy.updated',
  'risk.snapshot_created',
  'backtest.completed',
  'cash_flow.settled',
] as const;

const webhookBody = bodyValidator<{ url: string; events: string[]; description?: string; active: boolean }>({
  type: 'object',
  properties: {
    url: { type: 'string', format: 'uri', pattern: '^https://', maxLength: 2048 },
    events: { type: 'array', items: { enum: WEBHOOK_EVENTS }, minItems: 1, uniqueItems: true },
    description: { type: 'string', maxLength: 500 },
    active: { type: 'boolean', default: true },
  },
  required: ['url', 'events'],
  additionalProperties: false,
});

/** Webhook subscriptions: list (webhooks:read), create and delete (webhooks:write). */
export function webhookRoutes({ router, store, now }: RouteContext): void {
  router.get('/v1/webhooks', requireScope('webhooks:read'), (ctx) => {
    const query = parseListQuery(ctx.query, { active: 'boolean' });
    const { active } = query.filters;
    ctx.body = page(
      newestFirst(store.webhooks, 'created_at').filter((w) => active === undefined || w.active === active),
      query,
    );
  });

  router.post('/v1/webhooks', requireScope('webhooks:write'), (ctx) => {
    const input = webhookBody(ctx.request.body);
    const webhook: Webhook = {
      id: randomUUID(),
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      active: input.active,
      created_at: new Date(now()).toISOString(),
      last_delivery_at: null,
      last_delivery_status: null,
    };
    store.webhooks.push(webhook);
    ctx.status = 201;
    ctx.body = { data: webhook };
  });

  router.delete('/v1/webhooks/:id', requireScope('webhooks:write'), (ctx) => {
    const webhook = recordById(store.webhooks, ctx.params.id, 'webhook');
    store.webhooks.splice(store.webhooks.indexOf(webhook), 1);
    ctx.body = { message: `Webhook ${webhook.id} (${webhook.url}) deleted` };
  });
}
