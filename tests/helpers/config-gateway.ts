import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/load.ts';
import { startGateway, type RunningGateway } from '../../gateway/gateway.ts';
import { LogCapture } from './log-capture.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A gateway started from one of the committed example configs, and what it logged. */
export interface ConfigGateway {
  gateway: RunningGateway;
  /** `${gateway.url}/mcp`. */
  mcpUrl: string;
  /** `${gateway.url}/mcp/compact`. */
  compactUrl: string;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * Loads `config/<name>.yaml` exactly as `gateway/main.ts --config` would, with `env` as the whole
 * environment (the suite's own GATEWAY_* variables never leak in) plus a free port, and starts it.
 */
export async function startConfigGateway(name: string, env: Record<string, string> = {}): Promise<ConfigGateway> {
  const config = loadConfig({ path: `${root}config/${name}.yaml`, env: { GATEWAY_LISTEN_PORT: '0', GATEWAY_LOG_LEVEL: 'info', ...env } });
  const logs = new LogCapture();
  const gateway = await startGateway(config, { logDestination: logs });
  return { gateway, mcpUrl: `${gateway.url}/mcp`, compactUrl: `${gateway.url}/mcp/compact`, logs, close: () => gateway.close() };
}

/** Any bearer token: a gateway with no scope source (no scopes.endpoint, no credentials.apiKeys) checks none. */
export const ANY_BEARER = { authorization: 'Bearer example-config-test' };
