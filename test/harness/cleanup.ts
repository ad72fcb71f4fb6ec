// Loaded by vitest before every test file (vitest.config.ts setupFiles).
import { afterAll } from 'vitest';
import { removeTempDirs } from './harness.js';
import { stopAllPostgres } from './postgres.js';

afterAll(async () => {
  // A PostgreSQL server a test file left running, before the folders (its own goes with it).
  await stopAllPostgres();
  removeTempDirs();
});
