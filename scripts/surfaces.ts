/**
 * `npm run surfaces`: the size of what each endpoint advertises. Starts the reference stack (platform,
 * CPZAI upstream, gateway with config/cpzai.yaml) on free loopback ports, asks tools/list of `/mcp` and
 * `/mcp/compact` with the three demo keys in both eras (raw JSON-RPC, the bytes a client receives),
 * prints a markdown table of tools and bytes of the tools/list `result` object, and the compact/full
 * byte ratio for the full key (issue 8 target: at most 45%). Writes bench/results/surfaces.json.
 */
import { loadConfig } from '../config/load.ts';
import { startGateway } from '../gateway/gateway.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';
import { DEMO_KEYS, DEMO_KEY_NAMES, type DemoKey } from '../bench/expected-catalogues.ts';
import { table, writeResult } from '../bench/results.ts';
import { ERAS, rpcCall, sendCall, type Era } from '../bench/rpc-requests.ts';
import { parseCommandLine } from '../gateway/cli/args.ts';

parseCommandLine({
  usage: `
Usage: npm run surfaces (tsx scripts/surfaces.ts)

Starts the reference stack on free loopback ports, asks tools/list of /mcp and /mcp/compact with the
three demo keys in both protocol eras, prints tools and bytes per endpoint, and writes
bench/results/surfaces.json. Exit 1 when the compact surface misses its size target.

Options:
  -h, --help   show this help
`,
  options: {},
});

const ENDPOINTS = ['/mcp', '/mcp/compact'] as const;
const TARGET_RATIO = 0.45;

interface Row {
  endpoint: (typeof ENDPOINTS)[number];
  key: DemoKey;
  tools: number;
  /** Bytes of the JSON tools/list `result`, per era. */
  bytes: Record<Era, number>;
}

const platform = await startPlatform({ port: 0 });
const upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
const gateway = await startGateway(
  loadConfig({
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ url: upstream.url }],
      scopes: { endpoint: `${platform.url}/v1/me` },
      log: { level: 'silent' },
    },
  }),
);

try {
  const rows: Row[] = [];
  for (const endpoint of ENDPOINTS) {
    for (const key of DEMO_KEY_NAMES) {
      const bytes = {} as Record<Era, number>;
      let tools = -1;
      for (const era of ERAS) {
        const { status, answer } = await sendCall(rpcCall(era, `${gateway.url}${endpoint}`, DEMO_KEYS[key], 'tools/list'));
        const result = answer?.result as { tools?: unknown[] } | undefined;
        if (status !== 200 || !Array.isArray(result?.tools))
          throw new Error(`${endpoint} ${key} ${era}: tools/list failed (HTTP ${status}) ${JSON.stringify(answer?.error ?? '')}`);
        if (tools >= 0 && tools !== result.tools.length) throw new Error(`${endpoint} ${key}: the eras list different tools`);
        tools = result.tools.length;
        bytes[era] = Buffer.byteLength(JSON.stringify(result));
      }
      rows.push({ endpoint, key, tools, bytes });
    }
  }

  const full = (endpoint: Row['endpoint'], era: Era) => rows.find((r) => r.endpoint === endpoint && r.key === 'full')!.bytes[era];
  const ratios = Object.fromEntries(ERAS.map((era) => [era, full('/mcp/compact', era) / full('/mcp', era)])) as Record<Era, number>;
  const pass = ERAS.every((era) => ratios[era] <= TARGET_RATIO);

  const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
  console.log(
    table(
      ['endpoint', 'key', 'tools', 'bytes (2026-07-28)', 'bytes (2025-11-25)'],
      rows.map((r) => [r.endpoint, r.key, r.tools, r.bytes.modern.toLocaleString('en-US'), r.bytes.legacy.toLocaleString('en-US')]),
    ),
  );
  console.log(
    `\nfull key, /mcp/compact vs /mcp bytes: ${pct(ratios.modern)} (2026-07-28), ${pct(ratios.legacy)} (2025-11-25); target <= ${pct(TARGET_RATIO)}: ${pass ? 'pass' : 'MISS'}`,
  );
  const path = writeResult('surfaces', {
    measuredWith: 'raw JSON-RPC tools/list per era; bytes = JSON of the result object as received',
    rows,
    fullKeyCompactRatio: ratios,
    target: { maxRatio: TARGET_RATIO, pass },
  });
  console.log(`(results: ${path})`);
  process.exitCode = pass ? 0 : 1;
} finally {
  try {
    await gateway.close();
  } finally {
    try {
      await upstream.close();
    } finally {
      await platform.close();
    }
  }
}
