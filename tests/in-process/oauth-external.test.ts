/**
 * `oauth.mode: external` through the real handler in process, with an identity provider's JWKS served
 * here (tokens signed with jose): whose account a token's calls count against when one static service
 * credential (`credentialHeaders`) goes upstream for everybody.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { ProtocolError, type Tool } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { bearerCredential } from '../../gateway/auth/oauth/credential.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';

const ISSUER = 'https://idp.example.com/realms/mcp';
const KID = 'key-1';

/** The identity provider's JWKS endpoint: serves the public key (`key`, under KID), or `status` instead when set. */
interface Jwks {
  url: string;
  status?: number;
  key: JWK;
  fetches: number;
  close(): Promise<void>;
}

let signer: CryptoKey;
let jwks: Jwks;
let gateway: InProcessGateway | undefined;

async function serveJwks(publicJwk: JWK): Promise<Jwks> {
  const state = { status: undefined as number | undefined, key: publicJwk, fetches: 0 };
  const server: Server = createServer((_req, res) => {
    state.fetches++;
    if (state.status !== undefined) return void res.writeHead(state.status, { 'content-type': 'text/plain' }).end('not here');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [{ ...state.key, kid: KID, alg: 'ES256', use: 'sig' }] }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }) as Jwks;
}

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  signer = privateKey;
  jwks = await serveJwks(await exportJWK(publicKey));
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  jwks.status = undefined;
});
afterAll(async () => {
  await jwks?.close();
});

/** An RFC 9068 access token of `sub` for `audience`, signed with the served key (or `key`, under `kid`). */
function token(sub: string | undefined, audience: string, scope = 'mcp.read', key = signer, kid = KID): Promise<string> {
  const jwt = new SignJWT({ scope, client_id: 'mcp-client' })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime('5m');
  return (sub === undefined ? jwt : jwt.setSubject(sub)).sign(key);
}

/** A token of alice's for `audience` whose JWS header has `typ` (none when undefined), as an identity provider signs an ID token or another JWT. */
function typed(typ: string | undefined, audience: string): Promise<string> {
  return new SignJWT({ scope: 'mcp.read', client_id: 'mcp-client' })
    .setProtectedHeader({ alg: 'ES256', kid: KID, ...(typ === undefined ? {} : { typ }) })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(signer);
}

/** An external-mode gateway (`config.oauth.external` laid over these settings); `jwksUri` null: found through the issuer's metadata (discovery). */
async function start(config: DeepPartial<GatewayConfig> = {}, jwksUri: string | null = jwks.url, issuer = ISSUER): Promise<InProcessGateway> {
  gateway = inProcessGateway(
    {
      ...config,
      upstreams: [{ health: { intervalMs: 0 } }],
      oauth: {
        ...config.oauth,
        mode: 'external',
        external: {
          issuer,
          ...(jwksUri ? { jwksUri } : {}),
          scopeMap: { 'mcp.read': ['ledger:read'] },
          // One service key upstream for every person the identity provider signs in.
          credentialHeaders: { 'x-cpz-key': 'svc-key', 'x-cpz-secret': 'svc-secret' },
          ...config.oauth?.external,
        },
      },
      authorizationServers: [],
    },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } as Tool }] } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  return gateway;
}

/** tools/list at /mcp with `Authorization: Bearer <bearer>` and no key pair. */
function list(g: InProcessGateway, bearer: string): Promise<Response> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  return g.fetch(new Request(g.mcpUrl, { method: 'POST', headers: { ...headers, authorization: `Bearer ${bearer}` }, body: JSON.stringify(body) }));
}

