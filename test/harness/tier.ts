// The quick tier (`npm test`, the `quick` project in vitest.config.ts, TEST_TIER=quick) runs what
// is in-process or starts the built server. The programs that make a file slow, or need something
// a developer may not have, refuse to start there, so a file that needs one cannot slip into it.

/** Throws in the quick tier: `what` (e.g. "Chromium") belongs to a file listed in HEAVY_FILES. */
export function notInQuickTier(what: string): void {
  if (process.env.TEST_TIER !== 'quick') return;
  throw new Error(
    `${what} is not started by \`npm test\` (the quick tier): list this test file in HEAVY_FILES in ` +
      'vitest.config.ts, so that it runs in `npm run test:all`',
  );
}
