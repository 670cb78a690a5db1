/**
 * The principal axes the word vectors are distilled onto (scripts/data/pca.ts): the leading direction of
 * variance first, the mean taken out, the same answer every run.
 */
import { describe, expect, it } from 'vitest';

import { principalAxes } from '../../../scripts/data/pca.ts';

/** Points spread along (1, 1, 0) about the mean (5, 5, 5), less along (1, -1, 0), not at all along z. */
const points = [-3, -1, 1, 3].flatMap((a) => [-1, 1].map((b) => Float32Array.from([5 + a + 0.5 * b, 5 + a - 0.5 * b, 5])));

describe('principalAxes', () => {
  it('projects on the directions of most variance, in order, about the mean', () => {
    const projected = principalAxes(points, 2);
    expect(projected).toHaveLength(points.length);
    for (const [i, p] of projected.entries()) {
      const a = [-3, -1, 1, 3][Math.floor(i / 2)];
      const b = [-1, 1][i % 2];
      // Axis 1: (1, 1, 0) / sqrt(2), signed so its largest component is positive; axis 2: +-(1, -1, 0) / sqrt(2).
      expect(p[0]).toBeCloseTo(a * Math.SQRT2, 5);
      expect(Math.abs(p[1])).toBeCloseTo(Math.abs(b) * (Math.SQRT2 / 2), 5);
    }
    expect(principalAxes(points, 2)).toEqual(projected);
  });

  it('refuses a dimension count out of range and vectors of different lengths', () => {
    expect(() => principalAxes(points, 0)).toThrow('k must be an integer in [1, 3], got 0');
    expect(() => principalAxes(points, 4)).toThrow('k must be an integer in [1, 3], got 4');
    expect(() => principalAxes([Float32Array.from([1, 2]), Float32Array.from([1])], 1)).toThrow('vectors of different lengths');
  });
});