describe('external mode: the account of a token is its issuer + sub, not the forwarded service key', () => {
  it('gives each person a budget of their own though one service key goes upstream for all (scopes.accountField: key_id)', async () => {
    const g = await start({ rateLimits: { requests: { points: 2, durationMs: 60_000 } }, scopes: { accountField: 'key_id' } });
    const audience = `${g.gatewayUrl}/mcp`;
    const alice = await token('alice', audience);
    const bob = await token('bob', audience);
    expect([(await list(g, alice)).status, (await list(g, alice)).status]).toEqual([200, 200]);
    const spent = await list(g, alice);
    expect(spent.status).toBe(429);
    expect(((await spent.json()) as { error: { message: string } }).error.message).toMatch(/this account's requests budget \(2 per 60 s\) is spent/);
    // Bob signed in with the same identity provider: alice's calls spent nothing of his.
    expect((await list(g, bob)).status).toBe(200);
    // Another token of alice's (another client, other scopes) is still alice.
    expect((await list(g, await token('alice', audience, 'mcp.read openid'))).status).toBe(429);
  });

  it('gives two people behind one service key different credential digests (what in-flight calls and input requests belong to)', async () => {
    const g = await start();
    const audience = `${g.gatewayUrl}/mcp`;
    const exchange = async (sub: string) => {
      const outcome = await bearerCredential(
        g.runtime.state.oauth!,
        { kind: 'bearer', headers: { authorization: `Bearer ${await token(sub, audience)}` }, digest: 'unused' },
        audience,
        false,
        g.runtime.state.digestKey,
      );
      if (outcome.kind !== 'credential') throw new Error(`not a credential: ${outcome.kind}`);
      return outcome.credential;
    };
    const [alice, bob, aliceAgain] = [await exchange('alice'), await exchange('bob'), await exchange('alice')];
    // The same service key goes upstream for both ...
    expect(alice.headers).toEqual({ 'x-cpz-key': 'svc-key', 'x-cpz-secret': 'svc-secret' });
    expect(bob.headers).toEqual(alice.headers);
    // ... but nothing keyed by the digest is shared, and one person's tokens share one.
    expect(bob.digest).not.toBe(alice.digest);
    expect(aliceAgain.digest).toBe(alice.digest);
    // The account id the edge keys (accountDigest) before anything counts it: issuer and subject, never the service key.
    expect(alice.granted?.account).toBe(`oauth\0${ISSUER}\0alice`);
  });

  it('refuses a token without sub (RFC 9068 §2.2): it names no account', async () => {
    const g = await start();
    const refused = await list(g, await token(undefined, `${g.gatewayUrl}/mcp`));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('Unauthorized: The access token names no subject (sub)');
  });

  it('refuses a sub that is no non-empty string (RFC 7519 §4.1.2 StringOrURI): stringified, two people would share "[object Object]"', async () => {
    const g = await start();
    for (const sub of [{ id: 'alice' }, { id: 'bob' }, 42, '', ['alice'], null]) {
      const jwt = await new SignJWT({ scope: 'mcp.read', client_id: 'mcp-client', sub } as unknown as JWTPayload)
        .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'at+jwt' })
        .setIssuer(ISSUER)
        .setAudience(`${g.gatewayUrl}/mcp`)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(signer);
      const refused = await list(g, jwt);
      expect(refused.status, JSON.stringify(sub)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect((await errorOf(refused)).message).toBe("Unauthorized: The access token's sub is not a non-empty string");
    }
  });
});

