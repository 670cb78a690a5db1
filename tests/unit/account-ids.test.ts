/**
 * Whose account a request counts against (gateway/auth/authenticate.ts `withAccount`): a configured key's
 * (`credentials.apiKeys`) is its own space, named `apiKey` on the credential (the audit line's name for it), and a
 * scope endpoint's account, or a key id, spelt like one (`api-key:ops`) is another account, never named as the key
 * (review: it shared the configured key's budgets and runs, and its audit lines read as the key's).
 */
import { expect, it } from 'vitest';
import { ApiKeySource } from '../../gateway/auth/api-keys.ts';
import { apiKeySource, Authenticator, type CredentialSource } from '../../gateway/auth/authenticate.ts';

const CREDENTIALS = { keyHeader: 'X-Key', secretHeader: 'X-Secret', bearer: true, apiKeys: [] };
const KEY = Buffer.from('server-key-server-key-server-key!');
const configKeys = apiKeySource(new ApiKeySource([{ name: 'ops', key: 'ops-id', secret: 'ops-secret', scopes: ['a'] }], CREDENTIALS, KEY))!;
const endpoint: CredentialSource = { name: 'scope_endpoint', resolve: () => ({ kind: 'scopes', scopes: ['a'], account: 'api-key:ops' }) };

async function credentialOf(headers: Record<string, string>) {
  const outcome = await new Authenticator({ credentials: CREDENTIALS, anonymous: false }, KEY, [configKeys, endpoint]).authenticate(headers);
  if (outcome.kind !== 'authenticated') throw new Error(outcome.kind);
  return outcome.credential;
}

it('keeps a configured key’s account its own, named by the key, and another source’s look-alike apart', async () => {
  const ops = await credentialOf({ 'x-key': 'ops-id', 'x-secret': 'ops-secret' });
  expect(ops.apiKey).toBe('ops');
  const lookalike = await credentialOf({ 'x-key': 'platform-key', 'x-secret': 'platform-secret' });
  expect(lookalike.apiKey).toBeUndefined();
  expect(lookalike.account).not.toBe(ops.account);
  const keyIdLookalike = await credentialOf({ 'x-key': 'api-key:ops', 'x-secret': 'whatever' });
  expect(keyIdLookalike.account).not.toBe(ops.account);
});
