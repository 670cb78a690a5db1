/**
 * Warnings a start gives about a configuration that works but may not do what its operator meant: the
 * gateway's own API keys (credentials.apiKeys) forwarded to upstreams (forwardCredentials, true by
 * default), where a server that receives one can act as that caller at the gateway (try-out).
 */
import { describe, expect, it } from 'vitest';
import { inProcessGateway } from '../helpers/in-process.ts';

const API_KEYS = [{ name: 'alice', key: 'k_alice', secret: 'alice-secret-0123', scopes: ['a'] }];
const FORWARDED = /credentials\.apiKeys credentials callers present are forwarded to/;

describe('credentials.apiKeys and forwardCredentials', () => {
  it('names the upstreams that are sent the gateway’s own API keys', async () => {
    const gateway = inProcessGateway({ credentials: { apiKeys: API_KEYS } }, { fake: { tools: [] } });
    try {
      const warned = gateway.logs.records().filter((r) => FORWARDED.test(String(r.msg)));
      expect(warned).toEqual([expect.objectContaining({ upstreams: ['fake'] })]);
      expect(JSON.stringify(warned)).not.toContain('alice-secret');
    } finally {
      await gateway.close();
    }
  });

  it('says nothing when no upstream receives them', async () => {
    const gateway = inProcessGateway({ credentials: { apiKeys: API_KEYS }, upstreams: [{ forwardCredentials: false }] }, { fake: { tools: [] } });
    try {
      expect(gateway.logs.records().filter((r) => FORWARDED.test(String(r.msg)))).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
