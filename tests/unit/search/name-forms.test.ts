/**
 * A request word found in a tool's name as written, not only as a stem (`nameFormFactor`): Porter gives
 * "strategies" and "strategy" one stem, and a plural asks for the collection (SDK try-out: "what strategies do
 * I have" ranked get_strategy, which needs an id, above list_strategies).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildToolIndex } from '../../../search/index.ts';
import { readCatalog } from '../../../upstream/replay/catalog-file.ts';
import { PROJECT_ROOT, searchableTools } from '../../fixtures/search-data.ts';

const cpzai = searchableTools(readCatalog(resolve(PROJECT_ROOT, 'tool-catalog.json')));
const top = (index: ReturnType<typeof buildToolIndex>, query: string) => index.search(query)[0]?.name;

describe('name forms', () => {
  it('ranks the tool named with the plural first for a plural, and the one named with the singular for a singular', () => {
    const index = buildToolIndex(cpzai);
    expect(top(index, 'what strategies do I have')).toBe('list_strategies');
    expect(top(index, 'show strategy 42')).toBe('get_strategy');
  });

  it('without it, the plural request ranks the by-id tool first (the stems alone cannot tell them apart)', () => {
    expect(top(buildToolIndex(cpzai, { nameFormFactor: 1 }), 'what strategies do I have')).toBe('get_strategy');
  });
});
