import type { GatewayConfig } from '../../config/types.ts';
import type { SurfaceView } from '../ops/credential-view.ts';

/**
 * The `tools` subcommand's output: per endpoint, each tool on a line with `read`/`write` and `out`
 * when it declares an outputSchema, then the count; or the endpoint's error. Plain text, no colours.
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
    const width = Math.max(0, ...tools.map((t) => t.name.length));
    for (const tool of tools) lines.push(`  ${tool.name.padEnd(width)}  ${tool.readOnly ? 'read ' : 'write'}${tool.hasOutputSchema ? '  out' : ''}`.trimEnd());
    lines.push('');
  }
  return lines.join('\n');
}

/** The MCP endpoint paths a config serves: `/mcp`, and `/mcp/compact` unless `compact.enabled` is false. */
export function servedPaths(config: GatewayConfig): string[] {
  return config.compact.enabled ? ['/mcp', '/mcp/compact'] : ['/mcp'];
}
