/**
 * A stdio upstream whose process exits at start is respawned on `restart`'s backoff (minDelayMs, doubled
 * per further failure up to maxDelayMs), whatever asks for a reconnection: the health probe, which finds it
 * down every `health.intervalMs`, no longer respawns it ahead of the backoff (adversarial-upstream try-out:
 * respawned every 2 s forever, the probe's interval, whatever maxDelayMs said). The real gateway
 * (startGateway) and real child processes; each start is told by the process's stderr line, logged by the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../../upstream/replay/index.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { eventually } from '../../helpers/wait.ts';

const MIN_DELAY_MS = 200;
const MAX_DELAY_MS = 800;

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
      upstreams: [
        // The file's first upstream is an HTTP one: overrides merge by index.
        { name: 'replay', url: replay.url, forwardCredentials: false },
        {
          name: 'crashing',
          command: process.execPath,
          args: ['-e', 'console.error("starting"); process.exit(2)'],
          // A probe twice as often as the smallest delay: before, each found it down and respawned it.
          health: { intervalMs: 100 },
          restart: { minDelayMs: MIN_DELAY_MS, maxDelayMs: MAX_DELAY_MS },
        },
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

describe('a stdio upstream that exits at start', () => {
  it('is respawned after growing delays up to maxDelayMs, not at every health probe', async () => {
    const starts = () => logs.records('upstream stderr').filter((r) => r.upstream === 'crashing' && r.stderr === 'starting');
    const seen = await eventually(
      async () => starts().map((r) => r.time as number),
      (times) => times.length >= 6,
    );
    const gaps = seen.slice(1, 6).map((time, i) => time - seen[i]!);
    // Each gap is at least its delay (the spawn adds to it); the stderr line is read a little after each
    // spawn, so a tenth of slack. At 100 ms probes (and 250 ms onDemandMinIntervalMs) the gaps were about 300 ms.
    const delays = [MIN_DELAY_MS, 2 * MIN_DELAY_MS, 4 * MIN_DELAY_MS, MAX_DELAY_MS, MAX_DELAY_MS];
    gaps.forEach((gap, i) => expect(gap, `gap ${i + 1} of ${JSON.stringify(gaps)}`).toBeGreaterThanOrEqual(0.9 * delays[i]!));
  });
});
