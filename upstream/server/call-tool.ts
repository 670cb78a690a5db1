import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { argumentIssues, describeIssues } from './argument-validator.ts';
import { PlatformHttpError, PlatformUnreachableError, type PlatformClient } from './platform-client.ts';
import { findTool, type ToolDefinition } from './tools/index.ts';

/** How one tools/call ended, for logs: ok, is_error (platform refused or unreachable). */
export type CallOutcome = 'ok' | 'platform_error' | 'platform_unreachable';

const textResult = (text: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text }], ...(isError ? { isError } : {}) });

/** The `_meta` key under which an invalid-arguments result lists the offending paths. */
export const ARGUMENT_ERRORS_META_KEY = 'ai.cpz/argument-errors';

/**
 * At most this many issues are reported, then `and N more issues`: 10,000 unknown arguments came back as a 1.7 MB
 * answer to a 190 KB request, all of it read into the model's context (wire try-out). The gateway's own check
 * of call_tool's arguments reports the same number.
 */
export const MAX_REPORTED_ISSUES = 20;

/**
 * Resolves the tool and checks its arguments. An unknown tool is a protocol error (JSON-RPC -32602
 * "Unknown tool"); arguments that fail the inputSchema (or the checks JSON Schema cannot state) are a
 * tool execution error: an `isError` result naming the offending JSON Pointer paths (the first
 * {@link MAX_REPORTED_ISSUES}, then how many more), in its text and
 * in `_meta["ai.cpz/argument-errors"]`, so the model can correct itself (2026-07-28 server/tools,
 * Error Handling: input validation errors are tool execution errors). Nothing reaches the platform then.
 */
export function resolveCall(
  name: string,
  args: Record<string, unknown> | undefined,
): { tool: ToolDefinition; args: Record<string, unknown> } | { refused: CallToolResult } {
  const tool = findTool(name);
  if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const checked = args ?? {};
  const issues = argumentIssues(tool, checked);
  if (issues.length) {
    const shown = issues.slice(0, MAX_REPORTED_ISSUES);
    const more = issues.length > shown.length ? `; and ${(issues.length - shown.length).toLocaleString('en-US')} more issues` : '';
    return {
      refused: {
        ...textResult(`Invalid arguments for tool ${name}: ${describeIssues(shown)}${more}`, true),
        _meta: { [ARGUMENT_ERRORS_META_KEY]: shown },
      },
    };
  }
  return { tool, args: checked };
}

/**
 * Runs a resolved call against the platform. A 2xx body comes back as pretty JSON text plus
 * `structuredContent`; a platform error or an unreachable platform becomes an `isError` result whose
 * text carries the platform's own message (or the transport failure), never a thrown error.
 */
export async function runCall(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  platform: PlatformClient,
): Promise<{ result: CallToolResult; outcome: CallOutcome }> {
  const write = !tool.annotations.readOnlyHint;
  try {
    const body = await platform.send(tool.request(args));
    const structured = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : { result: body };
    return { result: { ...textResult(JSON.stringify(body, null, 2)), structuredContent: structured }, outcome: 'ok' };
  } catch (error) {
    if (error instanceof PlatformHttpError) {
      const field = error.field ? ` (field: ${error.field})` : '';
      return {
        result: textResult(`CPZ platform refused ${tool.name} (HTTP ${error.status} ${error.code}): ${error.message}${field}`, true),
        outcome: 'platform_error',
      };
    }
    if (error instanceof PlatformUnreachableError) {
      const effect = !write
        ? 'Nothing was changed.'
        : error.sent
          ? 'This write may or may not have been applied: check the current state before retrying.'
          : 'The write was not sent, so nothing was changed.';
      const tries = write ? 'writes are never retried' : `after ${error.attempts} attempt${error.attempts === 1 ? '' : 's'}`;
      return {
        result: textResult(`The CPZ platform API is unreachable (${error.message}; ${tries}). ${effect} Try again shortly.`, true),
        outcome: 'platform_unreachable',
      };
    }
    throw error;
  }
}
