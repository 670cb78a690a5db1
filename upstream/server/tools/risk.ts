import { RISK_SNAPSHOT } from './record-schemas.ts';
import { input, listOutput, oneOf, pagination, recordOutput, uuid } from './schema-fragments.ts';
import { READ_ONLY, getRequest, listRequest, type ToolDefinition } from './tool-definition.ts';

export const riskTools: ToolDefinition[] = [
  {
    name: 'compute_risk',
    title: 'Compute a risk snapshot',
    description:
      "Calculate value at risk (VaR) and expected shortfall now for one account's positions and store it as a new risk snapshot " +
      '(historical or parametric over 250 trading days), with gross/net exposure and top contributors, in cents. Each call adds ' +
      'a snapshot; past ones: list_risk_snapshots.',
    category: 'risk',
    requiredScopes: ['risk:write'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    inputSchema: input(
      {
        account_id: uuid('Account whose positions to measure (from list_accounts).'),
        method: { ...oneOf(['historical', 'parametric'], 'historical simulation, or parametric (variance-covariance).'), default: 'historical' },
        confidence_level: { ...oneOf([0.9, 0.95, 0.975, 0.99], 'Confidence level of the VaR.'), default: 0.95 },
        horizon_days: { type: 'integer', minimum: 1, maximum: 20, default: 1, description: 'Holding period in trading days, 1-20.' },
      },
      ['account_id'],
    ),
    request: (args) => ({ method: 'POST', path: '/v1/risk/snapshots', body: args }),
  },
  {
    name: 'list_risk_snapshots',
    title: 'List risk snapshots',
    description:
      'List past risk snapshots (stored VaR and expected shortfall calculations), newest first; filter by account_id. Use ' +
      'compute_risk for a fresh one and get_risk_snapshot to read one by id. Returns {data, count}; page with limit/offset.',
    category: 'risk',
    requiredScopes: ['risk:read'],
    annotations: READ_ONLY,
    inputSchema: input({ account_id: uuid('Only snapshots of this account.'), ...pagination() }),
    outputSchema: listOutput(RISK_SNAPSHOT),
    request: listRequest('/v1/risk/snapshots'),
  },
  {
    name: 'get_risk_snapshot',
    title: 'Get a risk snapshot',
    description:
      'Read a saved risk snapshot by its id: method, confidence, horizon, value at risk, expected shortfall, exposures, equity and ' +
      'top contributors, in cents. Returns {data}.',
    category: 'risk',
    requiredScopes: ['risk:read'],
    annotations: READ_ONLY,
    inputSchema: input({ snapshot_id: uuid('Risk snapshot UUID (the id field of list_risk_snapshots).') }, ['snapshot_id']),
    outputSchema: recordOutput(RISK_SNAPSHOT),
    request: getRequest('/v1/risk/snapshots', 'snapshot_id'),
  },
];
