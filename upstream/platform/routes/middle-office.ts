import { requireScope } from '../auth.ts';
import { page, parseListQuery, withinDates } from '../list-query.ts';
import type { RouteContext } from './route-context.ts';

const matches = (value: unknown, filter: unknown) => filter === undefined || value === filter;

/** Middle office (middle-office:read): deals, lifecycle events, cash flows, journal entries, fund periods. */
export function middleOfficeRoutes({ router, store }: RouteContext): void {
  const scope = requireScope('middle-office:read');

  router.get('/v1/middle-office/deals', scope, (ctx) => {
    const query = parseListQuery(ctx.query, {
      entity_id: 'string',
      fund: 'string',
      book: 'string',
      deal_id: 'string',
      product_kind: ['interest_rate_swap', 'fx_forward', 'equity_swap', 'bond', 'credit_default_swap', 'equity_option'],
      status: ['pending', 'active', 'matured', 'terminated'],
    });
    const f = query.filters;
    ctx.body = page(
      store.deals.filter(
        (d) =>
          matches(d.entity_id, f.entity_id) &&
          matches(d.fund, f.fund) &&
          matches(d.book, f.book) &&
          matches(d.deal_id, f.deal_id) &&
          matches(d.product_kind, f.product_kind) &&
          matches(d.status, f.status),
      ),
      query,
    );
  });

  router.get('/v1/middle-office/lifecycle-events', scope, (ctx) => {
    const query = parseListQuery(ctx.query, {
      entity_id: 'string',
      deal_id: 'string',
      kind: ['trade', 'confirmation', 'fixing', 'reset', 'coupon', 'exercise', 'expiry', 'maturity', 'amendment', 'termination'],
      status: ['scheduled', 'processed', 'failed'],
      from: 'date',
      to: 'date',
    });
    const f = query.filters;
    const events = store.lifecycleEvents.filter(
      (e) =>
        matches(e.entity_id, f.entity_id) &&
        matches(e.deal_id, f.deal_id) &&
        matches(e.kind, f.kind) &&
        matches(e.status, f.status) &&
        withinDates(e.event_date, f.from, f.to),
    );
    ctx.body = page(
      events.sort((a, b) => a.event_date.localeCompare(b.event_date) || a.id.localeCompare(b.id)),
      query,
    );
  });

  router.get('/v1/middle-office/cash-flows', scope, (ctx) => {
    const query = parseListQuery(ctx.query, {
      entity_id: 'string',
      deal_id: 'string',
      fund: 'string',
      book: 'string',
      from: 'date',
      to: 'date',
      unsettled: 'boolean',
    });
    const f = query.filters;
    const flows = store.cashFlows.filter(
      (c) =>
        matches(c.entity_id, f.entity_id) &&
        matches(c.deal_id, f.deal_id) &&
        matches(c.fund, f.fund) &&
        matches(c.book, f.book) &&
        withinDates(c.payment_date, f.from, f.to) &&
        (f.unsettled === undefined || (c.status !== 'settled') === f.unsettled),
    );
    ctx.body = page(
      flows.sort((a, b) => a.payment_date.localeCompare(b.payment_date) || a.id.localeCompare(b.id)),
      query,
    );
  });

  router.get('/v1/middle-office/journal-entries', scope, (ctx) => {
    const query = parseListQuery(ctx.query, { entity_id: 'string', deal_id: 'string', from: 'date', to: 'date' });
    const f = query.filters;
    const entries = store.journalEntries.filter(
      (j) => matches(j.entity_id, f.entity_id) && matches(j.deal_id, f.deal_id) && withinDates(j.posting_date, f.from, f.to),
    );
    ctx.body = page(
      entries.sort((a, b) => a.posting_date.localeCompare(b.posting_date) || a.entry_number.localeCompare(b.entry_number)),
      query,
    );
  });

  router.get('/v1/middle-office/fund-periods', scope, (ctx) => {
    const query = parseListQuery(ctx.query, { entity_id: 'string', fund: 'string', status: ['open', 'closing', 'closed'] });
    const f = query.filters;
    ctx.body = page(
      store.fundPeriods.filter((p) => matches(p.entity_id, f.entity_id) && matches(p.fund, f.fund) && matches(p.status, f.status)),
      query,
    );
  });
}
