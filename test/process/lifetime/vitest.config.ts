// A run of vitest for test/process/lifetime.test.ts to kill: one file (holds.fixture.ts) that
// starts one of each kind of long-lived process the tests start, records them, and waits.
// LIFETIME_GATEWAY=1 adds the real gateway, started by its global set-up as in a real run.
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { markRunner } from '../../harness/lifetime.js';

markRunner();

const root = join(import.meta.dirname, '../../..');

export default defineConfig({
  test: {
    root,
    include: ['test/process/lifetime/holds.fixture.ts'],
    pool: 'forks',
    setupFiles: ['test/harness/cleanup.ts'],
    globalSetup: process.env.LIFETIME_GATEWAY === '1' ? ['test/nine-router/global-setup.ts'] : [],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
