/**
 * The `tools` subcommand's text (gateway/cli/tools-command.ts): a header row per endpoint and one legend
 * saying what the columns mean; `--url` refused before anything starts when it is not an http(s) URL,
 * naming the value and what is missing.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../gateway/cli/args.ts';
import { formatViews, gatewayBaseUrl, LEGEND } from '../../gateway/cli/tools-command.ts';

describe('formatViews', () => {
  it('prints per endpoint its count, a header row and the tools, then the legend once', () => {
    const text = formatViews([
      {
        path: '/mcp',
        tools: [
          { name: 'list_orders', readOnly: true, hasOutputSchema: true },
          { name: 'place_order', readOnly: false, hasOutputSchema: false },
        ],
      },
      { path: '/mcp/compact', error: 'HTTP 401' },
    ] as never);
    expect(text).toBe(
      [
        '/mcp: 2 tools',
        '  tool         kind   output',
        '  list_orders  read   schema',
        '  place_order  write',
        '',
        '/mcp/compact: HTTP 401',
        '',
        ...LEGEND,
        '',
      ].join('\n'),
    );
  });

  it('prints no header or legend where no tool is listed', () => {
    expect(formatViews([{ path: '/mcp', tools: [] }] as never)).toBe('/mcp: 0 tools\n');
  });
});

describe('gatewayBaseUrl (--url)', () => {
  it('takes an http or https URL as it is', () => {
    expect(gatewayBaseUrl('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(gatewayBaseUrl('https://mcp.example.com/')).toBe('https://mcp.example.com/');
  });

  it('names the value and the missing scheme', () => {
    for (const value of ['127.0.0.1:3000', 'localhost:3000', 'mcp.example.com']) {
      expect(() => gatewayBaseUrl(value)).toThrow(
        new UsageError(`--url "${value}" is not a gateway URL: the scheme is missing (did you mean --url http://${value}?)`),
      );
    }
    expect(() => gatewayBaseUrl('ftp://mcp.example.com')).toThrow('--url "ftp://mcp.example.com" is not a gateway URL: only http and https are served');
  });

  it('never echoes a password or query given in the URL', () => {
    for (const value of ['alice:hunter2@127.0.0.1:3000/mcp', 'ftp://alice:hunter2@mcp.example.com/?token=hunter2']) {
      let message = '';
      try {
        gatewayBaseUrl(value);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('is not a gateway URL');
      expect(message).not.toContain('hunter2');
    }
  });
});
