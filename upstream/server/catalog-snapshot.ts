import { TOOL_LIST } from './tools/index.ts';

/**
 * The committed catalogue snapshot (`tool-catalog.json`): the tools/list result with the tools sorted
 * by name, pretty-printed with a trailing newline. `npm run export:catalog` writes it; a test fails
 * when the committed file differs.
 */
export function catalogSnapshot(): string {
  const tools = [...TOOL_LIST].sort((a, b) => a.name.localeCompare(b.name));
  return `${JSON.stringify({ tools }, null, 2)}\n`;
}
