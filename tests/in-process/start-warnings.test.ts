/**
 * Warnings a start gives about a configuration that works but may not do what its operator meant: the
 * demo stack's public secrets (config/cpzai.yaml, docker-compose.yml) in use on a bind others can reach.
 */
import { describe, expect, it } from 'vitest';
import { inProcessGateway } from '../helpers/in-process.ts';

describe("the demo stack's public secrets (deployment try-out)", () => {
  const DEMO = /the demo stack's public value/;
  it('warns when the demo console token and cache key are in use on a bind others can reach, naming the keys', async () => {
    const gateway = inProcessGateway(
      { listen: { host: '0.0.0.0' }, console: { adminToken: 'demo-secret-console-admin' }, cache: { key: 'demo-cache-key-for-compose-only-0123456789' } },
      { fake: { tools: [] } },
    );
    try {
      const warned = gateway.logs.records().filter((r) => DEMO.test(String(r.msg)));
      expect(warned).toEqual([expect.objectContaining({ keys: ['console.adminToken (GATEWAY_CONSOLE_ADMIN_TOKEN)', 'cache.key (GATEWAY_CACHE_KEY)'] })]);
    } finally {
      await gateway.close();
    }
  });

  it('says nothing on loopback, or with secrets of the operator’s own', async () => {
    for (const config of [
      { listen: { host: '127.0.0.1' }, console: { adminToken: 'demo-secret-console-admin' } },
      { listen: { host: '0.0.0.0' }, console: { adminToken: 'an-operator-console-token-0123' } },
    ]) {
      const gateway = inProcessGateway(config, { fake: { tools: [] } });
      try {
        expect(gateway.logs.records().filter((r) => DEMO.test(String(r.msg)))).toEqual([]);
      } finally {
        await gateway.close();
      }
    }
  });
});
