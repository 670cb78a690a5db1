import { accountTools } from './accounts.ts';
import { backtestTools } from './backtests.ts';
import { dataTools } from './data.ts';
import { marketDataTools } from './market-data.ts';
import { middleOfficeTools } from './middle-office.ts';
import { orderTools } from './orders.ts';
import { positionTools } from './positions.ts';
import { profileTools } from './profile.ts';
import { riskTools } from './risk.ts';
import { strategyTools } from './strategies.ts';
import { webhookTools } from './webhooks.ts';
import { SEARCH_KEYWORDS } from './search-keywords.ts';
import type { ToolDefinition } from './tool-definition.ts';

/**
 * The `_meta` key under which every tool advertises `{ category, requiredScopes, keywords }`. Gateways read
 * it to group tools and to hide tools a credential has no scope for (the platform still decides), and
 * a tool search reads `keywords` (search-keywords.ts).
 */
export const TOOL_META_KEY = 'ai.cpz/tool';

/** All 34 tool definitions, in catalogue order (by category). */
export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  ...strategyTools,
  ...backtestTools,
  ...orderTools,
  ...positionTools,
  ...accountTools,
  ...dataTools,
  ...marketDataTools,
  ...riskTools,
  ...middleOfficeTools,
  ...webhookTools,
  ...profileTools,
];

const BY_NAME = new Map(TOOL_DEFINITIONS.map((tool) => [tool.name, tool]));

export function findTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}

/** The wire form of one tool as tools/list returns it (MCP spec: server/tools, Tool). */
export function wireTool(tool: ToolDefinition) {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    annotations: tool.annotations,
    _meta: { [TOOL_META_KEY]: { category: tool.category, requiredScopes: tool.requiredScopes, keywords: SEARCH_KEYWORDS[tool.name] ?? [] } },
  };
}

/** The tools/list result, computed once: the server answers every tools/list with this array. */
export const TOOL_LIST = TOOL_DEFINITIONS.map(wireTool);

export type { ToolDefinition } from './tool-definition.ts';
