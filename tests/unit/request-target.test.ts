/** The Host header read strictly (gateway/http/request-target.ts `readHost`, RFC 9110 §7.2). */
import { describe, expect, it } from 'vitest';
import { readHost } from '../../gateway/http/request-target.ts';

describe('readHost', () => {
  it('reads DNS names, dotted quads and bracketed IPv6, with an optional port, in lower case', () => {
    expect(readHost('localhost:3000')).toEqual({ hostname: 'localhost', port: 3000 });
    expect(readHost('MCP.Example.com')).toEqual({ hostname: 'mcp.example.com' });
    expect(readHost('127.0.0.1')).toEqual({ hostname: '127.0.0.1' });
    expect(readHost('[::1]:80')).toEqual({ hostname: '[::1]', port: 80 });
    expect(readHost('gateway_1:3000')).toEqual({ hostname: 'gateway_1', port: 3000 });
    expect(readHost('10.1.2.3:3000')).toEqual({ hostname: '10.1.2.3', port: 3000 });
    expect(readHost('api2.example.com')).toEqual({ hostname: 'api2.example.com' });
  });

  it('refuses user information, numeric forms other than a dotted quad, and what is no host, without quoting the value', () => {
    const refusals: Record<string, string> = {
      'key:secret@127.0.0.1:7700': 'it carries user information (user:password@), which a Host never does',
      '2130706433:1': 'its host is numeric but not a dotted-quad IPv4 address (such as 127.0.0.1)',
      '0x7f.1': 'its host is numeric but not a dotted-quad IPv4 address (such as 127.0.0.1)',
      '127.1': 'its host is numeric but not a dotted-quad IPv4 address (such as 127.0.0.1)',
      '0177.0.0.1': 'its host is numeric but not a dotted-quad IPv4 address (such as 127.0.0.1)',
      '256.0.0.1': 'its host is numeric but not a dotted-quad IPv4 address (such as 127.0.0.1)',
      '[127.0.0.1]': 'its bracketed address is not an IPv6 address (without a zone)',
      '[fe80::1%eth0]': 'its bracketed address is not an IPv6 address (without a zone)',
      'localhost:70000': 'its port is over 65535',
      'a b': 'its host is not a DNS name or an IP address',
      'ex%61mple.com': 'its host is not a DNS name or an IP address',
      'host:80:80': 'it is not a host with an optional port',
      '::1': 'it is not a host with an optional port',
    };
    for (const [value, refused] of Object.entries(refusals)) expect(readHost(value), value).toEqual({ refused });
  });
});
