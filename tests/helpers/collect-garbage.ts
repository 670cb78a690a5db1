import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, whatever flags the test process started with (`--expose-gc` set at run time
 * and `gc` read from a fresh context, as bench/scale.ts does): for tests that check a WeakRef was cleared.
 */
export const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();
