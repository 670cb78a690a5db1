import { OVERLAY, OVERLAY_EXPOSURE, STRATEGY } from './record-schemas.ts';
import { input, listOutput, oneOf, pagination, recordOutput, text, ticker, uuid } from './schema-fragments.ts';
import { READ_ONLY, getRequest, listRequest, pathWith, take, type ArgumentIssue, type JsonSchema, type ToolDefinition } from './tool-definition.ts';

const STRATEGY_TYPES = ['momentum', 'mean_reversion', 'pairs', 'trend_following', 'statistical_arbitrage', 'hedging'];
const STRATEGY_ID = uuid('CPZ strategy UUID (the id field of list_strategies).');

const strategyFields = (statuses: string[]): Record<string, JsonSchema> => ({
  title: text('Strategy name, e.g. "Momentum 20/100".', 120),
  description: { type: 'string', maxLength: 2000, description: 'Plain-language summary.' },
  strategy_type: oneOf(STRATEGY_TYPES, 'Family of trading logic.'),
  status: oneOf(statuses, 'draft (not running), active (runs, may trade), paused, archived (retired).'),
  symbols: { type: 'array', items: ticker('Ticker.'), minItems: 1, maxItems: 50, uniqueItems: true, description: 'Tickers it trades, e.g. ["AAPL"].' },
  account_id: uuid('Default account for its orders (list_accounts).'),
  parameters: { type: 'object', description: 'Parameters as JSON, e.g. {"lookback_days": 20}.' },
  code: { type: 'string', maxLength: 20000, description: 'Source code (Python, on_bar(ctx, bars) entry point).' },
});

/** Semantic checks of configure_overlay that JSON Schema cannot state; paths are JSON Pointers. */
function overlayIssues(args: Record<string, unknown>): ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  const policy = args.policy as { objective?: string; benchmark_symbol?: string } | undefined;
  const targets = args.targets as Array<{ strategy_id: string }> | undefined;
  if (args.role === 'none') {
    for (const key of ['policy', 'targets', 'account_id', 'account_environment']) {
      if (key in args) issues.push({ path: `/${key}`, message: 'must be omitted when role is "none" (removing the overlay role)' });
    }
    return issues;
  }
  if (!policy) issues.push({ path: '/policy', message: 'is required when role is "overlay"' });
  if (!targets) issues.push({ path: '/targets', message: 'is required when role is "overlay": at least one strategy to hedge' });
  if (!args.account_environment) issues.push({ path: '/account_environment', message: 'is required when role is "overlay" (paper or live)' });
  if (policy?.objective === 'beta' && !policy.benchmark_symbol) {
    issues.push({ path: '/policy/benchmark_symbol', message: 'is required for a beta overlay (e.g. SPY)' });
  }
  const seen = new Set<string>();
  targets?.forEach((target, i) => {
    if (target.strategy_id.toLowerCase() === String(args.strategy_id).toLowerCase()) {
      issues.push({ path: `/targets/${i}/strategy_id`, message: 'an overlay cannot target itself' });
    }
    if (seen.has(target.strategy_id.toLowerCase())) issues.push({ path: `/targets/${i}/strategy_id`, message: 'targets the same strategy twice' });
    seen.add(target.strategy_id.toLowerCase());
  });
  return issues;
}