describe('external mode: iat is required and bounds how long a token is taken (RFC 9068 §2.2)', () => {
  /** A token of alice's for `audience` with these `iat` and `exp` (epoch s; iat left out when undefined). */
  function dated(audience: string, iat: number | undefined, exp: number): Promise<string> {
    const jwt = new SignJWT({ scope: 'mcp.read', client_id: 'mcp-client' })
      .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setSubject('alice')
      .setExpirationTime(exp);
    return (iat === undefined ? jwt : jwt.setIssuedAt(iat)).sign(signer);
  }
  /** The refusal of `bearer`: 401 with the usual challenge, its message, the token never echoed. */
  async function refusal(g: InProcessGateway, bearer: string): Promise<string> {
    const refused = await list(g, bearer);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${g.gatewayUrl}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
    );
    const text = await refused.text();
    for (const part of bearer.split('.')) expect(text).not.toContain(part);
    return (JSON.parse(text) as { error: { message: string } }).error.message;
  }
  const now = () => Math.floor(Date.now() / 1000);

  it('refuses a token without iat, or whose iat is further ahead than clockSkewSeconds (it was accepted)', async () => {
    const g = await start();
    const audience = `${g.gatewayUrl}/mcp`;
    expect(await refusal(g, await dated(audience, undefined, now() + 300))).toBe(
      'Unauthorized: The access token has no iat (issued-at), which RFC 9068 §2.2 requires of a JWT access token',
    );
    expect(await refusal(g, await dated(audience, now() + 120, now() + 600))).toBe(
      "Unauthorized: The access token's iat (issued-at) is more than 30 s ahead of the gateway's clock (oauth.external.clockSkewSeconds)",
    );
    // Within the skew (the provider's clock a little ahead): taken.
    expect((await list(g, await dated(audience, now() + 10, now() + 600))).status).toBe(200);
  });

  it('takes a token for maxTokenAgeSeconds after its iat, whatever its exp (one good for decades was accepted for decades)', async () => {
    const g = await start({ oauth: { external: { maxTokenAgeSeconds: 3600 } } });
    const audience = `${g.gatewayUrl}/mcp`;
    const decades = now() + 30 * 365 * 86400;
    // Fresh, it is taken (never refused for its exp alone: its client would fetch the same kind again) ...
    expect((await list(g, await dated(audience, now() - 60, decades))).status).toBe(200);
    // ... and its standing ends when the gateway stops taking it, not decades on.
    const outcome = await bearerCredential(
      g.runtime.state.oauth!,
      { kind: 'bearer', headers: { authorization: `Bearer ${await dated(audience, now() - 60, decades)}` }, digest: 'unused' },
      audience,
      false,
      g.runtime.state.digestKey,
    );
    expect(outcome.kind === 'credential' && outcome.credential.granted?.expiresAt).toBeLessThanOrEqual((now() + 3600) * 1000);
    // Past the bound (and its clock skew), it is refused as a token to renew.
    expect(await refusal(g, await dated(audience, now() - 3700, decades))).toBe(
      'Unauthorized: The access token was issued more than 3600 s ago (oauth.external.maxTokenAgeSeconds), though its exp is later',
    );
  });

  it('takes a 24 h token of Okta, Entra ID or Auth0 until its exp by default', async () => {
    const g = await start();
    const audience = `${g.gatewayUrl}/mcp`;
    expect((await list(g, await dated(audience, now() - 86_300, now() + 100))).status).toBe(200);
    expect(await refusal(g, await dated(audience, now() - 86_500, now() + 7 * 86400))).toMatch(/issued more than 86400 s ago/);
  });
});

describe('external mode takes access tokens only: the JWT typ header (RFC 9068 §4)', () => {
  it('refuses an ID token or another JWT of the same identity provider (typ JWT, or none) by default, naming its typ and the setting', async () => {
    const g = await start();
    const audience = `${g.gatewayUrl}/mcp`;
    for (const [typ, shown] of [
      ['JWT', '"JWT"'],
      [undefined, 'absent'],
      ['application/jwt', '"application/jwt"'],
    ] as const) {
      const refused = await list(g, await typed(typ, audience));
      expect(refused.status, shown).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect((await errorOf(refused)).message).toBe(
        `Unauthorized: The access token's typ header is ${shown}, which oauth.external.tokenTypes ("at+jwt") does not accept`,
      );
    }
    // RFC 7515 §4.1.9: case-insensitive, application/ implied.
    for (const typ of ['at+jwt', 'AT+JWT', 'application/at+jwt']) expect((await list(g, await typed(typ, audience))).status, typ).toBe(200);
  });

  it('accepts typ JWT when tokenTypes lists it (Keycloak, Entra ID, Okta), and a token without typ only with ""', async () => {
    const g = await start({ oauth: { external: { tokenTypes: ['at+jwt', 'JWT'] } } });
    const audience = `${g.gatewayUrl}/mcp`;
    for (const typ of ['JWT', 'jwt', 'application/jwt', 'at+jwt']) expect((await list(g, await typed(typ, audience))).status, typ).toBe(200);
    const untyped = await list(g, await typed(undefined, audience));
    expect(untyped.status).toBe(401);
    expect((await errorOf(untyped)).message).toBe(
      `Unauthorized: The access token's typ header is absent, which oauth.external.tokenTypes ("at+jwt", "JWT") does not accept`,
    );
    await g.close();
    const lax = await start({ oauth: { external: { tokenTypes: ['at+jwt', ''] } } });
    expect((await list(lax, await typed(undefined, `${lax.gatewayUrl}/mcp`))).status).toBe(200);
  });
});

