/**
 * Live reload through `RunningGateway.reload` (the SIGHUP path without the signal): a call in flight
 * when the configuration changes finishes on the old runtime, even when its upstream connection is
 * replaced; new requests go out on the new connection; an unchanged configuration keeps everything; a
 * run_code in progress still counts against the runs per credential after a reload (the code sandbox is
 * carried over, its warm worker with it); its script makes no new tool call once a reload that changed the
 * configuration has replaced the one it was authorised under (security try-out: a key's access revoked by
 * SIGHUP, its running script called a read 2.5 s later).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { loadConfig } from '../../../config/load.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = { 'x-cpz-key': 'reloader', 'x-cpz-secret': 'reloader-secret' };
const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
const text = (t: string) => [{ type: 'text' as const, text: t }];

/** slow_tool answers only once the test opens this gate, so it is in flight for as long as the test needs. */
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
/** held_read, called from a script, likewise answers once this one opens. */
let openReadGate!: () => void;
const readGate = new Promise<void>((resolve) => (openReadGate = resolve));
/** gated_read: the same, for the script that calls again after the reload. */
let openSecondGate!: () => void;
const secondGate = new Promise<void>((resolve) => (openSecondGate = resolve));
/** late_tool answers once the test sets and opens this gate. */
let lateGate: Promise<void> = Promise.resolve();
/** third_read: the same, for the script that runs across an unchanged reload and then a changed one. */
let openThirdGate!: () => void;
const thirdGate = new Promise<void>((resolve) => (openThirdGate = resolve));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    upstream: {
      tools: [
        { definition: tool('slow_tool'), call: () => gate.then(() => ({ content: text('late') })) },
        { definition: tool('quick_tool'), call: async () => ({ content: text('quick') }) },
        { definition: tool('held_read'), call: () => readGate.then(() => ({ content: text('read') })) },
        { definition: tool('gated_read'), call: () => secondGate.then(() => ({ content: text('gated') })) },
        { definition: tool('third_read'), call: () => thirdGate.then(() => ({ content: text('third') })) },
        { definition: tool('late_tool'), call: () => lateGate.then(() => ({ content: text('late') })) },
      ],
    },
  });
});
afterAll(async () => {
  openGate();
  openReadGate();
  openSecondGate();
  openThirdGate();
  await stack?.close();
});

/** The stack's configuration (listen port 0, as it started), with `headers` on the upstream and `runsPerCredential` runs of run_code at once. */
function configWith(headers: Record<string, string>, runsPerCredential?: number) {
  const config = loadConfig({
    env: {},
    overrides: {
      log: { level: 'silent' },
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ url: stack.upstreamUrl, headers }],
      ...(runsPerCredential ? { compact: { codeMode: { limits: { concurrentRunsPerCredential: runsPerCredential } } } } : {}),
    },
  });
  delete config.scopes.endpoint;
  return config;
}

