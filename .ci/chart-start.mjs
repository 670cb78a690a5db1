// Starts the gateway exactly as the chart's rendered Deployment would run it, for .ci/chart.sh:
//
//   node .ci/chart-start.mjs <rendered.yaml>
//
// The ConfigMap's files are laid out as the kubelet lays out a ConfigMap volume (a timestamped folder,
// `..data` pointing at it, each file a symlink through `..data`) at a folder standing for the mount
// path; the container's args run with the container's env (`value` entries as rendered; a secretKeyRef
// is not set, as with its key absent from an optional Secret). Two things differ from a pod, on
// purpose: GATEWAY_LISTEN_PORT (a free loopback port, not 3000; GATEWAY_METRICS_PORT too) and GATEWAY_UPSTREAMS_0_URL (the
// project's reference MCP server, started here: the chart's default upstream is a cluster name).
// Then, as the kubelet would: the startup and liveness probe (/healthz) and the readiness probe
// (/readyz, until `{"status":"ready"}`), each with a pod-IP Host header; then SIGTERM, which must end
// the process with status 0 within the rendered terminationGracePeriodSeconds.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const [rendered] = process.argv.slice(2);
const objects = parseAllDocuments(readFileSync(rendered, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const deployment = objects.find((o) => o.kind === 'Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const configVolume = pod.volumes.find((v) => v.configMap);
const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configVolume.configMap.name);
const mount = container.volumeMounts.find((m) => m.name === configVolume.name).mountPath;

// The ConfigMap volume, as the kubelet's AtomicWriter writes it.
const root = mkdtempSync(join(tmpdir(), 'chart-start-'));
const stamp = `..${new Date().toISOString().replace(/[-T:]/g, '_').replace('Z', '')}000000`;
mkdirSync(join(root, stamp));
for (const [name, text] of Object.entries(configMap.data)) writeFileSync(join(root, stamp, name), text);
symlinkSync(stamp, join(root, '..data'));
for (const name of Object.keys(configMap.data)) symlinkSync(join('..data', name), join(root, name));
const args = container.args.map((arg) => (arg.startsWith(`${mount}/`) ? join(root, arg.slice(mount.length + 1)) : arg));

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
const log = (line) => console.log(`[chart-start] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function get(port, path) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: `10.244.1.17:${container.ports[0].containerPort}` }, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

const children = [];
const stopAll = () => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
process.on('exit', () => {
  stopAll();
  rmSync(root, { recursive: true, force: true });
});

const upstreamPort = await freePort();
const upstream = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'upstream/server/main.ts'], {
  env: { ...process.env, HOST: '127.0.0.1', UPSTREAM_PORT: String(upstreamPort), PLATFORM_URL: 'http://127.0.0.1:9' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
children.push(upstream);

const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_') && name !== 'REDIS_URL'));
for (const entry of container.env ?? []) if ('value' in entry) env[entry.name] = entry.value;
const port = await freePort();
env.GATEWAY_LISTEN_PORT = String(port);
env.GATEWAY_UPSTREAMS_0_URL = `http://127.0.0.1:${upstreamPort}/mcp`;
// The chart's metrics port (9464 by default) is a pod's own; here a free one, beside other runs.
const metricsPort = container.ports.find((p) => p.name === 'metrics') ? await freePort() : undefined;
if (metricsPort !== undefined) env.GATEWAY_METRICS_PORT = String(metricsPort);
log(`config: ${join(root, 'gateway.yaml')} -> ${join(root, '..data', 'gateway.yaml')}`);
log(
  `run: ${args.join(' ')} (env from the Deployment: ${(container.env ?? []).map((e) => e.name).join(', ')}; overridden: GATEWAY_LISTEN_PORT, GATEWAY_UPSTREAMS_0_URL${metricsPort !== undefined ? ', GATEWAY_METRICS_PORT' : ''})`,
);
const [command, ...rest] = args;
const gateway = spawn(command === 'node' ? process.execPath : command, rest, { env, stdio: ['ignore', 'pipe', 'inherit'] });
children.push(gateway);
let output = '';
gateway.stdout.on('data', (chunk) => (output += chunk));

const deadline = Date.now() + 60_000;
let ready;
while (Date.now() < deadline && gateway.exitCode === null) {
  const answer = await get(port, '/readyz');
  if (answer.status === 200 && JSON.parse(answer.body).status === 'ready') {
    ready = answer;
    break;
  }
  await sleep(250);
}
if (!ready) {
  log(`FAILED: /readyz never answered ready (exit ${gateway.exitCode}); gateway output:\n${output.slice(-4000)}`);
  process.exit(1);
}
const health = await get(port, '/healthz');
log(`/readyz ${ready.status} ${ready.body}; /healthz ${health.status} ${health.body} (Host: a pod IP)`);
if (health.status !== 200) process.exit(1);

const grace = pod.terminationGracePeriodSeconds;
const started = Date.now();
gateway.kill('SIGTERM');
await sleep(300);
const draining = await get(port, '/readyz');
log(`after SIGTERM: /readyz ${draining.status} ${draining.body}`);
const exit = await Promise.race([once(gateway, 'exit'), sleep(grace * 1000).then(() => ['timeout'])]);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
log(`exit ${exit[0]} after ${seconds} s (terminationGracePeriodSeconds ${grace})`);
upstream.kill('SIGTERM');
process.exit(exit[0] === 0 && draining.status === 503 ? 0 : 1);
