/**
 * A console form the body parser refuses is answered with its own status and words (413 over the
 * form's 16 KB limit), never as the gateway's failure (it was a
 * JSON-RPC -32603 with HTTP 200); a form within the limit gets its page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';

const ADMIN = 'console-form-limits-admin-token-0123456789';
let gateway: InProcessGateway;

beforeAll(() => {
  gateway = inProcessGateway({ console: { adminToken: ADMIN } }, { fake: { tools: [] } });
});
afterAll(async () => {
  await gateway?.close();
});

const post = (body: string) =>
  gateway.fetch(
    new Request(`${gateway.gatewayUrl}/console/credential`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/x-www-form-urlencoded' },
    }),
  );

describe('the console credential form', () => {
  it('answers 413 for a form over its limit', async () => {
    const tooLarge = await post(new URLSearchParams({ key: 'k'.repeat(100_000), secret: 's' }).toString());
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.text()).toMatch(/^413 request entity too large/i);
    // Within the limit the page answers.
    const fine = await post(new URLSearchParams({ key: 'k', secret: 's' }).toString());
    expect(fine.status).toBe(200);
    expect(fine.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
