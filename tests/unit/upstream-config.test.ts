/**
 * The upstream keys of the configuration: stdio commands with `${VAR}` and `${VAR:-default}` from the
 * environment, URLs checked after interpolation, every example config loading as committed.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const example = (name: string) => `${root}config/${name}.yaml`;

describe('upstream configuration', () => {
  it('loads every example config as committed, without any environment', () => {
    const upstreams = ['cpzai', 'everything', 'filesystem', 'replay', 'three-upstreams'].map((name) =>
      loadConfig({ path: example(name), env: {} }).upstreams.map((u) => u.name),
    );
    expect(upstreams).toEqual([['cpzai'], ['everything'], ['filesystem'], ['replay'], ['cpzai', 'everything', 'filesystem']]);
  });

  it('fills ${VAR:-default} in stdio args from the environment, else from the default', () => {
    expect(loadConfig({ path: example('filesystem'), env: {} }).upstreams[0]!.args.at(-1)).toBe('/tmp');
    expect(loadConfig({ path: example('filesystem'), env: { FILESYSTEM_ROOT: '/srv/files' } }).upstreams[0]!.args.at(-1)).toBe('/srv/files');
  });

  it('takes a whole stdio upstream from GATEWAY_* variables, args as JSON', () => {
    const config = loadConfig({
      path: example('filesystem'),
      env: {
        GATEWAY_UPSTREAMS_0_COMMAND: 'npx',
        GATEWAY_UPSTREAMS_0_ARGS: '["-y","some-mcp-server","${HOME}"]',
        HOME: '/home/me',
        GATEWAY_UPSTREAMS_0_RESTART_MAX_DELAY_MS: '5000',
      },
    });
    expect(config.upstreams[0]).toMatchObject({
      command: 'npx',
      args: ['-y', 'some-mcp-server', '/home/me'],
      restart: { minDelayMs: 200, maxDelayMs: 5000, stableAfterMs: 10000 },
    });
  });

  it('checks an upstream URL once its variables are in, naming the key', () => {
    expect(
      loadConfig({ path: example('everything'), env: { GATEWAY_UPSTREAMS_0_URL: '${EVERYTHING_URL:-http://everything:3101/mcp}' } }).upstreams[0]!.url,
    ).toBe('http://everything:3101/mcp');
    expect(() => loadConfig({ path: example('everything'), env: { GATEWAY_UPSTREAMS_0_URL: 'everything:3101' } })).toThrow(
      /upstreams\[0\]\.url: must be an http\(s\) URL/,
    );
    expect(() => loadConfig({ path: example('everything'), env: { GATEWAY_UPSTREAMS_0_URL: '${NOT_SET}' } })).toThrow(
      /upstreams\[0\]\.url: environment variable NOT_SET is not set/,
    );
  });

  it('refuses a restart ceiling below its first delay', () => {
    expect(() =>
      loadConfig({ path: example('filesystem'), env: { GATEWAY_UPSTREAMS_0_RESTART_MAX_DELAY_MS: '100', GATEWAY_UPSTREAMS_0_RESTART_MIN_DELAY_MS: '500' } }),
    ).toThrow(/upstreams\[0\]\.restart\.maxDelayMs/);
  });
});
