/**
 * The shape of one tool definition: everything tools/list advertises plus how a call becomes a
 * platform request. One definition per tool; the wire form is derived from it (see index.ts).
 */

export type JsonSchema = Record<string, unknown>;

export type ToolCategory =
  | 'strategies'
  | 'backtests'
  | 'orders'
  | 'positions'
  | 'accounts'
  | 'data'
  | 'market-data'
  | 'risk'
  | 'middle-office'
  | 'webhooks'
  | 'profile';

/** MCP tool annotations (spec: server/tools, ToolAnnotations); all four hints are always set. */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A request to the platform API; `query` values are serialised as strings, arrays comma-joined. */
export interface PlatformRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

/** A problem with the arguments that JSON Schema cannot express; `path` is a JSON Pointer. */
export interface ArgumentIssue {
  path: string;
  message: string;
}

export type ToolArguments = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  category: ToolCategory;
  /** The platform scopes that authorise the tool (the platform decides; this is advertised for gateways). */
  requiredScopes: string[];
  annotations: ToolHints;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  /** Checks beyond the inputSchema, run before any platform request. */
  refine?: (args: ToolArguments) => ArgumentIssue[];
  request: (args: ToolArguments) => PlatformRequest;
}

/** Hints for every read: no side effects, same answer for the same state, platform data only. */
export const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** `/base/<id>` with the id percent-encoded. */
export const pathWith = (base: string, id: unknown, suffix = ''): string => `${base}/${encodeURIComponent(String(id))}${suffix}`;

/** Splits `key` out of the arguments: `[value, rest]`. */
export function take(args: ToolArguments, key: string): [unknown, ToolArguments] {
  const { [key]: value, ...rest } = args;
  return [value, rest];
}

/** A list tool's request: every argument becomes a query parameter. */
export const listRequest =
  (path: string) =>
  (args: ToolArguments): PlatformRequest => ({ method: 'GET', path, query: args });

/** A get-by-id tool's request: `idKey` goes in the path. */
export const getRequest =
  (base: string, idKey: string) =>
  (args: ToolArguments): PlatformRequest => ({ method: 'GET', path: pathWith(base, args[idKey]) });
