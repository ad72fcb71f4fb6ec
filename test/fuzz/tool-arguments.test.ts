import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { textOf } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { callAndCheck, checkSavedFilesUnchanged } from './harness/checks.js';
import { newStats, report, summary } from './harness/stats.js';
import { toolCalls } from './harness/tool-args.js';
import { closeWorld, createWorld, type World } from './harness/world.js';

/**
 * Property-based fuzzing of every tool through the real MCP client (in memory) against the
 * reference service: random and hostile calls, each checked for a well-formed answer, no bug
 * report, no content from outside the input roots, and no file written outside the output
 * directory. Reproducible: the seed is fixed (FUZZ_SEED overrides it) and printed.
 * `npm test` makes 1,000 calls; `npm run test:all` 10,500 (FUZZ_RUNS). Every run is made, however
 * long it takes: the count is coverage, never a throughput floor (calls per second are
 * `npm run bench`'s).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 424242);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1_000);
/** A hang bound, not a budget: about 4.5 ms a call on a quiet 2-core machine, given 15. */
const TIMEOUT_MS = scaled(30_000 + RUNS * 15);

let world: World;

beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await closeWorld(world);
});

it(`survives ${RUNS} hostile tool calls (seed ${SEED})`, { timeout: TIMEOUT_MS }, async () => {
  console.log(`fuzz: seed ${SEED}, ${RUNS} runs (set FUZZ_SEED / FUZZ_RUNS to change)`);
  const stats = newStats();
  await fc.assert(
    fc.asyncProperty(toolCalls(world), (call) => callAndCheck(world, call, stats)),
    { seed: SEED, numRuns: RUNS },
  );
  console.log(`fuzz: ${summary(stats)}`);
  if (process.env.FUZZ_REPORT) console.log(report(stats));
  checkSavedFilesUnchanged(world, stats);
  expect(stats.calls).toBe(RUNS);
  // Both halves were exercised: a fuzz that only ever hits schema errors proves little.
  expect(stats.succeeded).toBeGreaterThan(RUNS / 5);
  expect(stats.failed).toBeGreaterThan(RUNS / 5);
  expect(stats.saved.size).toBeGreaterThan(0);
});

it('still answers normally afterwards, and the sentinels are untouched', async () => {
  const result = await world.conn.client.callTool({
    name: 'web_search',
    arguments: { query: 'after the storm' },
  });
  expect(result.isError).toBeFalsy();
  expect(textOf(result)).toContain('Result 1 for after the storm');
  for (const sentinel of world.sentinels) {
    const sha = createHash('sha256').update(readFileSync(sentinel.path)).digest('hex');
    expect(sha, sentinel.path).toBe(sentinel.sha256);
  }
  expect(world.loggedErrors).toEqual([]);
});
