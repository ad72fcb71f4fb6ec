// Loaded by vitest before every test file (vitest.config.ts setupFiles).
import { afterAll } from 'vitest';
import { removeTempDirs } from './harness.js';
import { stopLeftovers, watchRunner } from './lifetime.js';

// A worker whose vitest process was killed exits, and what it spawned goes with it.
watchRunner();

afterAll(async () => {
  // A PostgreSQL server a test file left running, before the folders (its own goes with it).
  await stopLeftovers();
  removeTempDirs();
});
