import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three projects, by how a test runs (tests/README.md): `unit` (pure functions), `in-process`
 * (createRuntime + fetch(Request), no socket) and `e2e` (real HTTP and real services). `e2e` takes every
 * other test file, so a test added outside the three folders still runs.
 * `npm test` runs all three; `npm run test:fast` runs unit and in-process.
 */
export default defineConfig({
  test: {
    // Transformed modules persist on disk between runs (node_modules/.experimental-vitest-cache, keyed by
    // each file's content and the config; default in vitest 5): a run no longer transforms the gateway's
    // TypeScript again, which was about 2.5 s of CPU of every in-process worker's start on this machine.
    experimental: { fsModuleCache: true },
    // One temporary root per run, removed at its end (tests/helpers/temp-root.ts).
    globalSetup: ['tests/helpers/temp-root.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real services on ephemeral loopback ports; two cores make more workers counter-productive.
    maxWorkers: 2,
    projects: [
      // unit and in-process files share their worker's modules (isolate: false): evaluating the gateway's
      // module graph again for every file was most of their CPU time (import 34 s of a 42 s run, 11 s
      // without). They hold no process-wide state of their own (no env changes, no module mocks; fake
      // timers are restored; each runtime has its own registry, caches and origin); e2e files stay isolated.
      // Forked processes, not worker threads: on threads the search suites ran 1.5-3x longer (index-reuse 4.9 s
      // -> 11.0 s) beside another worker in the same process, and test:fast was no faster (interleaved, load
      // 6-10: threads 59-100 s, forks 58 s with the same module cache). A third worker costs a third import of
      // the gateway and was no faster on 2 cores.
      // bench/**/*.test.ts: the benchmarks' own checks (their metrics and baselines), beside the code they check.
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts', 'bench/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'in-process', include: ['tests/in-process/**/*.test.ts'], isolate: false } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['tests/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'tests/unit/**', 'tests/in-process/**'],
        },
      },
    ],
  },
});
