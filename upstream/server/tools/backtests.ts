import { BACKTEST, BACKTEST_SUMMARY } from './record-schemas.ts';
import { input, listOutput, oneOf, pagination, recordOutput, uuid } from './schema-fragments.ts';
import { READ_ONLY, getRequest, listRequest, type ToolDefinition } from './tool-definition.ts';

export const backtestTools: ToolDefinition[] = [
  {
    name: 'get_backtest_results',
    title: 'List saved backtest runs',
    description:
      'List saved backtest runs (results of past backtests), newest first, with headline metrics: total and annualized return, ' +
      "Sharpe ratio, max drawdown, win rate, number of trades, and the benchmark's return over the same period. Filter by " +
      "strategy_id or status (completed, failed). For one run's full record with its equity curve use get_backtest_result. This " +
      'lists stored results; it does not start a backtest. Returns {data, count}; page with limit/offset.',
    category: 'backtests',
    requiredScopes: ['backtests:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      strategy_id: uuid('Only runs of this strategy (CPZ strategy UUID).'),
      status: oneOf(['completed', 'failed'], 'Only completed runs, or only failed ones (their error says why).'),
      ...pagination(),
    }),
    outputSchema: listOutput(BACKTEST_SUMMARY),
    request: listRequest('/v1/backtests'),
  },
  {
    name: 'get_backtest_result',
    title: 'Get one backtest result',
    description:
      'Open one saved backtest result by its id: period, timeframe, capital, returns, Sharpe ratio, drawdown, win rate, the ' +
      'parameters it ran with, the error if it failed, and the quarterly equity curve (cents). Find the id with ' +
      'get_backtest_results. Returns {data}.',
    category: 'backtests',
    requiredScopes: ['backtests:read'],
    annotations: READ_ONLY,
    inputSchema: input({ backtest_id: uuid('Backtest run UUID (the id field of get_backtest_results).') }, ['backtest_id']),
    outputSchema: recordOutput(BACKTEST),
    request: getRequest('/v1/backtests', 'backtest_id'),
  },
];