describe("external mode with a scopeMap: scopes_supported and the step-up challenge name the identity provider's scopes", () => {
  /** A gateway whose tools need ledger:read, trade or orders:read, mapped from the provider's mcp.* scopes, with step-up challenges on. */
  async function mapped(): Promise<InProcessGateway> {
    const tool = (name: string, scope: string) => ({ name, inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: [scope] } } }) as Tool;
    gateway = inProcessGateway(
      {
        upstreams: [{ health: { intervalMs: 0 } }],
        oauth: {
          mode: 'external',
          scopes: ['ledger:read', 'trade', 'orders:read'],
          external: {
            issuer: ISSUER,
            jwksUri: jwks.url,
            insufficientScope: true,
            scopeMap: { 'mcp.read': ['ledger:read'], 'mcp.trade': ['trade'], 'mcp.all': ['ledger:read', 'trade'] },
            credentialHeaders: { 'x-cpz-key': 'svc-key', 'x-cpz-secret': 'svc-secret' },
          },
        },
        authorizationServers: [],
      },
      {
        fake: {
          tools: [
            { definition: tool('read_ledger', 'ledger:read') },
            { definition: tool('place_trade', 'trade') },
            { definition: tool('list_orders', 'orders:read') },
          ],
        },
      },
    );
    await gateway.runtime.startOAuth(gateway.gatewayUrl);
    return gateway;
  }

  it('lists the scopeMap keys and each scope no key maps to in scopes_supported (RFC 9728), not the gateway-internal names', async () => {
    const g = await mapped();
    const document = (await (await g.fetch(new Request(`${g.gatewayUrl}/.well-known/oauth-protected-resource/mcp`))).json()) as { scopes_supported: string[] };
    expect(document.scopes_supported).toEqual(['mcp.read', 'mcp.trade', 'mcp.all', 'orders:read']);
  });

  it('challenges a call the token cannot make with the provider scopes that would grant it (RFC 6750 §3), else the scope itself', async () => {
    const g = await mapped();
    const bearer = await token('alice', `${g.gatewayUrl}/mcp`, 'mcp.read');
    const call = (name: string) => {
      const { headers, body } = rpc('modern', 2, 'tools/call', { name, arguments: {} });
      delete headers['x-cpz-key'];
      delete headers['x-cpz-secret'];
      return g.fetch(new Request(g.mcpUrl, { method: 'POST', headers: { ...headers, authorization: `Bearer ${bearer}` }, body: JSON.stringify(body) }));
    };
    const trade = await call('place_trade');
    expect(trade.status).toBe(403);
    expect(trade.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${g.gatewayUrl}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="mcp.trade"`,
    );
    expect((await errorOf(trade)).message).toBe('Forbidden: the access token lacks the scope this tool needs (one of: mcp.trade)');
    // No provider scope maps to orders:read: it stands for itself.
    const orders = await call('list_orders');
    expect(orders.status).toBe(403);
    expect(orders.headers.get('www-authenticate')).toMatch(/, scope="orders:read"$/);
    await orders.body?.cancel();
  });
});

/** What a request over a real socket answered: its status, JSON-RPC error message and challenge, if any, and its body. */
interface Answer {
  status: number;
  message?: string;
  challenge?: string;
  text: string;
}

/** tools/list at /mcp over a socket to `port`, with `Host: <host>` (a caller chooses it) and `Authorization: Bearer <bearer>` (none when undefined). */
async function listOver(port: number, host: string, bearer: string | undefined, address = '127.0.0.1'): Promise<Answer> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  return over(
    port,
    host,
    'POST',
    '/mcp',
    { ...headers, ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }) },
    JSON.stringify(body),
    address,
  );
}

/** One request over a socket to `address`:`port` with `Host: <host>`. */
async function over(
  port: number,
  host: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  address = '127.0.0.1',
): Promise<Answer> {
  const request = httpRequest({ host: address, port, path, method, headers: { ...headers, host } });
  request.end(body);
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of response) text += chunk;
  const message = text.startsWith('{') ? (JSON.parse(text) as { error?: { message: string } }).error?.message : undefined;
  const challenge = response.headers['www-authenticate'];
  return { status: response.statusCode!, text, ...(message ? { message } : {}), ...(challenge ? { challenge } : {}) };
}

/** Serves `g`'s real listener on a loopback socket (at `address`) for `use(port)`, then closes it. */
async function overSocket<T>(g: InProcessGateway, use: (port: number) => Promise<T>, address = '127.0.0.1'): Promise<T> {
  const server = createServer(g.runtime.listener);
  server.listen(0, address);
  await once(server, 'listening');
  try {
    return await use((server.address() as AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('external mode without publicUrl: the audience is the endpoint on the port the connection reached', () => {
  it("refuses a token for another local resource sent with a Host naming that resource's port (it was accepted: only the Host's name was checked)", async () => {
    const g = await start();
    await overSocket(g, async (port) => {
      const other = port === 65535 ? port - 1 : port + 1;
      const foreign = await token('alice', `http://127.0.0.1:${other}/mcp`);
      const refused = await listOver(port, `127.0.0.1:${other}`, foreign);
      expect(refused.status).toBe(421);
      expect(refused.message).toBe(
        `Misdirected Request: The request's Host names port ${other}, but it reached the gateway on port ${port}; without publicUrl the audience a token must name is the endpoint's URL on the port it was reached on (reached through a tunnel, port forward or proxy on another port? set publicUrl to the URL clients use)`,
      );
      // Without a port, an http Host names port 80.
      expect((await listOver(port, '127.0.0.1', await token('alice', 'http://127.0.0.1/mcp'))).status).toBe(421);
      // A token for this gateway, with a Host naming its port in either loopback spelling, is taken.
      expect((await listOver(port, `127.0.0.1:${port}`, await token('alice', `http://127.0.0.1:${port}/mcp`))).status).toBe(200);
      expect((await listOver(port, `localhost:${port}`, await token('alice', `http://localhost:${port}/mcp`))).status).toBe(200);
    });
  });

  it('answers a client behind a tunnel 421, not a 401 that has it fetch a token again forever, and tells the operator once (publicUrl)', async () => {
    const g = await start();
    await overSocket(g, async (port) => {
      // `docker run -p <public>:<port>`: the client uses the public port, and its token names it, as the provider was asked.
      const published = port === 65535 ? port - 1 : port + 1;
      const host = `127.0.0.1:${published}`;
      const bearer = await token('alice', `http://${host}/mcp`);
      const refused = await listOver(port, host, bearer);
      // RFC 9110 §15.5.20: not the token's fault, so no invalid_token challenge (RFC 6750 §3.1) that would send the client to sign in again.
      expect(refused.status).toBe(421);
      expect(refused.challenge).toBeUndefined();
      expect(refused.message).toMatch(/^Misdirected Request: .*set publicUrl to the URL clients use\)$/);
      // Its RFC 9728 document would name a resource whose tokens are all refused (§3.3 binds it to this URL): not served.
      const document = await over(port, host, 'GET', '/.well-known/oauth-protected-resource/mcp');
      expect(document.status).toBe(421);
      expect(document.message).toBe(refused.message);
      expect(document.text).not.toContain('authorization_servers');
      // Without a token the challenge is as ever: a key pair or anonymous caller is not refused for the port.
      const bare = await listOver(port, host, undefined);
      expect(bare.status).toBe(401);
      expect(bare.challenge).toBe(`Bearer resource_metadata="http://${host}/.well-known/oauth-protected-resource/mcp"`);
      await listOver(port, host, bearer);
      // One warn line for all of these, naming the ports and the setting, never the token.
      const warned = g.logs.records('set publicUrl');
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, host, reached: `127.0.0.1:${port}` });
      for (const part of bearer.split('.')) expect(g.logs.text).not.toContain(part);
      for (const answer of [refused, document]) for (const part of bearer.split('.')) expect(answer.text).not.toContain(part);
    });
  });

  it('refuses a token for the other loopback address on the same port, named by an IP-literal Host (it was accepted: [::1] passed the loopback Host check)', async () => {
    const g = await start();
    // The gateway on 127.0.0.1:<port>; another local MCP server may hold [::1]:<port> and replay the tokens its clients sent it.
    await overSocket(g, async (port) => {
      const refused = await listOver(port, `[::1]:${port}`, await token('alice', `http://[::1]:${port}/mcp`));
      expect(refused.status).toBe(421);
      expect(refused.challenge).toBeUndefined();
      expect(refused.message).toBe(
        `Misdirected Request: The request's Host names the address [::1], but it reached the gateway at 127.0.0.1; without publicUrl the audience a token must name is the endpoint's URL at the address it was reached at (reached through a tunnel, port forward or proxy? set publicUrl to the URL clients use)`,
      );
      expect((await over(port, `[::1]:${port}`, 'GET', '/.well-known/oauth-protected-resource/mcp')).status).toBe(421);
      // The address reached, and a name (which the edge checks), are taken as before.
      expect((await listOver(port, `127.0.0.1:${port}`, await token('alice', `http://127.0.0.1:${port}/mcp`))).status).toBe(200);
      expect((await listOver(port, `localhost:${port}`, await token('alice', `http://localhost:${port}/mcp`))).status).toBe(200);
      expect(g.logs.records('set publicUrl')[0]).toMatchObject({ host: `[::1]:${port}`, reached: `127.0.0.1:${port}` });
    });
    // And the other way round: reached on [::1], a Host naming 127.0.0.1 is not this socket.
    await overSocket(
      g,
      async (port) => {
        expect((await listOver(port, `[::1]:${port}`, await token('alice', `http://[::1]:${port}/mcp`), '::1')).status).toBe(200);
        expect((await listOver(port, `127.0.0.1:${port}`, await token('alice', `http://127.0.0.1:${port}/mcp`), '::1')).status).toBe(421);
      },
      '::1',
    );
  });

  it("the console's lookup holds a token to the same rule: refused where the MCP endpoint refuses it (it showed the token's tools)", async () => {
    const admin = 'oauth-external-console-admin-0123456789';
    const g = await start({ console: { adminToken: admin } });
    /** The console's lookup of `bearer`, over the socket with `Host: <host>`: the page's text. */
    const lookup = async (port: number, host: string, bearer: string) => {
      const form = new URLSearchParams({ key: '', secret: '', bearer }).toString();
      const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/x-www-form-urlencoded' };
      const page = await over(port, host, 'POST', '/console/credential', headers, form);
      expect(page.status).toBe(200);
      for (const part of bearer.split('.')) expect(page.text).not.toContain(part);
      return page.text.replaceAll('&#39;', "'");
    };
    await overSocket(g, async (port) => {
      const published = port === 65535 ? port - 1 : port + 1;
      for (const host of [`127.0.0.1:${published}`, `[::1]:${port}`]) {
        const bearer = await token('alice', `http://${host}/mcp`);
        expect((await listOver(port, host, bearer)).status, host).toBe(421);
        const page = await lookup(port, host, bearer);
        expect(page, host).toContain('Whose view:</strong> An OAuth access token that is not checked at the URL this page was reached at:');
        expect(page, host).toContain('set publicUrl to the URL clients use');
        // Each endpoint, asked as from where this page was reached, answers as it would the client.
        expect(page.match(/<p class="error">HTTP 421<\/p>/g), host).toHaveLength(2);
        expect(page, host).not.toContain('of account alice');
        expect(page, host).not.toContain('<code>echo</code>');
      }
      // Where the endpoint takes it, so does the lookup.
      const page = await lookup(port, `127.0.0.1:${port}`, await token('alice', `http://127.0.0.1:${port}/mcp`));
      expect(page).toContain('An OAuth access token of account alice');
      expect(page).toContain('<code>echo</code>');
    });
  });

  it('takes the port of publicUrl when it is set (a tunnel or proxy on another port)', async () => {
    const tunnel = 'http://127.0.0.1:5499';
    const g = await start({ publicUrl: tunnel });
    await overSocket(g, async (port) => {
      expect((await listOver(port, '127.0.0.1:5499', await token('alice', `${tunnel}/mcp`))).status).toBe(200);
      expect((await listOver(port, `127.0.0.1:${port}`, await token('alice', `http://127.0.0.1:${port}/mcp`))).status).toBe(401);
    });
  });
});

