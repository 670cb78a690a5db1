import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real services on ephemeral loopback ports; two cores make more workers counter-productive.
    maxWorkers: 2,
  },
});
