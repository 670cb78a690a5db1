/**
 * The evaluation protocol (bench/search/README.md): every labelled query belongs, for good, to the part
 * tuned on or to the frozen part, by a hash of its set and id (or text) alone, so that adding queries
 * never moves one from a part to the other, and no choice of ours picks which queries are frozen.
 */
import { createHash } from 'node:crypto';

import type { LabelledQuery } from '../../tests/fixtures/search-data.ts';

export type Part = 'tune' | 'frozen';

/** Share of each set frozen: looked at only when deciding, never while tuning. */
export const FROZEN_SHARE = 0.5;

/** The part `query` of set `set` belongs to: SHA-256 of `set`, NUL, then the id (else the query text). */
export function partOf(set: string, query: LabelledQuery): Part {
  const digest = createHash('sha256')
    .update(set)
    .update('\0')
    .update(query.id ?? query.query)
    .digest();
  return digest.readUInt32BE(0) / 2 ** 32 < FROZEN_SHARE ? 'frozen' : 'tune';
}

/** The queries of `part` (all of them for 'all'), in file order. */
export function queriesOf(set: string, queries: readonly LabelledQuery[], part: Part | 'all'): LabelledQuery[] {
  return part === 'all' ? [...queries] : queries.filter((q) => partOf(set, q) === part);
}
