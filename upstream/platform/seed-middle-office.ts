import { SeededRandom } from './prng.ts';
import type { CashFlow, Deal, FundPeriod, JournalEntry, LifecycleEvent } from './records.ts';

const DAY_MS = 86_400_000;
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Legal entities, their funds and each fund's books. */
const FUNDS = [
  { fund: 'GMF', entity_id: 'ENT-US-01', books: ['GMF-RATES', 'GMF-FX'] },
  { fund: 'ELS', entity_id: 'ENT-US-01', books: ['ELS-US', 'ELS-EU'] },
  { fund: 'CRD', entity_id: 'ENT-UK-01', books: ['CRD-IG', 'CRD-HY'] },
] as const;

const COUNTERPARTIES = ['Goldman Sachs International', 'JPMorgan Chase Bank', 'Barclays Bank PLC', 'BNP Paribas', 'Morgan Stanley & Co'];

const PRODUCT_FLOWS: Record<Deal['product_kind'], { events: LifecycleEvent['kind'][]; flows: CashFlow['flow_type'][]; direction: Deal['direction'][] }> = {
  interest_rate_swap: {
    events: ['trade', 'confirmation', 'fixing', 'reset'],
    flows: ['coupon', 'coupon', 'coupon'],
    direction: ['pay_fixed', 'receive_fixed'],
  },
  fx_forward: { events: ['trade', 'confirmation', 'maturity'], flows: ['settlement'], direction: ['buy', 'sell'] },
  equity_swap: { events: ['trade', 'confirmation', 'reset'], flows: ['coupon', 'settlement', 'margin'], direction: ['buy', 'sell'] },
  bond: { events: ['trade', 'coupon', 'coupon'], flows: ['principal', 'coupon', 'coupon'], direction: ['buy', 'sell'] },
  credit_default_swap: { events: ['trade', 'confirmation', 'coupon'], flows: ['premium', 'premium', 'fee'], direction: ['buy', 'sell'] },
  equity_option: { events: ['trade', 'confirmation', 'expiry', 'exercise'], flows: ['premium', 'settlement'], direction: ['buy', 'sell'] },
};

const LEDGER: Record<CashFlow['flow_type'], [string, string]> = {
  coupon: ['4100', 'Interest income'],
  principal: ['1300', 'Investments at cost'],
  premium: ['4300', 'Premium income'],
  fee: ['5200', 'Transaction fees'],
  settlement: ['1400', 'Derivative settlements'],
  margin: ['1500', 'Margin receivable'],
};

export interface MiddleOfficeSeed {
  deals: Deal[];
  lifecycleEvents: LifecycleEvent[];
  cashFlows: CashFlow[];
  journalEntries: JournalEntry[];
  fundPeriods: FundPeriod[];
}

/**
 * Seeds 60 deals across 3 funds / 6 books, their lifecycle events and cash flows, a balanced
 * two-line journal entry per settled cash flow, and 12 monthly periods per fund.
 */
