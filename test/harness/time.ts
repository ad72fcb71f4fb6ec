// The one place a test's time bounds come from. A bound that exists to catch a hang (vitest's test
// and hook timeouts, the harness's waits for a line, a port, a process to exit, and a test's own
// "within N ms") is written as the time it takes on a quiet machine and passed through scaled():
// a busy or slow machine sets TEST_TIME_FACTOR (e.g. 3) instead of anyone raising a bound.
// Bounds that are the behaviour under test (a retry waits at least its Retry-After) are not scaled.

function parseFactor(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 1;
  const factor = Number(raw);
  if (!Number.isFinite(factor) || factor < 1) {
    throw new Error(`TEST_TIME_FACTOR must be a number of at least 1, not ${JSON.stringify(raw)}`);
  }
  return factor;
}

/** How much longer than on a quiet machine a wait may take (TEST_TIME_FACTOR, 1 by default). */
export const TIME_FACTOR = parseFactor(process.env.TEST_TIME_FACTOR);

/** A hang-catching bound of `ms` on a quiet machine, stretched by TEST_TIME_FACTOR. */
export function scaled(ms: number): number {
  return Math.round(ms * TIME_FACTOR);
}
