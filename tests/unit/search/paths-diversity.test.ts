/**
 * Two measured knobs of search/index.ts, off by default (search/tuning.ts says why), pinned in behaviour:
 * file paths as a weak clue of their own, and a per-upstream decay so one server's siblings do not fill
 * the top k when another server matches too.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, splitPaths, type SearchableTool } from '../../../search/index.ts';

describe('paths in a query', () => {
  it('takes paths and bare extensions out of the topic, and leaves domains and numbers in it', () => {
    expect(splitPaths('Read the file /root/word/exchange.docx, then summarise')).toEqual({
      topic: 'Read the file   then summarise',
      paths: '/root/word/exchange.docx,',
    });
    expect(splitPaths('make slides as .pptx')).toEqual({ topic: 'make slides as  ', paths: '.pptx' });
    expect(splitPaths('is amazon.com official? 18.9g of silver')).toEqual({ topic: 'is amazon.com official? 18.9g of silver', paths: '' });
  });

  it('lets the topic decide, the path only break ties, when paths are a weak clue', () => {
    const tools: SearchableTool[] = [
      { name: 'play_music', upstream: 'music', description: 'Play a song from the music library.' },
      { name: 'read_file', upstream: 'files', description: 'Read a text file and return its contents.' },
    ];
    const query = 'read the text file /root/music/lyrics.txt';
    expect(buildToolIndex(tools, { pathWeight: 0.2, semantic: 'off' }).search(query)[0].name).toBe('read_file');
    // As ordinary words, "music" counts as much as the request's own words.
    const asWords = buildToolIndex(tools, { pathWeight: 1, semantic: 'off' }).search(query);
    expect(asWords.find((h) => h.name === 'play_music')!.score).toBeGreaterThan(
      buildToolIndex(tools, { pathWeight: 0.2, semantic: 'off' })
        .search(query)
        .find((h) => h.name === 'play_music')?.score ?? 0,
    );
  });
});

describe('upstream decay', () => {
  const tools: SearchableTool[] = [
    ...['line', 'bar', 'pie', 'area'].map((x) => ({ name: `sales_${x}_chart`, upstream: 'charts', description: `Draw sales data as a ${x} chart.` })),
    { name: 'sales_table', upstream: 'tables', description: 'Sales data in rows and columns, with totals.' },
    { name: 'noise', upstream: 'other', description: 'Unrelated.' },
  ];

  it("puts another server's match into the top k instead of a fourth sibling", () => {
    const plain = buildToolIndex(tools, { semantic: 'off' })
      .search('draw sales data', { limit: 3 })
      .map((h) => h.name);
    const diverse = buildToolIndex(tools, { semantic: 'off', upstreamDecay: 0.5 })
      .search('draw sales data', { limit: 3 })
      .map((h) => h.name);
    expect(plain).not.toContain('sales_table');
    expect(diverse).toContain('sales_table');
    expect(diverse[0]).toBe(plain[0]);
  });
});