/** The answer's JSON-RPC error. */
async function errorOf(response: Response): Promise<{ code: number; message: string; data?: { kind?: string } }> {
  return ((await response.json()) as { error: { code: number; message: string; data?: { kind?: string } } }).error;
}

describe("external mode when the identity provider's keys cannot be read", () => {
  const unavailable = async (response: Response) => {
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    // Not a challenge: the client keeps its token and retries.
    expect(response.headers.get('www-authenticate')).toBeNull();
    const error = await errorOf(response);
    expect(error.message).toBe("Service Unavailable: the identity provider's signing keys cannot be read right now; nothing was forwarded. Retry later.");
    expect(error.data?.kind).toBe('auth_unavailable');
  };
  const warnings = (g: InProcessGateway) => g.logs.records('identity provider keys unavailable');

  it('answers 503 + Retry-After while jwks_uri answers 404, logs it once (throttled) with the status, and accepts the token once it is back', async () => {
    jwks.status = 404;
    const g = await start();
    const alice = await token('alice', `${g.gatewayUrl}/mcp`);
    await unavailable(await list(g, alice));
    await unavailable(await list(g, alice));
    expect(warnings(g).map((l) => [l.level, l.reason])).toEqual([[40, `${jwks.url} answered HTTP 404`]]);
    expect(g.logs.text).not.toContain(alice);
    jwks.status = undefined;
    expect((await list(g, alice)).status).toBe(200);
  });

  it("the console's credential lookup says the token cannot be checked now, not that no endpoint accepts it", async () => {
    jwks.status = 404;
    const admin = 'oauth-external-console-admin-0123456789';
    const g = await start({ console: { adminToken: admin } });
    const response = await g.fetch(
      new Request(`${g.gatewayUrl}/console/credential`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ key: '', secret: '', bearer: await token('alice', `${g.gatewayUrl}/mcp`) }),
      }),
    );
    const html = (await response.text()).replaceAll('&#39;', "'");
    expect(html).toContain(
      "Whose view:</strong> An OAuth access token that cannot be checked right now: the identity provider's signing keys cannot be read right now.",
    );
    expect(html).toContain("The token cannot be checked here right now: the identity provider's signing keys cannot be read right now.");
    expect(html).not.toContain('no endpoint accepts');
  });

  it('answers 503 while the identity provider is down, and still 401 for a token refused before any key is needed', async () => {
    const down = await serveJwks({ kty: 'EC' });
    const url = down.url;
    await down.close();
    const g = await start({}, url);
    await unavailable(await list(g, await token('alice', `${g.gatewayUrl}/mcp`)));
    expect(warnings(g).map((l) => l.reason)).toEqual([`${url} answered fetch failed (ECONNREFUSED)`]);
    // Refused before any key is needed: a header that is no JSON, and an algorithm never accepted (HS256).
    const hs256 = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(32)));
    for (const garbage of ['bm90IGpzb24.bm90IGpzb24.c2ln', hs256]) {
      const refused = await list(g, garbage);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it("answers 503 while the issuer's metadata (where jwks_uri is found) cannot be read", async () => {
    const down = await serveJwks({ kty: 'EC' });
    const issuer = `${new URL(down.url).origin}/realms/mcp`;
    await down.close();
    const g = await start({}, null, issuer);
    await unavailable(await list(g, await token('alice', `${g.gatewayUrl}/mcp`)));
    expect(warnings(g).map((l) => l.reason)).toEqual(['issuer metadata: no jwks_uri found in the issuer metadata']);
  });

  it('takes a token signed with a new key the provider serves under a kid it used before (the key set is read again, within its cooldown)', async () => {
    const g = await start();
    const audience = `${g.gatewayUrl}/mcp`;
    expect((await list(g, await token('alice', audience))).status).toBe(200);
    const served = jwks.key;
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    jwks.key = await exportJWK(publicKey);
    // Past jose's 5 s cooldown since the set was first read (only Date is faked: every timer runs as it does).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6_000 });
    try {
      const fetches = jwks.fetches;
      expect((await list(g, await token('alice', audience, 'mcp.read', privateKey))).status).toBe(200);
      expect(jwks.fetches).toBe(fetches + 1);
      // The old key is gone from the set: its tokens are refused, and the set is not read again within the cooldown.
      const old = await list(g, await token('alice', audience));
      expect(old.status).toBe(401);
      expect(old.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(jwks.fetches).toBe(fetches + 1);
    } finally {
      vi.useRealTimers();
      jwks.key = served;
    }
  });

  it('answers 401 invalid_token when the keys were read and the token is not signed by them (forged, or a kid the set lacks)', async () => {
    const g = await start();
    const audience = `${g.gatewayUrl}/mcp`;
    const { privateKey: other } = await generateKeyPair('ES256');
    for (const forged of [await token('alice', audience, 'mcp.read', other), await token('alice', audience, 'mcp.read', other, 'key-unknown')]) {
      const refused = await list(g, forged);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect((await errorOf(refused)).message).toBe('Unauthorized: The access token is not valid here');
    }
    expect(warnings(g)).toEqual([]);
  });
});

