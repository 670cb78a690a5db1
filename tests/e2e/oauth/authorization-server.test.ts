import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe, registerClient, REDIRECT_URI, signInFlow, startOAuthHarness, tokenRequest, type OAuthHarness } from '../../helpers/oauth-harness.ts';

let h: OAuthHarness;
beforeAll(async () => {
  h = await startOAuthHarness({
    oauth: {
      tokenSecret: 'test-secret-0123456789abcdef-0123456789',
      scopes: ['profile:read', 'accounts:read', 'positions:read', 'orders:read', 'trade', 'market-data:read'],
    },
  });
});
afterAll(async () => h?.close());

describe('built-in authorization server', () => {
  it('serves RFC 8414 metadata naming S256 only, iss support, registration and client ID metadata documents', async () => {
    const response = await fetch(`${h.url}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(h.url);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.registration_endpoint).toBe(`${h.url}/oauth/register`);
    expect(metadata.revocation_endpoint).toBe(`${h.url}/oauth/revoke`);
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.response_types_supported).toEqual(['code']);
    // The MCP endpoints take bearer tokens only: DPoP is not offered (a bound token they took without its proof bound nothing).
    expect(metadata).not.toHaveProperty('dpop_signing_alg_values_supported');
  });

  it('issues a bearer token to a client that sends a DPoP proof (RFC 9449 is not offered)', async () => {
    const client = await registerClient(h.url);
    const flow = await signInFlow(h.url, { clientId: client.client_id, grant: ['accounts:read'] });
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const proof = await new SignJWT({ htm: 'POST', htu: `${h.url}/oauth/token`, jti: randomUUID() })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: await exportJWK(publicKey) })
      .setIssuedAt()
      .sign(privateKey);
    const withProof: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), dpop: proof } });
    const tokens = await tokenRequest(
      h.url,
      { grant_type: 'authorization_code', code: flow.code, code_verifier: flow.pkce.verifier, redirect_uri: REDIRECT_URI, client_id: client.client_id },
      withProof,
    );
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('Bearer');
  });

  it('signs in, consents and issues a token bound to the resource with the granted scopes and the wrapped credential', async () => {
    const client = await registerClient(h.url);
    const flow = await signInFlow(h.url, { clientId: client.client_id, grant: ['accounts:read', 'positions:read'] });
    expect(flow.state).toBe('state-123');
    expect(flow.iss).toBe(h.url);
    expect(`${flow.callback.origin}${flow.callback.pathname}`).toBe(REDIRECT_URI);
    const tokens = await tokenRequest(h.url, {
      grant_type: 'authorization_code',
      code: flow.code,
      code_verifier: flow.pkce.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: client.client_id,
      resource: `${h.url}/mcp`,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('Bearer');
    expect(tokens.body.expires_in).toBe(3600);
    expect(typeof tokens.body.refresh_token).toBe('string');
    const resolved = await probe(h.url, String(tokens.body.access_token));
    expect(resolved).toMatchObject({
      kind: 'ok',
      scopes: ['accounts:read', 'positions:read'],
      credentialHeaders: { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' },
    });
  });
});
