import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { fromJsonSchema } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/** 1x1 red PNG, the image the conformance scenarios expect back verbatim. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** A minimal WAV header (no samples). */
export const WAV_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

// `x-mcp-header` is an annotation the JSON Schema typings do not know; declared apart so it is kept as written.
const X_MCP_HEADER_SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', description: 'mirrored into Mcp-Param-Region', 'x-mcp-header': 'Region' },
    level: { type: 'integer', description: 'not mirrored' },
  },
} as Parameters<typeof fromJsonSchema>[0];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/**
 * The content, progress, logging and error tools named by the conformance suite's
 * `tools-*` scenarios (suite 0.2.x, revisions 2025-11-25 and 2026-07-28).
 */
export function registerContentTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Returns one text content block' }, async () => text('This is a simple text response for testing.'));

  server.registerTool('test_image_content', { description: 'Returns one image content block (PNG)' }, async () => ({
    content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
  }));

  server.registerTool('test_audio_content', { description: 'Returns one audio content block (WAV)' }, async () => ({
    content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }],
  }));

  server.registerTool('test_embedded_resource', { description: 'Returns one embedded text resource' }, async () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  }));

  server.registerTool('test_multiple_content_types', { description: 'Returns text, image and embedded resource blocks in one result' }, async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }));

  // Three log notifications before the result: exercised on the 2025 wire, where logging is push-style.
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Emits three notifications/message before its result', inputSchema: z.object({}) },
    async (_args, ctx) => {
      for (const step of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
        await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: step } });
        await sleep(20);
      }
      return text('Tool with logging executed successfully');
    },
  );

  // Progress is sent only when the caller supplied a token (spec: basic/utilities/progress).
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100 against the caller progressToken', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        for (const progress of [0, 50, 100]) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
          });
          if (progress < 100) await sleep(20);
        }
      }
      return text(String(progressToken ?? 'no-progress-token'));
    },
  );

  server.registerTool('test_error_handling', { description: 'Always fails: an isError result' }, async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });

  // SEP-1613/SEP-2106: the 2020-12 keywords must survive tools/list verbatim, so the schema is raw JSON.
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Declares an inputSchema using JSON Schema 2020-12 keywords',
      inputSchema: fromJsonSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      }),
    },
    async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );

  // SEP-2243: `region` is mirrored into the Mcp-Param-Region header; the server must check they agree.
  server.registerTool(
    'test_x_mcp_header',
    {
      description: 'Declares an x-mcp-header parameter (SEP-2243 Mcp-Param-* validation)',
      inputSchema: fromJsonSchema<{ region?: string; level?: number }>(X_MCP_HEADER_SCHEMA),
    },
    async (args) => text(`region=${args.region ?? '<none>'}`),
  );
}