describe('reload with calls in flight', () => {
  it('an unchanged configuration keeps the upstream as it is', async () => {
    // The configuration this test reloads, whatever the file's other tests reloaded before it.
    await stack.gateway.reload(configWith({}));
    const plan = await stack.gateway.reload(configWith({}));
    expect(plan).toMatchObject({ upstreams: [{ name: 'cpzai', decision: 'keep' }], removed: [] });
  });

  it('a call in flight finishes on the old connection while the upstream is replaced; the next call uses the new one', async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      const slow = client.callTool({ name: 'slow_tool', arguments: {} });
      // In flight: the upstream has it (and answers only once the gate opens, after the reload and the next call).
      await waitFor('slow_tool at the upstream', () => stack.fake!.received.some((r) => r.method === 'tools/call'));
      const plan = await stack.gateway.reload(configWith({ 'x-service-key': 'second' }));
      expect(plan.upstreams).toEqual([{ name: 'cpzai', decision: 'replace' }]);
      const after = await client.callTool({ name: 'quick_tool', arguments: {} });
      expect(after).toMatchObject({ content: text('quick') });
      openGate();
      expect(await slow).toMatchObject({ content: text('late') });
      const calls = stack.fake!.received.filter((r) => r.method === 'tools/call');
      expect(calls.map((r) => r.headers['x-service-key'])).toEqual([undefined, 'second']);
    } finally {
      await client.close();
    }
  });

  it('a run_code in progress across a reload still counts against the runs per credential, and ends with its answer', async () => {
    await stack.gateway.reload(configWith({ 'x-service-key': 'second' }, 1));
    const client = await connectV2(`${stack.gatewayUrl}/mcp/compact`, KEY);
    try {
      const held = client.callTool({ name: 'run_code', arguments: { code: 'return (await tools.held_read()) ?? "done";' } });
      await waitFor('held_read at the upstream', () => stack.fake!.received.some((r) => r.method === 'tools/call' && r.params?.name === 'held_read'));
      await stack.gateway.reload(configWith({ 'x-service-key': 'second' }, 1));
      // The one run this credential may have is the one started before the reload.
      const refused = await client.callTool({ name: 'run_code', arguments: { code: 'return 1;' } });
      expect(refused._meta?.['ai.cpz.gateway/limit']).toBe('concurrentRunsPerCredential');
      openReadGate();
      expect((await held).isError).toBeFalsy();
      const next = await client.callTool({ name: 'run_code', arguments: { code: 'return 2;' } });
      expect(next.structuredContent).toMatchObject({ result: 2 });
    } finally {
      await client.close();
    }
  });

  /**
   * A script that calls `gate` (held at the upstream until `open`), then quick_tool: `reload` runs while the first call
   * is held. What the script saw of its second call, and whether quick_tool reached the upstream.
   */
  async function scriptAcross(gate: string, open: () => void, reload: () => Promise<void>): Promise<{ seen: unknown; quickSent: boolean }> {
    const client = await connectV2(`${stack.gatewayUrl}/mcp/compact`, KEY);
    const quickCalls = () => stack.fake!.received.filter((r) => r.method === 'tools/call' && r.params?.name === 'quick_tool').length;
    try {
      const code = `await tools.${gate}();
        try { await tools.quick_tool(); return 'called'; } catch (error) { return error.kind; }`;
      const run = client.callTool({ name: 'run_code', arguments: { code } });
      await waitFor(`${gate} at the upstream`, () => stack.fake!.received.some((r) => r.method === 'tools/call' && r.params?.name === gate));
      const before = quickCalls();
      await reload();
      open();
      const answered = await run;
      return { seen: (answered.structuredContent as { result?: unknown } | undefined)?.result ?? JSON.stringify(answered), quickSent: quickCalls() > before };
    } finally {
      await client.close();
    }
  }

  it('a script running across a reload that changed the configuration makes no new tool call: configuration_reloaded, nothing sent', async () => {
    await stack.gateway.reload(configWith({ 'x-service-key': 'third' }));
    const outcome = await scriptAcross('gated_read', openSecondGate, async () => {
      await stack.gateway.reload(configWith({ 'x-service-key': 'fourth' }));
    });
    expect(outcome).toEqual({ seen: 'configuration_reloaded', quickSent: false });
    // The next run is authorised under the new configuration and calls as before.
    const client = await connectV2(`${stack.gatewayUrl}/mcp/compact`, KEY);
    try {
      const next = await client.callTool({ name: 'run_code', arguments: { code: 'return await tools.quick_tool();' } });
      expect(next.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('so does a script on a runtime an unchanged reload retired before the change (review)', async () => {
    await stack.gateway.reload(configWith({ 'x-service-key': 'fifth' }));
    const outcome = await scriptAcross('third_read', openThirdGate, async () => {
      expect((await stack.gateway.reload(configWith({ 'x-service-key': 'fifth' }))).changed).toEqual([]);
      expect((await stack.gateway.reload(configWith({ 'x-service-key': 'sixth' }))).changed.length).toBeGreaterThan(0);
    });
    expect(outcome).toEqual({ seen: 'configuration_reloaded', quickSent: false });
  });

  it('a direct call in flight across an unchanged reload and then a replacing one still finishes (review: its client was closed with the middle runtime)', async () => {
    await stack.gateway.reload(configWith({ 'x-service-key': 'seventh' }));
    let openLate!: () => void;
    const late = new Promise<void>((resolve) => (openLate = resolve));
    lateGate = late;
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      const slow = client.callTool({ name: 'late_tool', arguments: {} });
      await waitFor('late_tool at the upstream', () => stack.fake!.received.some((r) => r.method === 'tools/call' && r.params?.name === 'late_tool'));
      expect((await stack.gateway.reload(configWith({ 'x-service-key': 'seventh' }))).changed).toEqual([]);
      expect((await stack.gateway.reload(configWith({ 'x-service-key': 'eighth' }))).upstreams).toEqual([{ name: 'cpzai', decision: 'replace' }]);
      // The middle runtime has nothing in flight and retires first; the call's runtime is still retiring.
      await new Promise((resolve) => setTimeout(resolve, 200));
      openLate();
      expect(await slow).toMatchObject({ content: text('late') });
    } finally {
      await client.close();
    }
  });
});
