/**
 * The gateway's command line (`--help` prints it):
 *
 *   node --import ./scripts/register-ts.mjs gateway/main.ts [serve] [--config FILE]     run the gateway until SIGINT/SIGTERM (graceful close;
 *                                                   SIGTERM drains first: shutdown.drainMs); SIGHUP (and with reload.watch a change of FILE) reloads
 *   node --import ./scripts/register-ts.mjs gateway/main.ts tools [--config FILE] [--url URL] (--key ID --secret SECRET | --bearer TOKEN) [--json]
 *   node --import ./scripts/register-ts.mjs gateway/main.ts pins (list | diff TOOL | approve TOOL --digest D | approve --all) [--config FILE] [--url URL] [--admin-token TOKEN] [--json]
 *
 * The configuration: `--config`, else GATEWAY_CONFIG, else config/cpzai.yaml; GATEWAY_* variables override.
 * Exit status: 0 done, 1 failed at run time, 2 bad command line or configuration (a message naming the key).
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfig } from '../config/load.ts';
import { driveReloads } from './cli/reload-driver.ts';
import { parseCommandLine, usageFailure, UsageError } from './cli/args.ts';
import { formatViews, gatewayBaseUrl, servedPaths } from './cli/tools-command.ts';
import { PinsCommandError, runPinsCommand } from './cli/pins-command.ts';
import { startGateway } from './gateway.ts';
import { credentialHeaders, credentialView } from './ops/credential-view.ts';

const USAGE = `
Usage:
  node --import ./scripts/register-ts.mjs gateway/main.ts [serve] [--config FILE]
  node --import ./scripts/register-ts.mjs gateway/main.ts tools [--config FILE] [--url URL] (--key ID --secret SECRET | --bearer TOKEN) [--json]
  node --import ./scripts/register-ts.mjs gateway/main.ts pins (list | diff TOOL | approve TOOL --digest D | approve --all) [--config FILE] [--url URL] [--admin-token TOKEN] [--json]

Commands:
  serve   run the gateway (the default) until SIGINT or SIGTERM, which close it gracefully (SIGTERM
          first drains: /readyz answers 503 for shutdown.drainMs while requests are still served);
          SIGHUP reloads the configuration (reload.watch: also when the file changes); send it to
          the node process itself: \`node --import ./scripts/register-ts.mjs gateway/main.ts\` runs in one (npm does
          not pass SIGHUP on)
  tools   print the tools a credential sees on each endpoint (/mcp, /mcp/compact), then exit;
          asks the gateway at --url, or starts one from the configuration on a free port
  pins    tool definition pins of a running gateway (its console API): list them, diff TOOL
          (the pinned and the waiting definition, and its digest), approve TOOL --digest D (the
          definition you reviewed becomes the pin, on every replica; refused if it changed since)
          or --all (every waiting definition as it is now); TOOL as callers name it, or <upstream>/<tool>

Options:
  -c, --config FILE   gateway configuration (YAML); default: $GATEWAY_CONFIG, else config/cpzai.yaml
      --url URL       tools, pins: a running gateway's base URL, e.g. http://127.0.0.1:3000
                      (pins: default http://127.0.0.1:<listen.port> of the configuration, so
                      --config or --url picks the gateway; pins says on stderr which it asks)
      --key ID        tools: the key credential (sent in credentials.keyHeader)
      --secret SECRET tools: its secret (credentials.secretHeader)
      --bearer TOKEN  tools: a bearer token (Authorization: Bearer)
      --json          tools, pins: print JSON instead of a table
      --admin-token T pins: the console's admin token; default: console.adminToken of the configuration
      --digest D      pins approve TOOL: the waiting digest pins diff showed (or its first 12+ hex digits)
      --all           pins approve: every waiting definition
  -h, --help          show this help

Environment: GATEWAY_* variables override configuration keys (docs/config.md), e.g. GATEWAY_LISTEN_PORT=8080.
`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  url: { type: 'string' },
  key: { type: 'string' },
  secret: { type: 'string' },
  bearer: { type: 'string' },
  json: { type: 'boolean' },
  'admin-token': { type: 'string' },
  all: { type: 'boolean' },
  digest: { type: 'string' },
} as const;

async function main(): Promise<void> {
  const { values, positionals } = parseCommandLine({ usage: USAGE, options: OPTIONS, allowPositionals: true });
  const [command = 'serve', ...rest] = positionals;
  try {
    if (command !== 'serve' && command !== 'tools' && command !== 'pins') throw new UsageError(`unknown command "${command}" (serve, tools or pins)`);
    if (command !== 'pins' && rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    const foreign = (names: readonly (keyof typeof values)[], owner: string) => {
      const found = names.find((name) => values[name] !== undefined);
      if (found) throw new UsageError(`--${found} belongs to the ${owner} command`);
    };
    if (command !== 'tools') foreign(['key', 'secret', 'bearer'], 'tools');
    if (command !== 'pins') foreign(['admin-token', 'all', 'digest'], 'pins');
    if (command === 'serve') foreign(['url', 'json'], 'tools or pins');
    if (command === 'tools' && !values.bearer && !(values.key && values.secret)) {
      throw new UsageError('tools needs a credential: --key and --secret, or --bearer');
    } else if (values.url !== undefined) {
      gatewayBaseUrl(values.url);
    }
  } catch (error) {
    usageFailure(USAGE, error);
  }
  const config = loadConfig({ path: values.config });
  if (command === 'tools') return tools(config, values);
  if (command === 'pins') return pins(config, configSource(values.config), rest, values);
  await serve(config, values.config ?? process.env.GATEWAY_CONFIG ?? DEFAULT_CONFIG_PATH);
}

async function tools(
  config: ReturnType<typeof loadConfig>,
  values: { url?: string; key?: string; secret?: string; bearer?: string; json?: boolean },
): Promise<void> {
  const headers = credentialHeaders(config.credentials, values);
  // Without --url: a gateway of our own on a free loopback port, quiet, closed when done (no sign-in: it only answers this command).
  const gateway = values.url
    ? undefined
    : await startGateway({
        ...config,
        listen: { host: '127.0.0.1', port: 0 },
        metrics: { ...config.metrics, port: undefined },
        log: { level: 'silent' },
        oauth: { ...config.oauth, mode: 'off' },
      });
  try {
    const views = await credentialView(values.url ?? gateway!.url, servedPaths(config), headers);
    process.stdout.write(values.json ? `${JSON.stringify(views, null, 2)}\n` : formatViews(views));
    if (views.some((v) => v.error !== undefined)) process.exitCode = 1;
    if (!values.url && views.some((v) => v.error?.includes('unreachable')))
      process.stderr.write("the config's upstream is not running: start it (npm start runs the reference one), or pass --url of a running gateway\n");
  } finally {
    await gateway?.close();
  }
}

/** Which configuration file was loaded, as the `pins` line names it (relative to the working directory when inside it). */
function configSource(flag: string | undefined): string {
  const path = flag ?? process.env.GATEWAY_CONFIG ?? DEFAULT_CONFIG_PATH;
  const shown = relative(process.cwd(), resolve(path));
  const named = shown && !shown.startsWith('..') && !isAbsolute(shown) ? shown : path;
  if (flag !== undefined) return named;
  return process.env.GATEWAY_CONFIG !== undefined ? `${named} from GATEWAY_CONFIG` : `${named}, the default configuration`;
}

