import { defineConfig } from 'vitest/config';

// Two projects run side by side. `reference` drives the server against the reference service
// (test/reference-service), one instance per file. `real-gateway` runs the files named
// `*.real.test.ts`, which sit beside their feature's other tests and need the real gateway,
// 9router, started once for the run by its global set-up (test/nine-router); its files run one at
// a time, because the gateway's cooldowns lock a provider for every caller at once.
const REAL_GATEWAY_FILES = 'test/**/*.real.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['test/harness/cleanup.ts'],
    reporters: ['default', './test/nine-router/reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'reference', include: ['test/**/*.test.ts'], exclude: [REAL_GATEWAY_FILES] },
      },
      {
        extends: true,
        test: {
          name: 'real-gateway',
          include: [REAL_GATEWAY_FILES],
          globalSetup: ['test/nine-router/global-setup.ts'],
          fileParallelism: false,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
