/**
 * The async build (search/index.ts `buildToolIndexAsync`) glosses the catalogue's Chinese text
 * (search/analysis/gloss.ts, from the gloss table), keeps the glosses in the index, and ranks exactly as the
 * synchronous build given the same glosses, from scratch and from a previous index. Its own file, so it
 * runs beside the rest of the suite rather than after index-reuse.test.ts.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, buildToolIndexAsync } from '../../../search/index.ts';
import { hasHan } from '../../../search/analysis/gloss.ts';
import { answers, base, versions } from './index-reuse-catalog.ts';

describe('building an index asynchronously', () => {
  it('gives the same index asynchronously, and from an index whose documents a build already took', { timeout: 120_000 }, async () => {
    const changed = versions()[0][1];
    const first = buildToolIndex(base);
    expect(first.glosses.size).toBe(0);
    const plain = await buildToolIndexAsync(changed);
    const chinese = changed.filter((t) => hasHan(t.description ?? ''));
    expect(chinese.length).toBeGreaterThan(50);
    expect(chinese.every((t) => (plain.glosses.get(t.description ?? '') ?? '') !== '')).toBe(true);
    const { glosses } = plain;
    // The documents `first` read without glosses are read again, with them.
    const reused = await buildToolIndexAsync(changed, {}, { previous: first, glosses });
    const again = buildToolIndex(changed, {}, { previous: first, glosses });
    const fresh = buildToolIndex(changed, {}, { glosses });
    expect(answers(plain)).toEqual(answers(fresh));
    expect(answers(reused)).toEqual(answers(fresh));
    expect(answers(again)).toEqual(answers(fresh));
    // The glosses are an input of the build, nothing else's: without them, the same tools rank otherwise.
    expect(answers(buildToolIndex(changed))).not.toEqual(answers(fresh));
    expect(answers(buildToolIndex(changed, {}, { previous: reused }))).toEqual(answers(fresh));
  });
});
