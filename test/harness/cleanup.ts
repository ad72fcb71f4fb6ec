// Loaded by vitest before every test file (vitest.config.ts setupFiles).
import { afterAll } from 'vitest';
import { removeTempDirs } from './harness.js';

afterAll(removeTempDirs);
