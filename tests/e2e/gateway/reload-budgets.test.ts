/**
 * A live reload keeps the rate budgets' counters (gateway/reload/plan.ts `rateLimiter`): a reload that
 * leaves where they live alone opens no budget afresh, so the console's admin-token guessing limit and a
 * tool's budget hold across it (both were reset by any reload, a no-op one included); a budget whose
 * limit changed counts under its new shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';

const TOKEN = 'console-admin-token-reload-budgets';
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    gateway: {
      console: { adminToken: TOKEN },
      rateLimits: { consoleSignIns: { perAddress: { points: 3, durationMs: 900_000, blockMs: 1_800_000 } } },
    },
  });
});
afterAll(async () => {
  await stack?.close();
});

const consoleWith = (token: string) => fetch(`${stack.gatewayUrl}/console`, { headers: { authorization: `Bearer ${token}` } });

describe('a reload and the rate budgets', () => {
  it("keeps the console's guessing limit: a blocked address stays blocked after a reload that changes nothing", async () => {
    const answers: number[] = [];
    for (let i = 0; i < 4; i += 1) answers.push((await consoleWith(`wrong-token-${i}`)).status);
    expect(answers).toEqual([401, 401, 401, 429]);
    await stack.gateway.reload(structuredClone(stack.config));
    expect((await consoleWith('wrong-token-after')).status).toBe(429);
    // The token's holder is never locked out (console/routes.ts adminGuard).
    expect((await consoleWith(TOKEN)).status).toBe(200);
    // A new limit is a new budget: counted afresh under its own shape.
    const next = structuredClone(stack.config);
    next.rateLimits.consoleSignIns.perAddress = { points: 5, durationMs: 900_000, blockMs: 1_800_000 };
    await stack.gateway.reload(next);
    expect((await consoleWith('wrong-token-new-limit')).status).toBe(401);
  });
});
