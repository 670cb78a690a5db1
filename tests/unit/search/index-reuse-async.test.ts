/**
 * The async build (search/index.ts `buildToolIndexAsync`) ranks exactly as the synchronous one, from
 * scratch and from a previous index, once it has glossed the catalogue's Chinese text (search/gloss.ts,
 * in a worker). Its own file: the only unit test that loads the gloss dictionary (a worker, seconds of
 * CPU), so it runs beside the rest of the suite rather than after index-reuse.test.ts.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, buildToolIndexAsync } from '../../../search/index.ts';
import { glossChinese, hasHan } from '../../../search/gloss.ts';
import { answers, base, versions } from './index-reuse-catalog.ts';

describe('building an index asynchronously', () => {
  it('gives the same index asynchronously, and from an index whose documents a build already took', { timeout: 120_000 }, async () => {
    const changed = versions()[0][1];
    // Nothing glossed yet in this worker (files share it: vitest.config.ts), so the first build marks its
    // Chinese documents unglossed, and the builds after the async one must read them again.
    expect(base.filter((t) => hasHan(t.description ?? '') && glossChinese(t.description ?? '') !== '')).toEqual([]);
    const first = buildToolIndex(base);
    const plain = await buildToolIndexAsync(changed);
    const reused = await buildToolIndexAsync(changed, {}, { previous: first });
    const again = buildToolIndex(changed, {}, { previous: first });
    const fresh = buildToolIndex(changed);
    expect(answers(plain)).toEqual(answers(fresh));
    expect(answers(reused)).toEqual(answers(fresh));
    expect(answers(again)).toEqual(answers(fresh));
  });
});
