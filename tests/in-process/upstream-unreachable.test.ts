/**
 * An upstream the gateway cannot connect to is named with the URL it tried, so an operator sees where
 * the connection went (a wrong port, a service not started): in the log line of the failed attempt,
 * with the URL's user name, password and query left out (a token in `?key=` never reaches a log).
 * In process (no gateway socket); the connection attempt is real, to a closed loopback port.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loggableUrl } from '../../gateway/obs/log.ts';
import { unreachableUrl } from '../fixtures/scope-endpoint.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { ConfigError } from '../../config/load.ts';

describe('an unreachable upstream', () => {
  let gateway: InProcessGateway;
  afterAll(async () => {
    await gateway?.close();
  });

  it('is logged with the URL tried, without its query', async () => {
    const closed = new URL(await unreachableUrl('/mcp'));
    const url = `http://${closed.host}/mcp?api_key=s3cret`;
    gateway = inProcessGateway({ anonymous: true, upstreams: [{ name: 'offline', url, forwardCredentials: false }] });
    gateway.runtime.warm();
    const lines = await waitFor('the failed connection to be logged', () => {
      const found = gateway.logs.records('cannot connect to upstream');
      return found.length > 0 && found;
    });
    const line = JSON.stringify(lines[0]);
    expect(lines[0]!.msg).toContain(`cannot connect to upstream offline at http://${closed.host}/mcp?…`);
    expect(lines[0]!.target).toBe(`http://${closed.host}/mcp?…`);
    expect(line).not.toContain('s3cret');
  });
});

describe('loggableUrl', () => {
  it('keeps scheme, host, port and path; hides credentials and the query', () => {
    expect(loggableUrl('http://127.0.0.1:3001/mcp')).toBe('http://127.0.0.1:3001/mcp');
    expect(loggableUrl('https://user:pass@mcp.example.com/v1/mcp?token=x#frag')).toBe('https://***@mcp.example.com/v1/mcp?…');
    // A token in the path (security try-out: a tracing endpoint's path secret reached the log).
    expect(loggableUrl('https://otel.example.com/v1/traces/PATHSECRET6abcdefghijklmnop?key=x')).toBe('https://otel.example.com/v1/traces/[redacted]?…');
    expect(loggableUrl('https://user@mcp.example.com/')).toBe('https://***@mcp.example.com/');
    expect(loggableUrl('not a url')).toBe('not a url');
    // An opaque OAuth client_id that happens to parse as a URL is no address: left as it is.
    expect(loggableUrl('app:client-7?x')).toBe('app:client-7?x');
  });
});

describe('an upstream URL with user information', () => {
  it('is refused by the configuration check, naming the key and the fix, without the password (fetch would refuse to send it)', () => {
    let refused: unknown;
    try {
      inProcessGateway({ anonymous: true, upstreams: [{ name: 'userinfo', url: 'http://svc:hunter2@127.0.0.1:3001/mcp' }] });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused).toMatchObject({ keyPath: 'upstreams[0].url' });
    expect((refused as Error).message).toContain(
      "upstreams[0].url: carries user information (user:password@), which fetch refuses to send (the MCP client's HTTP transport connects with fetch); put the credential in upstreams[].headers instead",
    );
    expect((refused as Error).message).not.toContain('hunter2');
  });
});

describe('an upstream on a port fetch refuses', () => {
  it('is reported as such (the Fetch standard blocks port 6000), not as a failed era negotiation', async () => {
    // Nothing need listen there: fetch refuses before connecting, whatever serves the port.
    const gateway = inProcessGateway({ anonymous: true, upstreams: [{ name: 'x11', url: 'http://127.0.0.1:6000/mcp', forwardCredentials: false }] });
    try {
      gateway.runtime.warm();
      const lines = await waitFor('the failed connection to be logged', () => {
        const found = gateway.logs.records('cannot connect to upstream');
        return found.length > 0 && found;
      });
      expect(lines[0]!.reason).toBe(
        'upstream x11 is unavailable: fetch refuses to connect to port 6000 (a "bad port" of the Fetch standard, fetch.spec.whatwg.org/#port-blocking), and the MCP client\'s HTTP transport connects with fetch; serve the upstream on another port (connecting)',
      );
    } finally {
      await gateway.close();
    }
  });
});
