import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { textOf } from '../harness/harness.js';
import { callAndCheck, checkSavedFilesUnchanged } from './harness/checks.js';
import { newStats, report, summary } from './harness/stats.js';
import { toolCalls } from './harness/tool-args.js';
import { closeWorld, createWorld, type World } from './harness/world.js';

/**
 * Property-based fuzzing of every tool through the real MCP client (in memory) against the
 * reference service: at least 10,000 random and hostile calls, each checked for a well-formed
 * answer, no bug report, no content from outside the input roots, and no file written outside the
 * output directory. Reproducible: the seed is fixed (FUZZ_SEED overrides it) and printed.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 424242);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_500);
const MIN_CALLS = Math.min(10_000, RUNS);
/** The whole property stops here even if runs remain (then the call count below fails it). */
const TIME_BUDGET_MS = Number(process.env.FUZZ_TIME_BUDGET_MS ?? 75_000);

let world: World;

beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await closeWorld(world);
});

it(`survives ${RUNS} hostile tool calls (seed ${SEED})`, { timeout: TIME_BUDGET_MS + 60_000 }, async () => {
  console.log(`fuzz: seed ${SEED}, ${RUNS} runs (set FUZZ_SEED / FUZZ_RUNS to change)`);
  const stats = newStats();
  await fc.assert(
    fc.asyncProperty(toolCalls(world), (call) => callAndCheck(world, call, stats)),
    { seed: SEED, numRuns: RUNS, plugins: [fc.interruptAfterTimeLimit(TIME_BUDGET_MS)] },
  );
  console.log(`fuzz: ${summary(stats)}`);
  if (process.env.FUZZ_REPORT) console.log(report(stats));
  checkSavedFilesUnchanged(world, stats);
  expect(stats.calls).toBeGreaterThanOrEqual(MIN_CALLS);
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