/** The environment variables that override the configuration's listen address (config/load.ts), named when they did. */
const LISTEN_ENV = ['GATEWAY_LISTEN_HOST', 'GATEWAY_LISTEN_PORT'] as const;

async function pins(
  config: ReturnType<typeof loadConfig>,
  source: string,
  args: readonly string[],
  values: { url?: string; json?: boolean; all?: boolean; digest?: string; 'admin-token'?: string },
): Promise<void> {
  const adminToken = values['admin-token'] ?? config.console.adminToken;
  try {
    if (!adminToken) throw new UsageError('pins needs the console admin token: --admin-token, or console.adminToken in the configuration');
    const host = config.listen.host === '0.0.0.0' || config.listen.host === '::' ? '127.0.0.1' : config.listen.host;
    const url = values.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.listen.port}`;
    // Said before anything is asked: without --config the demo configuration's listen port and admin token
    // were used silently, and whatever gateway listened there answered (try-out).
    process.stderr.write(
      values.url !== undefined
        ? `pins: gateway ${url} (--url)\n`
        : `pins: gateway ${url} (listen of ${source}${LISTEN_ENV.some((name) => process.env[name] !== undefined) ? `, with ${LISTEN_ENV.filter((name) => process.env[name] !== undefined).join(' and ')} from the environment` : ''}; --url or --config picks another)\n`,
    );
    process.stdout.write(await runPinsCommand({ url, adminToken }, args, { all: values.all, digest: values.digest, json: values.json }));
  } catch (error) {
    if (error instanceof PinsCommandError) {
      process.stderr.write(`pins: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    usageFailure(USAGE, error);
  }
}

async function serve(config: ReturnType<typeof loadConfig>, path: string): Promise<void> {
  const gateway = await startGateway(config);
  driveReloads(gateway, {
    load: () => loadConfig({ path }),
    path,
    config,
    report: (line) => process.stderr.write(`${line}\n`),
  });
  // Announced once SIGHUP and the file watch are armed: a signal or an edit right after this line
  // reloads instead of killing the process or going unseen. SIGHUP must reach this process: npm does
  // not pass it on (`node --import <loader>` runs in one).
  // A wildcard bind is announced by a URL this machine can open, and said to be one (security try-out: 0.0.0.0 read as 127.0.0.1).
  const { host } = config.listen;
  const every = host === '0.0.0.0' || host === '::' ? `, bound to ${host}: every interface` : '';
  process.stderr.write(`gateway listening on ${gateway.url}/mcp (pid ${process.pid}: kill -HUP ${process.pid} reloads the configuration${every})\n`);
  let stopping = false;
  const stop = (signal: string) => {
    // A second signal while the close runs: exit now (a person pressing Ctrl-C again; a close stuck on a store that never answers).
    if (stopping) {
      process.stderr.write(`${signal} again: exiting now, without finishing the close\n`);
      process.exit(1);
    }
    stopping = true;
    // SIGTERM is an orchestrator's stop (Kubernetes, Docker): drain first (shutdown.drainMs). SIGINT is a person at a terminal.
    const drain = signal === 'SIGTERM';
    process.stderr.write(`${signal}: closing the gateway${drain ? ' (draining first for shutdown.drainMs, when set)' : ''}; send it again to exit at once\n`);
    gateway.close({ drain, reason: signal }).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`close failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  const busy = (error as { code?: unknown }).code === 'EADDRINUSE' ? ' (port busy: set GATEWAY_LISTEN_PORT, or listen.port in the config)' : '';
  process.stderr.write(`${error instanceof ConfigError ? error.message : `gateway failed: ${(error as Error).message ?? String(error)}${busy}`}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
