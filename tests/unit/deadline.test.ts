/** store/deadline.ts: one deadline for the store operations that had five copies of it. */
import { describe, expect, it } from 'vitest';
import { DeadlineExceeded, withinDeadline } from '../../gateway/store/deadline.ts';

describe('withinDeadline', () => {
  it("gives the operation's own outcome when it settles in time", async () => {
    await expect(withinDeadline(Promise.resolve(7), 50, () => new DeadlineExceeded('op', 50))).resolves.toBe(7);
    await expect(withinDeadline(Promise.reject(new Error('refused')), 50, () => new DeadlineExceeded('op', 50))).rejects.toThrow('refused');
  });

  it('rejects with the late error once the deadline passes, naming the operation and the budget', async () => {
    const never = new Promise<never>(() => {});
    const late = withinDeadline(never, 20, () => new DeadlineExceeded('get', 20));
    await expect(late).rejects.toBeInstanceOf(DeadlineExceeded);
    await expect(late).rejects.toThrow('get exceeded 20 ms');
  });
});
