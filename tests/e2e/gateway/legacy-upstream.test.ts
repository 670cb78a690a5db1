/**
 * A sessionful 2025-era upstream (v1 SDK, Mcp-Session-Id): negotiated automatically (the
 * server/discover probe falls back to initialize), one session per credential digest, and a new
 * session when the upstream forgets the old one (HTTP 404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startGatewayWith } from '../../helpers/stack.ts';
import { connectV1, connectV2, namesOf } from '../../helpers/clients.ts';
import { whoamiTool } from '../../fixtures/fake-tools.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';

const ALICE = { 'x-cpz-key': 'alice', 'x-cpz-secret': 'alice-secret' };
const BOB = { 'x-cpz-key': 'bob', 'x-cpz-secret': 'bob-secret' };
/** Two credentials only the first test uses, so that their lookups are its own whatever ran before. */
const CAROL = { 'x-cpz-key': 'carol', 'x-cpz-secret': 'carol-secret' };
const DAVE = { 'x-cpz-key': 'dave', 'x-cpz-secret': 'dave-secret' };

let upstream: FakeUpstream;
let scopes: ScopeEndpoint;
let gateway: RunningGateway;
beforeAll(async () => {
  upstream = await startFakeUpstream({ era: 'legacy', sessions: true, tools: [whoamiTool], listChanged: true });
  // Its own scope endpoint on port 0: the default config's (the platform on :3002) may be anything on this machine.
  scopes = await startScopeEndpoint({ alice: ['profile:read'], bob: ['profile:read'], carol: ['profile:read'], dave: ['profile:read'] });
  gateway = await startGatewayWith({ overrides: { upstreams: [{ name: 'legacy', url: upstream.url }], scopes: { endpoint: scopes.url } } });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await scopes?.close();
});

/** The sessions the upstream's tools/call requests came in, in arrival order. */
const callSessions = () => upstream.received.filter((r) => r.method === 'tools/call').map((r) => r.session);

const whoami = async (client: Awaited<ReturnType<typeof connectV2>>) =>
  ((await client.callTool({ name: 'whoami', arguments: {} })).content as { text: string }[])[0]!.text;

describe('a sessionful legacy upstream', () => {
  it('serves its tools to modern and legacy callers through one endpoint', async () => {
    const lookups = scopes.hits;
    const modern = await connectV2(`${gateway.url}/mcp`, CAROL);
    const legacy = await connectV1(`${gateway.url}/mcp`, DAVE);
    try {
      expect(namesOf(await modern.listTools())).toEqual(['whoami']);
      expect(namesOf(await legacy.listTools())).toEqual(['whoami']);
      expect(scopes.hits).toBe(lookups + 2); // one lookup per credential, at this test's own endpoint
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
  });

  it('keeps one upstream session per credential: each caller only ever uses a session it initialised', async () => {
    const alice = await connectV2(`${gateway.url}/mcp`, ALICE);
    const bob = await connectV2(`${gateway.url}/mcp`, BOB);
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => whoami(i % 2 ? bob : alice)));
      expect(answers.filter((a) => a === 'alice@alice')).toHaveLength(20);
      expect(answers.filter((a) => a === 'bob@bob')).toHaveLength(20);
      expect(new Set(callSessions()).size).toBe(2);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });

  it('opens a new session when the upstream answers 404 for a forgotten one, and the call succeeds', async () => {
    const alice = await connectV2(`${gateway.url}/mcp`, ALICE);
    try {
      const before = callSessions().at(-1);
      upstream.forgetSessions();
      expect(await whoami(alice)).toBe('alice@alice');
      expect(callSessions().at(-1)).not.toBe(before);
    } finally {
      await alice.close();
    }
  });
});
