/**
 * Proves the built-in authorization server across replicas behind one URL (used by .ci/compose.sh and
 * tests/e2e/oauth/replicas.test.ts): `issue BASE FILE` registers a client, signs the demo data key in (the
 * sign-in and consent forms, posted as a browser would), exchanges the code and writes the tokens to
 * FILE; `check BASE FILE` sends tools/list with the access token `count` times (round-robin reaches
 * every replica), refreshes once, and checks the new token too. Exits 1 with the step that failed.
 * Prints no token.
 *
 *   node --import tsx tests/helpers/oauth-check.ts issue http://127.0.0.1:8080 /tmp/tokens.json
 *   node --import tsx tests/helpers/oauth-check.ts check http://127.0.0.1:8080 /tmp/tokens.json [count]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { registerClient, redeemCode, signInFlow, tokenRequest } from './oauth-harness.ts';

interface Saved {
  clientId: string;
  access: string;
  refresh: string;
}

/** tools/list on /mcp with `token`: the HTTP status and the tool names. */
export async function listWithToken(base: string, token: string): Promise<{ status: number; names: string[] }> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? JSON.parse(text) : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, names: (json.result?.tools ?? []).map((t: { name: string }) => t.name) };
}

export async function issue(base: string): Promise<Saved> {
  const { client_id } = await registerClient(base);
  const flow = await signInFlow(base, { clientId: client_id, scope: 'accounts:read positions:read', resource: `${base}/mcp` });
  const tokens = await redeemCode(base, flow, client_id);
  if (tokens.status !== 200) throw new Error(`token endpoint answered ${tokens.status} ${String(tokens.body.error)}`);
  return { clientId: client_id, access: String(tokens.body.access_token), refresh: String(tokens.body.refresh_token) };
}

export async function check(base: string, saved: Saved, count: number): Promise<Saved> {
  for (let i = 0; i < count; i++) {
    const { status, names } = await listWithToken(base, saved.access);
    if (status !== 200 || !names.includes('list_accounts') || names.includes('list_orders'))
      throw new Error(`tools/list ${i + 1}/${count} with the token answered ${status} (${names.length} tools)`);
  }
  const refreshed = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: saved.refresh, client_id: saved.clientId });
  if (refreshed.status !== 200) throw new Error(`refresh answered ${refreshed.status} ${String(refreshed.body.error)}`);
  const next = { ...saved, access: String(refreshed.body.access_token), refresh: String(refreshed.body.refresh_token) };
  for (let i = 0; i < count; i++) {
    const { status } = await listWithToken(base, next.access);
    if (status !== 200) throw new Error(`tools/list ${i + 1}/${count} with the refreshed token answered ${status}`);
  }
  return next;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, base, file, count = '6'] = process.argv.slice(2);
  try {
    if (mode === 'issue') writeFileSync(file!, JSON.stringify(await issue(base!)), { mode: 0o600 });
    else if (mode === 'check')
      writeFileSync(file!, JSON.stringify(await check(base!, JSON.parse(readFileSync(file!, 'utf8')) as Saved, Number(count))), { mode: 0o600 });
    else throw new Error('usage: oauth-check.ts issue|check BASE FILE [count]');
    console.log(`oauth-check ${mode}: ok`);
  } catch (error) {
    console.error(`oauth-check ${mode}: ${(error as Error).message}`);
    process.exit(1);
  }
}