export function seedMiddleOffice(seed: number, nowMs: number): MiddleOfficeSeed {
  const rng = new SeededRandom(seed);
  const deals: Deal[] = [];
  const lifecycleEvents: LifecycleEvent[] = [];
  const cashFlows: CashFlow[] = [];
  const journalEntries: JournalEntry[] = [];
  const kinds = Object.keys(PRODUCT_FLOWS) as Deal['product_kind'][];

  for (let i = 0; i < 60; i++) {
    const home = FUNDS[i % FUNDS.length]!;
    const kind = kinds[(i * 5) % kinds.length]!;
    const spec = PRODUCT_FLOWS[kind];
    const trade = nowMs - rng.int(20, 500) * DAY_MS;
    const maturity = trade + rng.int(90, 1800) * DAY_MS;
    const status: Deal['status'] = maturity < nowMs ? 'matured' : rng.chance(0.08) ? 'terminated' : rng.chance(0.1) ? 'pending' : 'active';
    const currency = rng.pick(['USD', 'USD', 'EUR', 'GBP']);
    const deal: Deal = {
      id: rng.uuid(),
      deal_id: `DL-${2025 + (i % 2)}-${String(i + 1).padStart(4, '0')}`,
      entity_id: home.entity_id,
      fund: home.fund,
      book: rng.pick(home.books),
      product_kind: kind,
      status,
      counterparty: rng.pick(COUNTERPARTIES),
      direction: rng.pick(spec.direction),
      notional: String(rng.int(5, 500) * 100_000_00),
      currency,
      trade_date: isoDate(trade),
      effective_date: isoDate(trade + 2 * DAY_MS),
      maturity_date: isoDate(maturity),
      created_at: new Date(trade).toISOString(),
    };
    deals.push(deal);

    spec.events.forEach((kindOfEvent, k) => {
      const when = trade + k * rng.int(20, 120) * DAY_MS;
      lifecycleEvents.push({
        id: rng.uuid(),
        deal_id: deal.deal_id,
        entity_id: deal.entity_id,
        kind: kindOfEvent,
        status: when > nowMs ? 'scheduled' : rng.chance(0.05) ? 'failed' : 'processed',
        event_date: isoDate(when),
        description: `${kindOfEvent.replace('_', ' ')} of ${kind.replaceAll('_', ' ')} ${deal.deal_id} with ${deal.counterparty}`,
      });
    });

    spec.flows.forEach((flowType, k) => {
      const paymentDate = trade + (k + 1) * rng.int(30, 120) * DAY_MS;
      const due = paymentDate <= nowMs;
      const status: CashFlow['status'] = !due ? 'scheduled' : rng.chance(0.12) ? 'pending_settlement' : rng.chance(0.04) ? 'failed' : 'settled';
      const amount = Math.round(Number(deal.notional) * (flowType === 'principal' ? 1 : 0.002 + rng.next() * 0.02));
      const flow: CashFlow = {
        id: rng.uuid(),
        deal_id: deal.deal_id,
        entity_id: deal.entity_id,
        fund: deal.fund,
        book: deal.book,
        flow_type: flowType,
        direction: rng.pick(['pay', 'receive'] as const),
        amount: String(amount),
        currency,
        payment_date: isoDate(paymentDate),
        status,
        settled_at: status === 'settled' ? new Date(paymentDate + rng.int(1, 8) * 3_600_000).toISOString() : null,
      };
      cashFlows.push(flow);
      if (status !== 'settled') return;
      const [code, name] = LEDGER[flowType];
      const cashLine = { account_code: '1010', account_name: `Cash ${currency}`, currency };
      const pnlLine = { account_code: code, account_name: name, currency };
      const receive = flow.direction === 'receive';
      journalEntries.push({
        id: rng.uuid(),
        entry_number: `JE-${String(journalEntries.length + 1).padStart(5, '0')}`,
        deal_id: deal.deal_id,
        entity_id: deal.entity_id,
        fund: deal.fund,
        posting_date: flow.payment_date,
        description: `${flow.direction === 'pay' ? 'Paid' : 'Received'} ${flowType} on ${deal.deal_id}`,
        lines: [
          { ...(receive ? cashLine : pnlLine), debit: flow.amount, credit: '0' },
          { ...(receive ? pnlLine : cashLine), debit: '0', credit: flow.amount },
        ],
      });
    });
  }

  const fundPeriods: FundPeriod[] = [];
  const current = new Date(nowMs);
  for (const { fund, entity_id } of FUNDS) {
    for (let back = 11; back >= 0; back--) {
      const start = Date.UTC(current.getUTCFullYear(), current.getUTCMonth() - back, 1);
      const end = Date.UTC(current.getUTCFullYear(), current.getUTCMonth() - back + 1, 0);
      const status: FundPeriod['status'] = back === 0 ? 'open' : back === 1 ? 'closing' : 'closed';
      fundPeriods.push({
        id: rng.uuid(),
        fund,
        entity_id,
        period: isoDate(start).slice(0, 7),
        period_start: isoDate(start),
        period_end: isoDate(end),
        status,
        nav: status === 'open' ? null : String(rng.int(50, 900) * 1_000_000_00),
        currency: 'USD',
        closed_at: status === 'closed' ? new Date(end + rng.int(3, 9) * DAY_MS).toISOString() : null,
      });
    }
  }
  return { deals, lifecycleEvents, cashFlows, journalEntries, fundPeriods };
}