describe('external mode with no other scope source (no scopes.endpoint, no credentials.apiKeys)', () => {
  const SERVICE_SECRET = 'svc-secret-Sup3rS3cret';
  /** A gateway whose only scope source is the identity provider; its upstream quotes the service credential it received when it fails. */
  async function alone(): Promise<InProcessGateway> {
    gateway = inProcessGateway(
      {
        upstreams: [{ health: { intervalMs: 0 } }],
        credentials: { apiKeys: [] },
        oauth: {
          mode: 'external',
          external: {
            issuer: ISSUER,
            jwksUri: jwks.url,
            scopeMap: { 'mcp.read': ['ledger:read'] },
            credentialHeaders: { 'x-cpz-key': 'svc-key', 'x-cpz-secret': SERVICE_SECRET },
          },
        },
        authorizationServers: [],
      },
      {
        fake: {
          tools: [
            {
              definition: { name: 'fail', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } as Tool,
              call: (_args, context) => {
                throw new ProtocolError(-32603, `backend refused key ${context.caller} with secret ${SERVICE_SECRET}`, { secret: SERVICE_SECRET });
              },
            },
            {
              definition: { name: 'fail_result', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } as Tool,
              call: () => ({ isError: true, content: [{ type: 'text', text: `backend refused secret ${SERVICE_SECRET}` }] }),
            },
          ],
        },
      },
    );
    await gateway.runtime.startOAuth(gateway.gatewayUrl);
    return gateway;
  }

  it("refuses what is not the identity provider's token (a made-up key pair, an opaque or JWE-shaped bearer) with 401: it used to list and call every tool", async () => {
    const g = await alone();
    const { headers, body } = rpc('modern', 1, 'tools/list');
    const made = await g.fetch(
      new Request(g.mcpUrl, { method: 'POST', headers: { ...headers, 'x-cpz-key': 'nobody', 'x-cpz-secret': 'nothing-at-all' }, body: JSON.stringify(body) }),
    );
    expect(made.status).toBe(401);
    for (const bearer of ['totally-not-a-jwt', 'a.b', 'a.b.c.d.e']) {
      const refused = await list(g, bearer);
      expect(refused.status, bearer).toBe(401);
      expect((await errorOf(refused)).message).toMatch(/Unauthorized/);
    }
    // The identity provider's own token still lists what its scopes allow.
    const ok = await list(g, await token('alice', `${g.gatewayUrl}/mcp`, 'mcp.read'));
    expect(ok.status).toBe(200);
  });

  it('keeps the service credential the token stands for out of an upstream error and an isError result (the caller never sent it)', async () => {
    const g = await alone();
    const bearer = await token('alice', `${g.gatewayUrl}/mcp`, 'mcp.read');
    // ledger:read is no scope of the fake's tools: every tool is open (no scopes declared), so both are callable.
    for (const name of ['fail', 'fail_result']) {
      const { headers, body } = rpc('modern', 2, 'tools/call', { name, arguments: {} });
      delete headers['x-cpz-key'];
      delete headers['x-cpz-secret'];
      const answer = await g.fetch(
        new Request(g.mcpUrl, { method: 'POST', headers: { ...headers, authorization: `Bearer ${bearer}` }, body: JSON.stringify(body) }),
      );
      const text = await answer.text();
      expect(text, name).toContain('[redacted]');
      expect(text, name).not.toContain(SERVICE_SECRET);
    }
  });
});
