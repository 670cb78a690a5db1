import { WEBHOOK } from './record-schemas.ts';
import { flag, input, listOutput, pagination, recordOutput, uuid } from './schema-fragments.ts';
import { READ_ONLY, listRequest, pathWith, type ToolDefinition } from './tool-definition.ts';

const EVENTS = [
  'order.filled',
  'order.canceled',
  'order.rejected',
  'position.updated',
  'strategy.updated',
  'risk.snapshot_created',
  'backtest.completed',
  'cash_flow.settled',
];

export const webhookTools: ToolDefinition[] = [
  {
    name: 'list_webhooks',
    title: 'List webhook subscriptions',
    description:
      'List webhook subscriptions: the HTTPS endpoint URL, subscribed events, whether each is active, and the last delivery time and ' +
      'HTTP status. Filter by active. Returns {data, count}; page with limit/offset.',
    category: 'webhooks',
    requiredScopes: ['webhooks:read'],
    annotations: READ_ONLY,
    inputSchema: input({ active: flag('true: only active subscriptions; false: only paused ones.'), ...pagination() }),
    outputSchema: listOutput(WEBHOOK),
    request: listRequest('/v1/webhooks'),
  },
  {
    name: 'create_webhook',
    title: 'Create a webhook subscription',
    description:
      'Subscribe an HTTPS endpoint to platform events such as order fills, cancellations and rejections, position and strategy ' +
      'updates, new risk snapshots, completed backtests and settled cash flows. The platform will POST each event to the URL. ' +
      'Returns {data}, the new subscription. Not idempotent: each call adds a subscription.',
    category: 'webhooks',
    requiredScopes: ['webhooks:write'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    inputSchema: input(
      {
        url: { type: 'string', format: 'uri', pattern: '^https://', maxLength: 2048, description: 'Endpoint to call; must start with https://.' },
        events: {
          type: 'array',
          items: { type: 'string', enum: EVENTS },
          minItems: 1,
          uniqueItems: true,
          description: 'Events to deliver, e.g. ["order.filled"].',
        },
        description: { type: 'string', maxLength: 500, description: 'What the subscription is for.' },
        active: { ...flag('Deliver events now (default true); false creates it paused.'), default: true },
      },
      ['url', 'events'],
    ),
    outputSchema: recordOutput(WEBHOOK),
    request: (args) => ({ method: 'POST', path: '/v1/webhooks', body: args }),
  },
  {
    name: 'delete_webhook',
    title: 'Delete a webhook subscription',
    description:
      'Remove a webhook subscription by its id: deliveries stop at once and it cannot be undone (create_webhook makes a new one). ' +
      'Find the id with list_webhooks. Returns {message}.',
    category: 'webhooks',
    requiredScopes: ['webhooks:write'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: input({ webhook_id: uuid('Webhook subscription UUID (from list_webhooks).') }, ['webhook_id']),
    outputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    request: (args) => ({ method: 'DELETE', path: pathWith('/v1/webhooks', args.webhook_id) }),
  },
];
