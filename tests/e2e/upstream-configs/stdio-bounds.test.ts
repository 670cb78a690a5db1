/**
 * What a stdio upstream writes is bounded: a process writing on stdout without a newline (the SDK gathers
 * a message until its newline, up to its maxBufferSize, which is set to the same bound) is stopped past
 * 16 x limits.resultBytes and /readyz says why; a stderr line is logged cut at 2,000 characters and the
 * rest of it dropped unread (readline held all of it). The real gateway (startGateway) and real child processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../../upstream/replay/index.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { eventually } from '../../helpers/wait.ts';

const FLOOD = 'const b = Buffer.alloc(65536, 120); setInterval(() => process.stdout.write(b), 1);';
const SHOUT = "process.stderr.write('y'.repeat(100000)); process.stderr.write('\\nsecond line\\n'); setTimeout(() => process.exit(3), 100);";

let gateway: RunningGateway;
let replay: ReplayUpstream;
const logs = new LogCapture();
beforeAll(async () => {
  replay = await startReplayUpstream({ tools: [{ name: 'ping', inputSchema: { type: 'object' } }] });
  const config = loadConfig({
    env: {},
    overrides: {
      listen: { port: 0 },
      anonymous: true,
      limits: { resultBytes: 65536 },
      upstreams: [
        // The file's first upstream is an HTTP one: overrides merge by index.
        { name: 'replay', url: replay.url, forwardCredentials: false },
        { name: 'flooding', command: process.execPath, args: ['-e', FLOOD] },
        { name: 'shouting', command: process.execPath, args: ['-e', SHOUT] },
      ],
    },
  });
  delete config.scopes.endpoint;
  gateway = await startGateway(config, { logDestination: logs });
});
afterAll(async () => {
  await gateway?.close();
  await replay?.close();
});

describe('a stdio upstream that writes without end', () => {
  it('is stopped once its stdout holds more than 16 x limits.resultBytes without a newline, and /readyz says so', async () => {
    const body = await eventually(
      async () => (await (await fetch(`${gateway.url}/readyz`)).json()) as { reasons?: string[] },
      (b) => b.reasons?.some((r) => r.startsWith('upstream flooding: down')) === true,
    );
    expect(body.reasons!.find((r) => r.startsWith('upstream flooding: down'))).toContain(
      'the process was stopped: it wrote more than 1048576 bytes on stdout without a newline (16 x limits.resultBytes)',
    );
  });

  it('has a long stderr line logged cut, and the next line logged whole', async () => {
    const lines = await eventually(
      async () => logs.records('upstream stderr').filter((r) => r.upstream === 'shouting'),
      (found) => found.some((r) => r.stderr === 'second line'),
    );
    const first = lines[0]!.stderr as string;
    expect(first).toBe(`${'y'.repeat(2000)}…`);
    expect(lines[1]!.stderr).toBe('second line');
  });
});
