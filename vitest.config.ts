import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three projects, by how a test runs (tests/README.md): `unit` (pure functions), `in-process`
 * (createRuntime + fetch(Request), no socket) and `e2e` (real HTTP and real services). `e2e` takes every
 * other test file, so a test added outside the three folders still runs.
 * `npm test` runs all three; `npm run test:fast` runs unit and in-process.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real services on ephemeral loopback ports; two cores make more workers counter-productive.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'in-process', include: ['tests/in-process/**/*.test.ts'] } },
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
