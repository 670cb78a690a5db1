import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { argumentIssues, describeIssues } from './argument-validator.ts';
import { PlatformHttpError, PlatformUnreachableError, type PlatformClient } from './platform-client.ts';
import { findTool, type ToolDefinition } from './tools/index.ts';

/** How one tools/call ended, for logs: ok, is_error (platform refused or unreachable). */
export type CallOutcome = 'ok' | 'platform_error' | 'platform_unreachable';

const textResult = (text: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text }], ...(isError ? { isError } : {}) });

/** The `_meta` key under which an invalid-arguments result lists every offending path. */
export const ARGUMENT_ERRORS_META_KEY = 'ai.cpz/argument-errors';

/**
 * Resolves the tool and checks its arguments. An unknown tool is a protocol error (JSON-RPC -32602
 * "Unknown tool"); arguments that fail the inputSchema (or the checks JSON Schema cannot state) are a
 * tool execution error: an `isError` result naming every offending JSON Pointer path, in its text and
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
    return {
      refused: {
        ...textResult(`Invalid arguments for tool ${name}: ${describeIssues(issues)}`, true),
        _meta: { [ARGUMENT_ERRORS_META_KEY]: issues },
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