export const strategyTools: ToolDefinition[] = [
  {
    name: 'list_strategies',
    title: 'List strategies',
    description:
      'List your trading strategies (algorithms), newest first: title, type, status, symbols, default account, role (standalone or overlay). ' +
      "Filter by status (e.g. only active ones), strategy_type, or a title substring. Use get_strategy for one strategy's full record " +
      "including code, and list_overlays for hedge overlays' policy and targets. Returns {data, count}; page with limit/offset.",
    category: 'strategies',
    requiredScopes: ['strategies:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      status: oneOf(['draft', 'active', 'paused', 'archived'], 'Only strategies in this status, e.g. active.'),
      strategy_type: oneOf(STRATEGY_TYPES, 'Only strategies of this type.'),
      title: text('Case-insensitive substring of the strategy title.'),
      ...pagination(),
    }),
    outputSchema: listOutput(STRATEGY),
    request: listRequest('/v1/strategies'),
  },
  {
    name: 'get_strategy',
    title: 'Get a strategy',
    description:
      'Read the details of one strategy by its CPZ UUID: title, type, status, symbols, parameters, code, version, and its overlay ' +
      'configuration if it is an overlay. Find the id with list_strategies (by title or status). Returns {data}.',
    category: 'strategies',
    requiredScopes: ['strategies:read'],
    annotations: READ_ONLY,
    inputSchema: input({ strategy_id: STRATEGY_ID }, ['strategy_id']),
    outputSchema: recordOutput(STRATEGY),
    request: getRequest('/v1/strategies', 'strategy_id'),
  },
  {
    name: 'create_strategy',
    title: 'Create a strategy',
    description:
      'Create a new strategy from a title and strategy_type, optionally with symbols, parameters, code and a default account; it ' +
      'starts as draft unless you set status. Returns {data} with the new id. Then configure_overlay makes it a hedge overlay and ' +
      'execute_strategy runs it. Each call creates another strategy.',
    category: 'strategies',
    requiredScopes: ['strategies:write'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    inputSchema: input(strategyFields(['draft', 'active', 'paused']), ['title', 'strategy_type']),
    outputSchema: recordOutput(STRATEGY),
    request: (args) => ({ method: 'POST', path: '/v1/strategies', body: args }),
  },
  {
    name: 'update_strategy',
    title: 'Update a strategy',
    description:
      'Update selected fields of an existing strategy: change its status (activate, pause, archive), title, description, symbols, ' +
      'parameters, code or default account. Only the fields you pass change; the version increments. Overlay role, policy and ' +
      'targets: configure_overlay. Returns {data}.',
    category: 'strategies',
    requiredScopes: ['strategies:write'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: input({ strategy_id: uuid('CPZ strategy UUID of the strategy to change.'), ...strategyFields(['draft', 'active', 'paused', 'archived']) }, [
      'strategy_id',
    ]),
    outputSchema: recordOutput(STRATEGY),
    refine: (args) => (Object.keys(args).length > 1 ? [] : [{ path: '', message: 'pass at least one field to change besides strategy_id' }]),
    request: (args) => {
      const [id, body] = take(args, 'strategy_id');
      return { method: 'PATCH', path: pathWith('/v1/strategies', id), body };
    },
  },
  {
    name: 'list_overlays',
    title: 'List hedge overlays',
    description:
      'List hedge overlays: strategies in the overlay role with their full hedge policy (objective beta or dollar_neutral, ' +
      'hedge_ratio, tolerance_band, benchmark_symbol), their targets (the strategies they hedge, with weights and titles), and the ' +
      "account and environment the hedge trades in. For one overlay's current exposure, drift and suggested hedge order use " +
      'get_overlay_exposure. Returns {data, count}.',
    category: 'strategies',
    requiredScopes: ['strategies:read'],
    annotations: READ_ONLY,
    inputSchema: input(pagination()),
    outputSchema: listOutput(OVERLAY),
    request: listRequest('/cpz/overlays'),
  },
  {
    name: 'get_overlay_exposure',
    title: 'Get overlay exposure',
    description:
      "Show one overlay's live hedge status: the weighted exposure of its target strategies, the hedge its policy requires, the hedge " +
      'it holds, the drift between them, whether that is within the tolerance band, the suggested rebalance order (a market order in ' +
      'the hedge symbol, null when within band), and the hedge P&L (unrealized and today). Amounts in cents. Read-only: it never ' +
      'places the suggested order (use place_order for that). Returns {data}.',
    category: 'strategies',
    requiredScopes: ['strategies:read'],
    annotations: READ_ONLY,
    inputSchema: input({ strategy_id: uuid('CPZ strategy UUID of the overlay (strategy_id in list_overlays).') }, ['strategy_id']),
    outputSchema: recordOutput(OVERLAY_EXPOSURE),
    request: (args) => ({ method: 'GET', path: pathWith('/cpz/overlays', args.strategy_id, '/exposure') }),
  },
  {
    name: 'configure_overlay',
    title: 'Configure a hedge overlay',
    description:
      'Make a strategy an overlay that hedges other strategies (targets) against a benchmark in a paper or live account, or ' +
      'remove the overlay role (role "none"). Role, hedge policy and targets are replaced atomically in one call. Checked before ' +
      'sending: a beta overlay needs benchmark_symbol; targets must be other strategies, each once. Read the current ' +
      'configuration with list_overlays first.',
    category: 'strategies',
    requiredScopes: ['strategies:write'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: input(
      {
        strategy_id: uuid('Strategy that becomes (or stops being) the overlay.'),
        role: oneOf(['overlay', 'none'], '"overlay" sets policy and targets; "none" removes the role (pass nothing else).'),
        policy: input(
          {
            objective: oneOf(['beta', 'dollar_neutral'], "beta: offset the targets' beta to the benchmark; dollar_neutral: their net dollars."),
            hedge_ratio: { type: 'number', minimum: 0, maximum: 5, description: 'Share of the exposure to hedge, 0-5 (1 = fully).' },
            tolerance_band: { type: 'number', exclusiveMinimum: 0, maximum: 1, description: 'Drift allowed before a rebalance, in (0, 1], e.g. 0.05.' },
            benchmark_symbol: ticker('Hedge instrument and benchmark, e.g. SPY; required for beta (default SPY otherwise).'),
          },
          ['objective', 'hedge_ratio', 'tolerance_band'],
          { description: 'Hedge policy (with role "overlay").' },
        ),
        targets: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          description: 'Strategies to hedge, each once (with role "overlay").',
          items: input(
            {
              strategy_id: uuid('Strategy to hedge (not the overlay itself).'),
              weight: { type: 'number', exclusiveMinimum: 0, maximum: 10, description: 'Multiplier on its exposure, in (0, 10].' },
            },
            ['strategy_id', 'weight'],
          ),
        },
        account_id: uuid("Account the hedge trades in (default: the strategy's)."),
        account_environment: oneOf(['paper', 'live'], 'That account\'s environment, as a safety check (with role "overlay").'),
      },
      ['strategy_id', 'role'],
    ),
    refine: overlayIssues,
    request: (args) => {
      const [id, body] = take(args, 'strategy_id');
      return { method: 'PUT', path: pathWith('/cpz/overlays', id), body };
    },
  },
];
