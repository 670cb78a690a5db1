import { CASH_FLOW, DEAL, FUND_PERIOD, JOURNAL_ENTRY, LIFECYCLE_EVENT } from './record-schemas.ts';
import { date, flag, input, listOutput, oneOf, pagination, text } from './schema-fragments.ts';
import { READ_ONLY, listRequest, type ToolDefinition } from './tool-definition.ts';

const ENTITY_ID = text('Legal entity code, e.g. ENT-US-01.', 40);
const DEAL_ID = text('Deal reference, e.g. DL-2025-0007 (deal_id of list_deals).', 40);
const FUND = text('Fund code, e.g. GMF.', 40);
const BOOK = text('Book code within a fund, e.g. GMF-RATES.', 40);

export const middleOfficeTools: ToolDefinition[] = [
  {
    name: 'list_deals',
    title: 'List deals',
    description:
      'List middle-office deals: OTC and securities trades booked for a legal entity in a fund and book (swaps, FX forwards, bonds, ' +
      'CDS, options) with counterparty, notional (cents), dates and status. Filter by entity_id, fund, book, deal_id, product_kind ' +
      'and status. Their events, cash flows and postings: list_lifecycle_events, list_cash_flows, list_journal_entries. Returns ' +
      '{data, count}; page with limit/offset.',
    category: 'middle-office',
    requiredScopes: ['middle-office:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      entity_id: ENTITY_ID,
      fund: FUND,
      book: BOOK,
      deal_id: DEAL_ID,
      product_kind: oneOf(['interest_rate_swap', 'fx_forward', 'equity_swap', 'bond', 'credit_default_swap', 'equity_option'], 'Only deals of this product.'),
      status: oneOf(['pending', 'active', 'matured', 'terminated'], 'Only deals in this status.'),
      ...pagination(),
    }),
    outputSchema: listOutput(DEAL),
    request: listRequest('/v1/middle-office/deals'),
  },
  {
    name: 'list_lifecycle_events',
    title: 'List deal lifecycle events',
    description:
      'List lifecycle events of deals, oldest first: trade, confirmation, fixings, resets, coupons, exercises, expiries, maturities, ' +
      'amendments and terminations, each scheduled, processed or failed. Filter by entity_id, deal_id, kind, status and an event ' +
      'date range (from, to). Returns {data, count}; page with limit/offset.',
    category: 'middle-office',
    requiredScopes: ['middle-office:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      entity_id: ENTITY_ID,
      deal_id: DEAL_ID,
      kind: oneOf(
        ['trade', 'confirmation', 'fixing', 'reset', 'coupon', 'exercise', 'expiry', 'maturity', 'amendment', 'termination'],
        'Only events of this kind, e.g. fixing or expiry.',
      ),
      status: oneOf(['scheduled', 'processed', 'failed'], 'Only events in this status; scheduled = still to come.'),
      from: date('Earliest event date, YYYY-MM-DD (inclusive).'),
      to: date('Latest event date, YYYY-MM-DD (inclusive).'),
      ...pagination(),
    }),
    outputSchema: listOutput(LIFECYCLE_EVENT),
    request: listRequest('/v1/middle-office/lifecycle-events'),
  },
  {
    name: 'list_cash_flows',
    title: 'List cash flows',
    description:
      'List deal cash flows (payments and receipts: coupons, principal, premiums, fees, settlements, margin), ordered by payment ' +
      'date, with amount in cents, currency, direction (pay or receive) and settlement status. unsettled: true keeps only flows ' +
      'that have not settled yet (scheduled, pending settlement or failed); from and to bound the payment date. Filter by ' +
      'entity_id, deal_id, fund, book. Returns {data, count}; page with limit/offset.',
    category: 'middle-office',
    requiredScopes: ['middle-office:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      entity_id: ENTITY_ID,
      deal_id: DEAL_ID,
      fund: FUND,
      book: BOOK,
      from: date('Earliest payment date, YYYY-MM-DD (inclusive).'),
      to: date('Latest payment date, YYYY-MM-DD (inclusive).'),
      unsettled: flag('true: only payments not settled yet; false: only settled ones.'),
      ...pagination(),
    }),
    outputSchema: listOutput(CASH_FLOW),
    request: listRequest('/v1/middle-office/cash-flows'),
  },
  {
    name: 'list_journal_entries',
    title: 'List journal entries',
    description:
      'List double-entry journal postings (general ledger entries with balanced debit and credit lines, in cents) booked for deals, ' +
      'ordered by posting date. Filter by entity_id, deal_id and a posting date range (from, to). Returns {data, count}; page with ' +
      'limit/offset.',
    category: 'middle-office',
    requiredScopes: ['middle-office:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      entity_id: ENTITY_ID,
      deal_id: DEAL_ID,
      from: date('Earliest posting date, YYYY-MM-DD (inclusive).'),
      to: date('Latest posting date, YYYY-MM-DD (inclusive).'),
      ...pagination(),
    }),
    outputSchema: listOutput(JOURNAL_ENTRY),
    request: listRequest('/v1/middle-office/journal-entries'),
  },
  {
    name: 'list_fund_periods',
    title: 'List fund accounting periods',
    description:
      'List fund accounting periods (monthly) per fund and legal entity with status open, closing or closed, the NAV (cents) of ' +
      'closed ones and when they closed. Filter by entity_id, fund and status, e.g. status open for periods still open. Returns ' +
      '{data, count}; page with limit/offset.',
    category: 'middle-office',
    requiredScopes: ['middle-office:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      entity_id: ENTITY_ID,
      fund: FUND,
      status: oneOf(['open', 'closing', 'closed'], 'Only periods in this status; open = still accepting postings.'),
      ...pagination(),
    }),
    outputSchema: listOutput(FUND_PERIOD),
    request: listRequest('/v1/middle-office/fund-periods'),
  },
];
