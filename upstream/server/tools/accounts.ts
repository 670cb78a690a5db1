import { ACCOUNT, CONNECTION } from './record-schemas.ts';
import { flag, input, listOutput, oneOf, pagination, text } from './schema-fragments.ts';
import { READ_ONLY, listRequest, type ToolDefinition } from './tool-definition.ts';

const CONNECTION_TYPES = ['broker', 'data_provider', 'llm_provider'];

export const accountTools: ToolDefinition[] = [
  {
    name: 'list_accounts',
    title: 'List broker accounts',
    description:
      'List your broker accounts: broker, environment (paper or live), whether each is tradable, status, cash, equity and buying ' +
      'power in cents. Filter by broker, environment or tradable. The account id is what place_order, execute_strategy, ' +
      'list_positions and compute_risk take. Returns {data, count}; default page size 100.',
    category: 'accounts',
    requiredScopes: ['accounts:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      broker: oneOf(['alpaca', 'interactive_brokers', 'tradier'], 'Only accounts at this broker.'),
      environment: oneOf(['paper', 'live'], 'paper (simulated) or live (real money) accounts only.'),
      tradable: flag('true: only accounts that can take orders; false: read-only ones.'),
      ...pagination(100),
    }),
    outputSchema: listOutput(ACCOUNT),
    request: listRequest('/v1/accounts'),
  },
  {
    name: 'list_connections',
    title: 'List provider connections',
    description:
      'List the provider credentials you have connected (brokers, market data providers, LLM providers), filtered by ' +
      'connection_type: name, provider, status and the names of the stored credential fields. Secret values are never returned. ' +
      'Returns {data, count}; page with limit/offset.',
    category: 'accounts',
    requiredScopes: ['connections:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      connection_type: oneOf(CONNECTION_TYPES, 'Only connections of this kind: broker, data_provider or llm_provider.'),
      ...pagination(),
    }),
    outputSchema: listOutput(CONNECTION),
    request: listRequest('/v1/connections'),
  },
  {
    name: 'create_connection',
    title: 'Connect a provider credential',
    description:
      'Store an encrypted API credential (key, secret, token) for a broker, data provider or LLM provider as a new connection. The ' +
      'values are encrypted at rest (AES-256-GCM) and never returned, not even by list_connections, which shows only the field ' +
      'names. Not idempotent: each call adds a connection.',
    category: 'accounts',
    requiredScopes: ['connections:write'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    inputSchema: input(
      {
        name: text('Label for the connection, e.g. "Polygon market data".', 120),
        connection_type: oneOf(CONNECTION_TYPES, 'Kind of provider.'),
        provider: { type: 'string', pattern: '^[a-z0-9_-]{2,40}$', description: 'Provider id in lower case, e.g. alpaca, polygon, openai.' },
        credentials: {
          type: 'object',
          minProperties: 1,
          maxProperties: 10,
          propertyNames: { pattern: '^[a-z][a-z0-9_]{0,39}$' },
          additionalProperties: { type: 'string', minLength: 1, maxLength: 4096 },
          description: 'Secret fields as strings, e.g. {"api_key": "...", "api_secret": "..."}; lower-case field names.',
        },
      },
      ['name', 'connection_type', 'provider', 'credentials'],
    ),
    request: (args) => ({ method: 'POST', path: '/v1/connections', body: args }),
  },
];
