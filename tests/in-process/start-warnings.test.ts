/**
 * Warnings a start gives about a configuration that works but may not do what its operator meant: the
 * demo stack's public secrets (config/cpzai.yaml, docker-compose.yml, the example configurations' key secrets) in use
 * on a bind others can reach; API key tokens and secrets short enough to guess (security try-out).
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

describe('configured API keys', () => {
  const apiKeys = [
    { name: 'copied', key: 'cpz_demo_full', secret: 'demo-secret-full', scopes: ['a'] },
    { name: 'short', token: 'z', scopes: ['a'] },
    { name: 'own', key: 'ops', secret: 'an-operator-secret-0123456789abcdef', scopes: ['a'] },
  ];
  it('warns of a demo secret on a bind others can reach, and of a token or secret under 16 characters, naming the keys', async () => {
    const gateway = inProcessGateway({ listen: { host: '0.0.0.0' }, credentials: { apiKeys } }, { fake: { tools: [] } });
    try {
      const records = gateway.logs.records();
      expect(records.filter((r) => /the demo stack's public value/.test(String(r.msg)))).toEqual([
        expect.objectContaining({ keys: ['console.adminToken (GATEWAY_CONSOLE_ADMIN_TOKEN)', "credentials.apiKeys copied's secret"] }),
      ]);
      expect(records.filter((r) => /can be guessed/.test(String(r.msg)))).toEqual([expect.objectContaining({ keys: ["short's token"] })]);
    } finally {
      await gateway.close();
    }
  });

  it('says nothing of the demo secret on loopback', async () => {
    const gateway = inProcessGateway({ listen: { host: '127.0.0.1' }, credentials: { apiKeys: [apiKeys[0]!, apiKeys[2]!] } }, { fake: { tools: [] } });
    try {
      expect(gateway.logs.records().filter((r) => /public value|can be guessed/.test(String(r.msg)))).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
