import { readFileSync } from 'node:fs';
import { ResourceNotFoundError, type ReadResourceResult, type Resource } from '@modelcontextprotocol/server';
import { TOOL_DEFINITIONS } from './tools/index.ts';

/**
 * The three markdown guides served as resources. Their text is read once at start-up from
 * `guides/*.md`; the permissions guide's scope table is generated from the tool definitions so it
 * can never disagree with what tools/list advertises.
 */

const guide = (file: string): string => readFileSync(new URL(`./guides/${file}`, import.meta.url), 'utf8');

function scopeTable(): string {
  const byScope = new Map<string, string[]>();
  for (const tool of TOOL_DEFINITIONS) {
    for (const scope of tool.requiredScopes) byScope.set(scope, [...(byScope.get(scope) ?? []), tool.name]);
  }
  const rows = [...byScope].map(([scope, tools]) => `| \`${scope}\` | ${tools.map((t) => `\`${t}\``).join(', ')} |`);
  return ['| scope | tools |', '|---|---|', ...rows, ''].join('\n');
}

interface Guide extends Resource {
  text: string;
}

const GUIDES: Guide[] = [
  {
    uri: 'cpzai://guides/tool-usage',
    name: 'tool-usage',
    title: 'Using the CPZAI tools',
    description: 'How to chain the tools: where ids come from, money in cents, pagination, writes, and errors.',
    mimeType: 'text/markdown',
    text: guide('tool-usage.md'),
  },
  {
    uri: 'cpzai://guides/permissions',
    name: 'permissions',
    title: 'Permissions: credentials and scopes',
    description: 'The credential headers, the scope each tool needs, the demo keys, and what a 401 or 403 looks like.',
    mimeType: 'text/markdown',
    text: `${guide('permissions.md')}\n${scopeTable()}`,
  },
  {
    uri: 'cpzai://guides/discovery',
    name: 'discovery',
    title: 'Discovering tools: /mcp or /mcp/compact',
    description: 'Which gateway endpoint to use: the full list for clients that defer tool loading, search_tools + call_tool for the rest.',
    mimeType: 'text/markdown',
    text: guide('discovery.md'),
  },
];

/** The resources/list result entries (metadata only). */
export const RESOURCE_LIST: Resource[] = GUIDES.map(({ text: _text, ...resource }) => ({ ...resource, size: Buffer.byteLength(_text) }));

/** The resources/read result for `uri`; throws ResourceNotFoundError (-32602) for anything else. */
export function readGuide(uri: string): ReadResourceResult {
  const found = GUIDES.find((g) => g.uri === uri);
  if (!found) throw new ResourceNotFoundError(uri);
  return { contents: [{ uri: found.uri, mimeType: found.mimeType, text: found.text }] };
}
