/**
 * A live reload that leaves the authorization settings alone keeps the built-in authorization server
 * (its keys, sessions and tokens), and the server then records its decisions, checks its budgets and
 * looks up credentials through the runtime serving after the reload: never through the retired one,
 * whose audit file, rate limiter and scope cache the reload closes (an audit file closed under it made
 * every /oauth/* answer 500 after the first reload).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { eventually } from '../../helpers/wait.ts';

let stack: Stack;
let dir: string;
let auditFile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reload-oauth-'));
  auditFile = join(dir, 'audit.jsonl');
  stack = await startStack({ gateway: { oauth: { mode: 'builtin' }, audit: { destination: auditFile } } });
});
afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const register = (redirect: string) =>
  fetch(`${stack.gatewayUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
  });

/** The register decisions in the audit file, by client id. */
const registrations = () =>
  readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { endpoint?: string; outcome?: string; client?: string })
    .filter((event) => event.endpoint === 'register');

describe('a reload with the same authorization settings', () => {
  it('keeps the authorization server answering and auditing through the new runtime', async () => {
    const before = await register('http://127.0.0.1:9/before');
    expect(before.status).toBe(201);
    await stack.gateway.reload(structuredClone(stack.config));
    // The retired runtime closes what it does not hand over once its requests are done: ask again
    // across that window, and after it.
    for (const wait of [0, 250, 500]) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      const after = await register(`http://127.0.0.1:9/after-${wait}`);
      expect(after.status, await after.clone().text()).toBe(201);
      const { client_id } = (await after.json()) as { client_id: string };
      // The audit file is written asynchronously (pino, sync: false): read until the line is there.
      await eventually(
        async () => registrations(),
        (events) => events.some((event) => event.client === client_id && event.outcome === 'ok'),
        5000,
      );
    }
    // A refused registration is a decision too, and still answered 400 (not 500).
    const refused = await register('javascript:alert(1)');
    expect(refused.status).toBe(400);
    // A refusal is audited as its answer goes out, which may be a moment after the client reads it.
    await eventually(
      async () => registrations(),
      (events) => events.some((event) => event.outcome === 'refused'),
      5000,
    );
  });
});
