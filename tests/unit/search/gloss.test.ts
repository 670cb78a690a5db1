/**
 * The English glosses of Chinese text (search/analysis/gloss.ts) come from a child process that reads
 * CC-CEDICT and exits: a build swallows a failed glossing (the index stays right, blind to the Chinese
 * text's meaning), so the glosses themselves are checked here, through the real process.
 */
import { describe, expect, it } from 'vitest';

import { glossesFor } from '../../../search/analysis/gloss.ts';

describe('glossesFor', () => {
  it('glosses each Han text once in a child process, keeps the known glosses, and leaves text without Han out', async () => {
    const calendar = '获取指定公历时间的黄历信息';
    const weather = '查询天气预报';
    const known = new Map([['股票行情', 'stock market quotations']]);
    const glosses = await glossesFor([calendar, 'plain English', weather, calendar, '股票行情'], known);
    expect([...glosses.keys()].sort()).toEqual([calendar, weather, '股票行情'].sort());
    expect(glosses.get(calendar)).toMatch(/Gregorian calendar/);
    expect(glosses.get(calendar)).toMatch(/almanac/);
    expect(glosses.get(weather)).toMatch(/weather forecast/);
    expect(glosses.get('股票行情')).toBe('stock market quotations');
  }, 120_000);
});
