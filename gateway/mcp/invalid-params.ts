import { specTypeSchemas, type SpecTypeName } from '@modelcontextprotocol/server';
import { GatewayError } from '../errors.ts';
import { jsonPointer } from '../checks/json-pointer.ts';

/** The spec schema of each request method a client may send, by method. */
const REQUEST_SCHEMAS: Readonly<Record<string, SpecTypeName>> = {
  initialize: 'InitializeRequest',
  ping: 'PingRequest',
  'server/discover': 'DiscoverRequest',
  'tools/list': 'ListToolsRequest',
  'tools/call': 'CallToolRequest',
  'resources/list': 'ListResourcesRequest',
  'resources/templates/list': 'ListResourceTemplatesRequest',
  'resources/read': 'ReadResourceRequest',
  'resources/subscribe': 'SubscribeRequest',
  'resources/unsubscribe': 'UnsubscribeRequest',
  'prompts/list': 'ListPromptsRequest',
  'prompts/get': 'GetPromptRequest',
  'completion/complete': 'CompleteRequest',
  'logging/setLevel': 'SetLevelRequest',
  // Checked at the edge (http/mcp-endpoint.ts): the SDK's listen router answers it before any handler, without a path.
  'subscriptions/listen': 'SubscriptionsListenRequest',
};

/** How a schema's expected type reads in a message ("must be an object"). */
const EXPECTED: Readonly<Record<string, string>> = {
  record: 'an object',
  object: 'an object',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  literal: 'a listed value',
  enum: 'a listed value',
};

interface Issue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { key: PropertyKey })[];
  readonly expected?: unknown;
}

/**
 * The -32602 answer to a request whose params break the method's spec schema, as one line naming the
 * offending path as a JSON Pointer into params: `Invalid params: /arguments must be an object` (JSON-RPC
 * 2.0 §5.1 Invalid params; the spec's own tools/call schema says `arguments` is an object; an absent
 * member `is required`, as the input checks say it: checks/input-check.ts). `data.path`
 * is the first offending path, `data.issues` all of them. Undefined when the params are valid per the
 * spec schema (or the method has none): then the failure was something else and is left as it was.
 */
export function invalidParams(method: string, request: { method: string; params?: unknown }): GatewayError | undefined {
  const schema = Object.hasOwn(REQUEST_SCHEMAS, method) ? REQUEST_SCHEMAS[method] : undefined;
  if (!schema) return undefined;
  const result = specTypeSchemas[schema]['~standard'].validate(request);
  const issues = ('issues' in result ? result.issues : undefined) as readonly Issue[] | undefined;
  if (!issues?.length) return undefined;
  const described = issues.map((issue) => ({ path: pointer(issue.path), problem: isMissing(request, issue.path) ? 'is required' : problem(issue) }));
  const first = described[0]!;
  return new GatewayError('invalid_arguments', `Invalid params: ${first.path || 'params'} ${first.problem}`, { path: first.path, issues: described });
}

/** The keys of an issue's path, from the request object down. */
const keysOf = (path: Issue['path']) => (path ?? []).map((p) => String(typeof p === 'object' && p !== null ? p.key : p));

/**
 * Whether the issue is about a member that is absent (its parent is an object without it): the schema
 * reads that as `undefined` of the wrong type ("must be a string"), a caller as a missing member.
 */
function isMissing(request: unknown, path: Issue['path']): boolean {
  const keys = keysOf(path);
  let node = request;
  for (const key of keys.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return false;
    node = (node as Record<string, unknown>)[key];
  }
  const last = keys.at(-1);
  return last !== undefined && node !== null && typeof node === 'object' && !Array.isArray(node) && !Object.hasOwn(node, last);
}

/** The issue's path below `params`, as a JSON Pointer (RFC 6901). */
function pointer(path: Issue['path']): string {
  const keys = keysOf(path);
  if (keys[0] === 'params') keys.shift();
  return jsonPointer(keys);
}

function problem(issue: Issue): string {
  const expected = typeof issue.expected === 'string' ? EXPECTED[issue.expected] : undefined;
  if (expected) return `must be ${expected}`;
  return issue.message
    .replace(/\s+/g, ' ')
    .replace(/^Invalid input: /, '')
    .slice(0, 200);
}
