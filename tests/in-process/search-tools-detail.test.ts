/**
 * search_tools' `detail` and its counts, on /mcp/compact of the reference stack through a real MCP client:
 * every answer says "N of M tools matched" (M = the tools this credential may search), and `detail: brief`
 * leaves out schemas, keeping name, title, a one-line description and `advertised`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../helpers/clients.ts';
import { withClient, type ToolResult } from '../helpers/era-client.ts';
import { inProcessReferenceStack, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

type Found = { tools: Record<string, unknown>[]; matched: number; total: number; summary: string };

let stack: Stack;
beforeAll(async () => {
  stack = await inProcessReferenceStack();
});
afterAll(async () => {
  await stack?.close();
});

const found = (result: ToolResult): Found => {
  expect(result.isError, result.content[0]?.text).toBeFalsy();
  return result.structuredContent as unknown as Found;
};

describe('search_tools detail and counts', () => {
  it("says how many of the caller's tools matched, and answers brief without schemas", () =>
    withClient('modern', `${stack.gatewayUrl}/mcp/compact`, DEMO_KEYS.full, async (c) => {
      await c.listTools();
      const full = found(await c.callTool('search_tools', { query: 'list my orders', limit: 3 }));
      expect(full.total).toBe(34);
      expect(full.matched).toBeGreaterThan(3);
      expect(full.summary).toBe(`${full.matched} of 34 tools matched; showing the best 3.`);
      expect(full.tools[0]).toHaveProperty('input_schema');
      const brief = found(await c.callTool('search_tools', { query: 'list my orders', limit: 3, detail: 'brief' }));
      expect(brief.tools.map((t) => t.name)).toEqual(full.tools.map((t) => t.name));
      for (const t of brief.tools) {
        expect(Object.keys(t).sort()).toEqual(['advertised', 'description', 'name', 'title']);
        expect(String(t.description)).not.toMatch(/\n/);
        expect(String(t.description).length).toBeLessThanOrEqual(160);
      }
      const bad = await c.callTool('search_tools', { query: 'orders', detail: 'everything' });
      expect(bad.isError).toBe(true);
    }));

  it('counts only the tools the credential may see', () =>
    withClient('modern', `${stack.gatewayUrl}/mcp/compact`, DEMO_KEYS.identity, async (c) => {
      await c.listTools();
      const page = found(await c.callTool('search_tools', { query: 'profile' }));
      expect(page.total).toBe(1);
      expect(page.summary).toBe('1 of 1 tools matched.');
    }));
});
