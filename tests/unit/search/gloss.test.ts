/**
 * The English glosses of Chinese text (search/analysis/gloss.ts) come from the CC-CEDICT gloss table: a
 * build goes on without them when glossing fails (the index stays right, blind to the Chinese text's
 * meaning), so the glosses themselves are checked here, through the real table.
 */
import { describe, expect, it } from 'vitest';

import { glossesFor } from '../../../search/analysis/gloss.ts';

describe('glossesFor', () => {
  it('glosses each Han text once from the table (segmented, function words left out), keeps the known glosses, and leaves text without Han out', async () => {
    const calendar = '获取指定公历时间的黄历信息';
    const weather = '查询天气预报';
    const known = new Map([['股票行情', 'stock market quotations']]);
    const glosses = await glossesFor([calendar, 'plain English', weather, calendar, '股票行情'], known);
    expect([...glosses.keys()].sort()).toEqual([calendar, weather, '股票行情'].sort());
    expect(glosses.get(calendar)).toMatch(/Gregorian calendar/);
    expect(glosses.get(calendar)).toMatch(/almanac/);
    expect(glosses.get(weather)).toBe('to check; to inquire; to consult weather forecast');
    expect((await glossesFor(['的天气'])).get('的天气')).toBe('weather');
    expect(glosses.get('股票行情')).toBe('stock market quotations');
  }, 120_000);
});
