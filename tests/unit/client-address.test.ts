/**
 * The client address every per-address budget and the access log count a request under
 * (gateway/http/client-address.ts): the socket's peer unless it is a trusted proxy
 * (`security.trustedProxies`), then the right-most X-Forwarded-For entry that is not itself one.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addressBucket } from '../../gateway/auth/attempt-budgets.ts';
import { clientAddressOf } from '../../gateway/http/client-address.ts';
import { ConfigError, loadConfig } from '../../config/load.ts';

const request = (peer: string, forwardedFor?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;
const behind = (...trustedProxies: string[]) => clientAddressOf({ security: { allowedHosts: [], allowedOrigins: [], trustedProxies } });

describe('clientAddressOf', () => {
  it('is the socket peer, whatever X-Forwarded-For says, when no proxy is trusted', () => {
    const address = behind();
    expect(address(request('203.0.113.7', '198.51.100.1'))).toBe('203.0.113.7');
    expect(address(request('::ffff:203.0.113.7', '198.51.100.1'))).toBe('203.0.113.7');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(behind('10.0.0.0/8')(request('203.0.113.7', '198.51.100.1'))).toBe('203.0.113.7');
  });

  it('takes the right-most entry that is not a trusted proxy: what a caller wrote to its left is ignored', () => {
    const address = behind('10.0.0.0/8', '127.0.0.1');
    expect(address(request('10.1.2.3', '198.51.100.1'))).toBe('198.51.100.1');
    expect(address(request('10.1.2.3', 'forged.1, 192.0.2.99, 198.51.100.1'))).toBe('198.51.100.1');
    // Two proxies (an Ingress behind a load balancer): both skipped.
    expect(address(request('127.0.0.1', '192.0.2.99, 198.51.100.1, 10.9.9.9'))).toBe('198.51.100.1');
    // Header lines given twice are one list.
    expect(address(request('10.1.2.3', ['192.0.2.99', '198.51.100.1']))).toBe('198.51.100.1');
    // Every entry a trusted proxy: the left-most.
    expect(address(request('10.1.2.3', '10.0.0.5, 10.0.0.6'))).toBe('10.0.0.5');
    // No header: the proxy itself.
    expect(address(request('10.1.2.3'))).toBe('10.1.2.3');
  });

  it('reads ports, brackets and IPv6 forms as one address each', () => {
    const address = behind('10.0.0.0/8', 'fd00::/8');
    expect(address(request('::ffff:10.1.2.3', '198.51.100.1:5678'))).toBe('198.51.100.1');
    expect(address(request('fd00::1', '[2001:DB8::1]:443'))).toBe('2001:db8::1');
    expect(address(request('10.1.2.3', '::ffff:198.51.100.1'))).toBe('198.51.100.1');
    // RFC 5952's one text for an IPv6 address, however it was written.
    expect(address(request('10.1.2.3', '2001:0db8:aaaa:0000:0000:0000:0000:0001'))).toBe('2001:db8:aaaa::1');
  });

  it('buckets an IPv6 client by its /64 and an IPv4 one by its address (addressBucket)', () => {
    expect(addressBucket('2001:db8:aaaa::1')).toBe('2001:db8:aaaa::/64');
    expect(addressBucket('2001:db8:aaaa:0:ffff::9')).toBe('2001:db8:aaaa::/64');
    expect(addressBucket('2001:db8:aaaa:1::9')).toBe('2001:db8:aaaa:1::/64');
    expect(addressBucket('198.51.100.1')).toBe('198.51.100.1');
  });

  it('ends the walk at the proxy that sent an entry that is no address', () => {
    expect(behind('10.0.0.0/8')(request('10.1.2.3', '198.51.100.1, unknown'))).toBe('10.1.2.3');
    expect(behind('10.0.0.0/8')(request('10.1.2.3', '198.51.100.1, 10.0.0.9, _hidden'))).toBe('10.1.2.3');
  });
});

describe('security.trustedProxies', () => {
  it('takes addresses and CIDR ranges of both families', () => {
    const config = loadConfig({ env: {}, overrides: { security: { trustedProxies: ['10.0.0.0/8', '192.0.2.1', 'fd00::/8', '::1'] } } });
    expect(config.security.trustedProxies).toEqual(['10.0.0.0/8', '192.0.2.1', 'fd00::/8', '::1']);
    expect(loadConfig({ env: { GATEWAY_SECURITY_TRUSTED_PROXIES: '10.0.0.0/8,172.16.0.0/12' } }).security.trustedProxies).toEqual([
      '10.0.0.0/8',
      '172.16.0.0/12',
    ]);
  });

  it('refuses an entry that is neither, naming it', () => {
    for (const entry of ['nginx', '10.0.0.0/33', '10.0.0/8', 'fd00::/129', '10.0.0.0/8/1', '*']) {
      const load = () => loadConfig({ env: {}, overrides: { security: { trustedProxies: ['127.0.0.1', entry] } } });
      expect(load, entry).toThrow(ConfigError);
      expect(load, entry).toThrow(`security.trustedProxies[1]: "${entry}" is neither an IP address nor a CIDR range (such as 10.0.0.0/8 or fd00::/8)`);
    }
  });

  it('refuses a range that trusts every address (any caller would choose its own with X-Forwarded-For)', () => {
    for (const entry of ['0.0.0.0/0', '::/0']) {
      const load = () => loadConfig({ env: {}, overrides: { security: { trustedProxies: [entry] } } });
      expect(load, entry).toThrow(`security.trustedProxies[0]: "${entry}" trusts every address`);
    }
    expect(loadConfig({ env: {}, overrides: { security: { trustedProxies: ['0.0.0.0/1'] } } }).security.trustedProxies).toEqual(['0.0.0.0/1']);
  });
});
