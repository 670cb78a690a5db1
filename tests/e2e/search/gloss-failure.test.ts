/**
 * A build whose glossing fails (search/analysis/gloss.ts `glossesFor` rejects: the gloss table missing or
 * damaged) still gives an index, and the gateway's search index cache says so in one warning a minute,
 * naming the failure, instead of nothing. In the e2e project although it opens no socket: it mocks a
 * module (the table cannot be made unreadable for one test), which the unit and in-process projects,
 * sharing their workers' modules, do not allow (tests/README.md).
 */
import type { Tool } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';

import { loadConfig } from '../../../config/load.ts';
import { buildCatalog } from '../../../gateway/catalog/catalog.ts';
import { SearchIndexCache } from '../../../gateway/catalog/search-index-cache.ts';

vi.mock('../../../search/analysis/gloss.ts', async (original) => ({
  ...(await original<typeof import('../../../search/analysis/gloss.ts')>()),
  glossesFor: vi.fn(async () => {
    throw new Error("ENOENT: no such file or directory, open '/app/search/analysis/cedict/glosses.tsv.gz'");
  }),
}));

const upstream = loadConfig({ env: {}, overrides: { upstreams: [{}] } }).upstreams[0]!;
const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: 'object' } });

describe('a failed glossing', () => {
  it('leaves the Chinese text indexed by its characters and is logged once at warn with its error', async () => {
    const lines: { level: number; msg: string; err?: { message: string }; notLogged?: number }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const cache = new SearchIndexCache(log);
    const first = buildCatalog(upstream, [tool('tq_query', '查询天气预报'), tool('deals', 'Deals of a fund.')]);
    const second = buildCatalog(upstream, [tool('tq_query', '查询天气预报'), tool('almanac', '获取指定公历时间的黄历信息')]);
    const index = await cache.get(first);
    // No glosses: the English request misses, the Chinese one finds it by its bigrams.
    expect(index.search('weather forecast').map((h) => h.name)).toEqual([]);
    expect(index.search('天气预报').map((h) => h.name)).toEqual(['tq_query']);
    await vi.waitFor(async () => expect((await cache.get(second)).size).toBe(2));
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: 'Chinese glosses not made: search_tools indexes that text without its English meaning',
        err: expect.objectContaining({ message: expect.stringContaining('glosses.tsv.gz') }),
      }),
    ]);
    expect(lines.filter((l) => l.msg === 'search index built')).toHaveLength(2);
  });
});
