import { randomUUID } from 'node:crypto';
import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { page, parseListQuery } from '../list-query.ts';
import type { Connection } from '../records.ts';
import type { RouteContext } from './route-context.ts';

const CONNECTION_TYPES = ['broker', 'data_provider', 'llm_provider'] as const;

const connectionBody = bodyValidator<{ name: string; connection_type: Connection['connection_type']; provider: string; credentials: Record<string, string> }>({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 120 },
    connection_type: { enum: CONNECTION_TYPES },
    provider: { type: 'string', pattern: '^[a-z0-9_-]{2,40}$' },
    credentials: {
      type: 'object',
      minProperties: 1,
      maxProperties: 10,
      propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' },
      additionalProperties: { type: 'string', minLength: 1, maxLength: 4096 },
    },
  },
  required: ['name', 'connection_type', 'provider', 'credentials'],
  additionalProperties: false,
});

/**
 * Provider connections: list (connections:read), create (connections:write). Credentials are sealed
 * with AES-256-GCM (the connection id as associated data) and only their field names are ever returned.
 */
export function connectionRoutes({ router, store, now }: RouteContext): void {
  router.get('/v1/connections', requireScope('connections:read'), (ctx) => {
    const query = parseListQuery(ctx.query, { connection_type: CONNECTION_TYPES });
    const { connection_type } = query.filters;
    ctx.body = page(
      store.connections.map((c) => c.record).filter((c) => connection_type === undefined || c.connection_type === connection_type),
      query,
    );
  });

  router.post('/v1/connections', requireScope('connections:write'), (ctx) => {
    const input = connectionBody(ctx.request.body);
    const id = randomUUID();
    const record: Connection = {
      id,
      name: input.name,
      connection_type: input.connection_type,
      provider: input.provider,
      status: 'active',
      credential_fields: Object.keys(input.credentials).sort(),
      created_at: new Date(now()).toISOString(),
      last_used_at: null,
    };
    store.connections.push({ record, sealed: store.secretBox.seal(JSON.stringify(input.credentials), id) });
    ctx.status = 201;
    ctx.body = { data: { ...record, credentials_stored: true } };
  });
}
