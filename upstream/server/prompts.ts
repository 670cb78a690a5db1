import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/server';

/** The two workflow prompts; each expands to one user message that walks the model through the tools. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const PROMPT_LIST: Prompt[] = [
  {
    name: 'review_portfolio',
    title: 'Review my portfolio',
    description: 'Review holdings, P&L, concentration and risk of one account or all accounts, and suggest what to look at next.',
    arguments: [{ name: 'account_id', description: 'CPZ account UUID to review; omit to review every account.', required: false }],
  },
  {
    name: 'analyze_strategy',
    title: 'Analyze a strategy',
    description: 'Analyze one strategy: its configuration, backtest results, recent orders and, for overlays, its hedge exposure.',
    arguments: [{ name: 'strategy_id', description: 'CPZ strategy UUID (from list_strategies).', required: true }],
  },
];

function checkedId(args: Record<string, string> | undefined, name: string, required: boolean): string | undefined {
  const value = args?.[name];
  if (value === undefined || value === '') {
    if (required) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Missing required argument: ${name}`);
    return undefined;
  }
  if (!UUID.test(value)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid argument ${name}: expected a UUID, got "${value}"`);
  return value;
}

const userMessage = (description: string, text: string): GetPromptResult => ({
  description,
  messages: [{ role: 'user', content: { type: 'text', text } }],
});

function reviewPortfolio(args: Record<string, string> | undefined): GetPromptResult {
  const accountId = checkedId(args, 'account_id', false);
  const scope = accountId ? `account ${accountId}` : 'all of my accounts';
  return userMessage(
    `Portfolio review of ${scope}`,
    [
      `Review the portfolio of ${scope} on CPZ.`,
      `1. Call list_accounts to get ${accountId ? "this account's" : "each account's"} broker, environment (paper or live), cash, equity and buying power.`,
      `2. Call list_positions${accountId ? ` with account_id ${accountId}` : ' for each account'} (page with offset until count < limit). If last_synced_at looks old, ask me before calling sync_portfolio.`,
      "3. Call get_market_data for the largest holdings to see today's moves.",
      `4. Call list_risk_snapshots${accountId ? ` with account_id ${accountId}` : ''} for the latest value at risk; ask me before calling compute_risk for a fresh one.`,
      '5. Summarise: total market value, unrealized P&L, the five largest positions and their share of equity, long/short balance, concentration by symbol, and the latest VaR against equity. Amounts are in cents: show them in dollars.',
      '6. Suggest what to look at next. Do not place or change any orders.',
    ].join('\n'),
  );
}

function analyzeStrategy(args: Record<string, string> | undefined): GetPromptResult {
  const strategyId = checkedId(args, 'strategy_id', true)!;
  return userMessage(
    `Analysis of strategy ${strategyId}`,
    [
      `Analyze the CPZ strategy ${strategyId}.`,
      `1. Call get_strategy with strategy_id ${strategyId}: type, status, symbols, parameters, code and role.`,
      `2. Call get_backtest_results with strategy_id ${strategyId}; open the most recent completed run with get_backtest_result and read its equity curve. Explain any failed runs from their error.`,
      `3. Call list_orders with strategy_id ${strategyId} for its recent live and paper activity (fill rate, rejected orders).`,
      '4. If its role is overlay, call get_overlay_exposure for the drift and the suggested hedge order; otherwise call list_overlays to see whether an overlay hedges it.',
      '5. Summarise: what the strategy does, how its backtests performed (return, Sharpe ratio, max drawdown against the benchmark), how it trades now, and its main risks. Amounts are in cents: show them in dollars.',
      '6. Recommend changes, but do not call update_strategy, execute_strategy or place_order.',
    ].join('\n'),
  );
}

/** The prompts/get result; -32602 for an unknown prompt or a missing/malformed argument. */
export function getPrompt(name: string, args: Record<string, string> | undefined): GetPromptResult {
  if (name === 'review_portfolio') return reviewPortfolio(args);
  if (name === 'analyze_strategy') return analyzeStrategy(args);
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
}
