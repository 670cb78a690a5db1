/**
 * gateway/obs/audit.ts on its own: one JSON line per decision on its own destination, digests keyed
 * (stable under one key, different under another, independent of key order) and never the values.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../config/load.ts';
import { AUDIT_BUFFER_BYTES, canonicalJson, createAuditLog, SEARCH_TRAIL, type ToolDecision } from '../../gateway/obs/audit.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { createRuntime } from '../../gateway/runtime.ts';
import { LogCapture } from '../helpers/log-capture.ts';

const decision = (over: Partial<ToolDecision> = {}): ToolDecision => ({
  requestId: 'req-1',
  traceId: 'a'.repeat(32),
  credentialDigest: 'd'.repeat(64),
  client: { name: 'claude-code', version: '2.0' },
  surface: 'compact',
  via: 'call_tool',
  upstream: 'cpzai',
  tool: 'place_order',
  readOnly: false,
  outcome: 'refused_write_via_call_tool',
  reason: 'call_directly',
  arguments: { symbol: 'AAPL', quantity: 1 },
  durationMs: 1.234,
  ...over,
});

describe('audit log', () => {
  it('writes one event per decision with keyed digests and no argument values', async () => {
    const out = new LogCapture();
    const audit = createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: out });
    audit.record(decision());
    audit.record(decision({ arguments: { quantity: 1, symbol: 'AAPL' } }));
    await audit.close();
    const lines = out.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    const [event] = lines;
    expect(event).toMatchObject({
      event: 'tool_decision',
      requestId: 'req-1',
      traceId: 'a'.repeat(32),
      client: 'claude-code',
      clientVersion: '2.0',
      surface: 'compact',
      via: 'call_tool',
      upstream: 'cpzai',
      tool: 'place_order',
      readOnly: false,
      outcome: 'refused_write_via_call_tool',
      reason: 'call_directly',
      durationMs: 1.2,
    });
    expect(Date.parse(event.time)).not.toBeNaN();
    expect(event.credential).toMatch(/^[0-9a-f]{64}$/);
    expect(event.credential).not.toBe('d'.repeat(64));
    expect(event.arguments).toBe(lines[1].arguments);
    expect(out.text).not.toContain('AAPL');
    expect(Object.keys(event)).not.toContain('level');
  });

  it('keeps at most 256 characters of a string the caller chose: a huge tool or client name makes no huge line', async () => {
    const out = new LogCapture();
    const audit = createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: out });
    audit.record(decision({ tool: 't'.repeat(500_000), client: { name: 'c'.repeat(500_000), version: 'v'.repeat(1000) } }));
    await audit.close();
    expect(out.text.length).toBeLessThan(2000);
    expect(JSON.parse(out.text)).toMatchObject({ tool: `${'t'.repeat(256)}…`, client: `${'c'.repeat(256)}…`, clientVersion: `${'v'.repeat(256)}…` });
  });

  it('gives other digests under another key', async () => {
    const a = new LogCapture();
    const b = new LogCapture();
    createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: a }).record(decision());
    createAuditLog({ destination: 'off', digestKey: 'j'.repeat(32) }, { destination: b }).record(decision());
    const [ea, eb] = [JSON.parse(a.text), JSON.parse(b.text)];
    expect(ea.credential).not.toBe(eb.credential);
    expect(ea.arguments).not.toBe(eb.arguments);
  });

  it('without audit.digestKey, generates a key once: a live reload takes it over (same digests, no second warning)', () => {
    const [a, b, capture] = [new LogCapture(), new LogCapture(), new LogCapture()];
    const first = createAuditLog({ destination: 'off' }, { destination: a, log: pino(capture) });
    const reloaded = createAuditLog({ destination: 'off' }, { destination: b, log: pino(capture), generatedKey: first.generatedKey });
    first.record(decision());
    reloaded.record(decision());
    expect(first.generatedKey).toMatch(/^[0-9a-f]{64}$/);
    expect(reloaded.generatedKey).toBe(first.generatedKey);
    expect(JSON.parse(b.text)).toMatchObject({ credential: JSON.parse(a.text).credential, arguments: JSON.parse(a.text).arguments });
    expect(capture.records('audit.digestKey is not set')).toHaveLength(1);
    expect(createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: a }).generatedKey).toBeUndefined();
  });

  it('appends to a file destination, creating its folder', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'audit-')), 'nested', 'audit.log');
    const audit = createAuditLog({ destination: path, digestKey: 'k'.repeat(32) });
    audit.record(decision({ outcome: 'ok', reason: undefined }));
    await audit.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ outcome: 'ok', tool: 'place_order' });
  });

  it('refuses to start on a destination it cannot append to, naming audit.destination (no lost audit trail)', () => {
    const config = loadConfig({
      env: { GATEWAY_AUDIT_DESTINATION: '/proc/nu7/audit.jsonl' },
      overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }] },
    });
    // Without a digest key: the refusal alone, not the generated key's warning after it.
    const capture = new LogCapture();
    expect(() => createAuditLog({ ...config.audit, digestKey: undefined }, { log: pino(capture) })).toThrow(ConfigError);
    expect(capture.lines).toEqual([]);
    expect(() => createRuntime(config, { logger: pino({ level: 'silent' }) })).toThrow(
      /^invalid configuration: audit\.destination: cannot append to \/proc\/nu7\/audit\.jsonl: /,
    );
    // A folder where the file should be.
    expect(() => createAuditLog({ destination: mkdtempSync(join(tmpdir(), 'audit-')), digestKey: 'k'.repeat(32) })).toThrow(
      /audit\.destination: cannot append to/,
    );
  });

  it('logs at error (once a minute) and counts the lines a destination fails to write later (a full disk)', async () => {
    const capture = new LogCapture();
    const metrics = createMetrics();
    // /dev/full opens for appending; every write to it fails with ENOSPC.
    const audit = createAuditLog({ destination: '/dev/full', digestKey: 'k'.repeat(32) }, { log: pino(capture), metrics });
    const failures = async () => (await metrics.auditWriteErrors.get()).values[0]?.value ?? 0;
    audit.record(decision());
    await expect.poll(failures, { timeout: 10_000 }).toBe(1);
    // A second failure within the minute is counted, not logged again.
    audit.record(decision());
    await expect.poll(failures, { timeout: 10_000 }).toBe(2);
    await audit.close();
    expect(capture.records('audit: a write to audit.destination failed')).toHaveLength(1);
    const [line] = capture.records('audit: a write to audit.destination failed');
    expect(line).toMatchObject({ level: 50, destination: '/dev/full' });
    expect(String(line!.error)).toMatch(/ENOSPC/);
  });

  // SRE try-out: five lines held for a full disk vanished at a reload to a good destination, with no count and no line.
  it('counts and says the lines a failing destination still holds when it is closed (a reload, an exit)', async () => {
    const capture = new LogCapture();
    const metrics = createMetrics();
    const audit = createAuditLog({ destination: '/dev/full', digestKey: 'k'.repeat(32) }, { log: pino(capture), metrics });
    const failures = async () => (await metrics.auditWriteErrors.get()).values[0]?.value ?? 0;
    const dropped = async () => (await metrics.auditLinesDropped.get()).values[0]?.value ?? 0;
    audit.record(decision());
    await expect.poll(failures, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 4; i++) audit.record(decision());
    await audit.close();
    expect(await dropped()).toBe(5);
    expect(capture.records('audit: 5 lines held for a failing audit.destination were lost when it was closed')).toEqual([
      expect.objectContaining({ level: 50, destination: '/dev/full', lines: 5 }),
    ]);
  });

  it('counts nothing at close when the destination took every line', async () => {
    const capture = new LogCapture();
    const metrics = createMetrics();
    const file = join(mkdtempSync(join(tmpdir(), 'audit-close-')), 'audit.jsonl');
    const audit = createAuditLog({ destination: file, digestKey: 'k'.repeat(32) }, { log: pino(capture), metrics });
    for (let i = 0; i < 5; i++) audit.record(decision());
    await audit.close();
    expect((await metrics.auditLinesDropped.get()).values[0]?.value ?? 0).toBe(0);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(5);
  });

  it('holds at most AUDIT_BUFFER_BYTES of lines a destination does not take, then drops, counts and logs each line past it', async () => {
    const capture = new LogCapture();
    const metrics = createMetrics();
    const audit = createAuditLog({ destination: '/dev/full', digestKey: 'k'.repeat(32) }, { log: pino(capture), metrics });
    const dropped = async () => (await metrics.auditLinesDropped.get()).values[0]?.value ?? 0;
    const line = decision();
    const sample = new LogCapture();
    createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: sample }).record(line);
    await vi.waitFor(() => expect(sample.lines).toHaveLength(1));
    // Past the bound by 100 lines or more: each line past it is dropped, one count each.
    const lines = Math.ceil(AUDIT_BUFFER_BYTES / (sample.lines[0]!.length + 1)) + 100;
    for (let i = 0; i < lines; i++) audit.record(line);
    expect(await dropped()).toBeGreaterThanOrEqual(99);
    expect(await dropped()).toBeLessThan(lines);
    expect(capture.records('audit: a line was dropped')).toHaveLength(1);
    await audit.close();
  });

  it('takes its destination and digest key from the configuration, ${VAR} included', () => {
    const c = loadConfig({
      env: { GATEWAY_AUDIT_DESTINATION: 'stderr', AUDIT_KEY: 'from-the-environment-0123' },
      overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }], audit: { digestKey: '${AUDIT_KEY}' } },
    });
    expect(c.audit).toEqual({ destination: 'stderr', digestKey: 'from-the-environment-0123' });
    expect(() => loadConfig({ env: {}, overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }], audit: { digestKey: 'short' } } })).toThrow(
      /audit\.digestKey: must be at least 16 characters/,
    );
  });

  it('records nothing when off', () => {
    expect(createAuditLog({ destination: 'off' }).enabled).toBe(false);
  });

  it('canonicalises JSON key order at every depth', () => {
    expect(canonicalJson({ b: [{ y: 1, x: 2 }], a: null })).toBe('{"a":null,"b":[{"x":2,"y":1}]}');
    // What JSON.stringify writes, keys aside: undefined members dropped, undefined elements null, escapes kept.
    const value = { z: [1, undefined, 'a"\n', { q: undefined, p: [[], {}] }], y: true, x: -0.5 };
    expect(canonicalJson(value)).toBe(JSON.stringify({ x: -0.5, y: true, z: [1, null, 'a"\n', { p: [[], {}] }] }));
  });

  it('digests arguments nested deeper than the call stack (a tools/call may carry them before its limits are checked)', () => {
    const depth = 200_000;
    const deep = JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown;
    expect(canonicalJson(deep)).toHaveLength(2 * depth + 1);
  });

  it('links a call to the latest search of the same credential that returned the tool, within the trail bounds', async () => {
    const out = new LogCapture();
    const audit = createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: out });
    const mine = 'd'.repeat(64);
    audit.noteSearch({ credentialDigest: mine, requestId: 's-1', names: ['list_orders', 'place_order'] });
    audit.noteSearch({ credentialDigest: mine, requestId: 's-2', names: ['place_order', 'cancel_order'] });
    audit.noteSearch({ credentialDigest: 'e'.repeat(64), requestId: 's-other', names: ['get_profile'] });
    audit.record(decision());
    audit.record(decision({ tool: 'list_orders' }));
    audit.record(decision({ tool: 'get_profile' }));
    // Only the last SEARCH_TRAIL.perCredential searches stay: s-1 is pushed out by eight more.
    for (let i = 0; i < SEARCH_TRAIL.perCredential; i++) audit.noteSearch({ credentialDigest: mine, requestId: `s-more-${i}`, names: ['get_quote'] });
    audit.record(decision({ tool: 'list_orders' }));
    await audit.close();
    const events = out.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events[0].foundBySearch).toMatchObject({ requestId: 's-2', rank: 1 });
    expect(events[1].foundBySearch).toMatchObject({ requestId: 's-1', rank: 1 });
    expect(events[2].foundBySearch).toBeUndefined();
    expect(events[3].foundBySearch).toBeUndefined();
  });
});
