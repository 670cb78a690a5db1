import { storeCredential, DEMO_CREDENTIALS, type StoredCredential } from './credentials.ts';
import { SecretBox } from './secret-box.ts';
import { seedTrading, type StoredConnection } from './seed.ts';
import { seedMiddleOffice } from './seed-middle-office.ts';
import type {
  Account,
  Backtest,
  CashFlow,
  DataFile,
  Deal,
  Execution,
  FundPeriod,
  JournalEntry,
  LifecycleEvent,
  Order,
  Position,
  Profile,
  RiskSnapshot,
  Strategy,
  Webhook,
} from './records.ts';

/**
 * The platform's embedded store: plain arrays, seeded deterministically, mutated by write routes.
 * Tests read the arrays' lengths to prove whether a write reached the platform.
 */
export interface PlatformStore {
  profile: Profile;
  credentials: StoredCredential[];
  accounts: Account[];
  strategies: Strategy[];
  backtests: Backtest[];
  orders: Order[];
  positions: Position[];
  connections: StoredConnection[];
  files: DataFile[];
  riskSnapshots: RiskSnapshot[];
  executions: Execution[];
  webhooks: Webhook[];
  deals: Deal[];
  lifecycleEvents: LifecycleEvent[];
  cashFlows: CashFlow[];
  journalEntries: JournalEntry[];
  fundPeriods: FundPeriod[];
  secretBox: SecretBox;
}

/** The fixed instant the seed is "as of", so every start produces the same records. */
export const SEED_TIME_MS = Date.UTC(2026, 10, 2, 21, 0);
const SEED = 20260728;

/** Builds a freshly seeded store (same records on every call, apart from connection ciphertexts). */
export function createStore(): PlatformStore {
  const secretBox = new SecretBox();
  const trading = seedTrading(SEED, SEED_TIME_MS, secretBox);
  return {
    ...trading,
    credentials: DEMO_CREDENTIALS.map((demo) => storeCredential(demo, trading.profile.id)),
    executions: [],
    ...seedMiddleOffice(SEED + 1, SEED_TIME_MS),
    secretBox,
  };
}
