import type { GatewayConfig } from '../../config/types.ts';
import type { SurfaceView } from '../ops/credential-view.ts';
import { UsageError } from './args.ts';
import { redactUrl } from '../obs/redact.ts';

/** What the `kind` and `output` columns mean, printed once under the tables. */
export const LEGEND = [
  'kind:   read  = read-only (readOnlyHint, or readOnlyOverrides): on /mcp/compact, found by search_tools and run',
  '                through call_tool, unless it is an anchor listed by name (then called directly)',
  '        write = changes state: advertised by name on both endpoints, so the client can ask before it runs',
  'output: schema = declares an outputSchema; the gateway checks every result against it',
];

/**
 * The `tools` subcommand's output: per endpoint, its count, a header row and each tool on a line
 * (`read`/`write`, and `schema` when it declares an outputSchema), or the endpoint's error; then the
 * legend of the columns. Plain text, no colours.
 */
export function formatViews(views: readonly SurfaceView[]): string {
  const lines: string[] = [];
  for (const view of views) {
    if (view.error !== undefined) {
      lines.push(`${view.path}: ${view.error}`, '');
      continue;
    }
    const tools = view.tools ?? [];
    lines.push(`${view.path}: ${tools.length} tool${tools.length === 1 ? '' : 's'}`);
    if (tools.length === 0) {
      lines.push('');
      continue;
    }
    const width = Math.max('tool'.length, ...tools.map((t) => t.name.length));
    const row = (name: string, kind: string, output: string) => `  ${name.padEnd(width)}  ${kind.padEnd(5)}  ${output}`.trimEnd();
    lines.push(row('tool', 'kind', 'output'));
    for (const tool of tools) lines.push(row(tool.name, tool.readOnly ? 'read' : 'write', tool.hasOutputSchema ? 'schema' : ''));
    lines.push('');
  }
  if (views.some((view) => view.tools?.length)) lines.push(...LEGEND, '');
  return lines.join('\n');
}

/** The MCP endpoint paths a config serves: `/mcp`, and `/mcp/compact` unless `compact.enabled` is false. */
export function servedPaths(config: GatewayConfig): string[] {
  return config.compact.enabled ? ['/mcp', '/mcp/compact'] : ['/mcp'];
}

/**
 * `--url` checked before anything is started: an http(s) URL, else a UsageError naming the value and what
 * is wrong with it (a scheme missing, as in `127.0.0.1:3000`, is the usual slip).
 * @throws UsageError
 */
export function gatewayBaseUrl(value: string): string {
  if (URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)) return value;
  const schemed = /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
  // The message is printed and may be pasted into a ticket: a password in the URL is not (obs/redact.ts).
  const shown = !/[@?]/.test(value) ? value : schemed ? redactUrl(value) : redactUrl(`http://${value}`).replace(/^http:\/\//, '');
  const problem = schemed ? 'only http and https are served' : `the scheme is missing (did you mean --url http://${shown}?)`;
  throw new UsageError(`--url "${shown}" is not a gateway URL: ${problem}`);
}
