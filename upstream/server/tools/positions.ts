import { POSITION } from './record-schemas.ts';
import { input, listOutput, pagination, ticker, uuid } from './schema-fragments.ts';
import { READ_ONLY, listRequest, type ToolDefinition } from './tool-definition.ts';

export const positionTools: ToolDefinition[] = [
  {
    name: 'list_positions',
    title: 'List positions',
    description:
      'List the positions (holdings) held in your broker accounts: symbol, long or short, quantity, average entry price, current ' +
      'price, market value and unrealized P&L, in cents. Filter by account_id or symbol. Values are as of the last sync; call ' +
      'sync_portfolio to refresh them from the brokers. Returns {data, count}; page with limit/offset.',
    category: 'positions',
    requiredScopes: ['positions:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      account_id: uuid('Only positions held in this account (from list_accounts).'),
      symbol: ticker('Only the position in this ticker, e.g. MSFT.'),
      ...pagination(),
    }),
    outputSchema: listOutput(POSITION),
    request: listRequest('/v1/positions'),
  },
  {
    name: 'sync_portfolio',
    title: 'Sync broker portfolios',
    description:
      'Refresh broker holdings: synchronise the positions of one account (or all accounts) with the brokers, re-mark them at current ' +
      'prices and update equity and last_synced_at. Use it when list_positions looks stale. Returns per-account counts and the sync time.',
    category: 'positions',
    requiredScopes: ['positions:write'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    inputSchema: input({ account_id: uuid('Sync only this account; omit to sync every account.') }),
    request: (args) => ({ method: 'POST', path: '/v1/positions/sync', body: args }),
  },
];
