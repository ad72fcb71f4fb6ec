// Global set-up of the `heavy` project (vitest.config.ts). Some suites check for a system program
// or for root in their own files, and skip when it is missing; with CI=true (requires.ts) the run
// fails here instead, before any test, naming what is missing and how to install it.
import { IN_CI, lacking, missingMessage, type SystemNeed } from './requires.js';

const CHECKED_BY_THEIR_FILES: Partial<Record<SystemNeed, string>> = {
  root:
    'the ledger tests of folders owned by another user, of a device file and of read-only file ' +
    'systems (test/ledger/hostile-places.test.ts, test/ledger/ledger-place.test.ts)',
  bindfs: 'the ledger test on a FUSE file system (test/ledger/hostile-places.test.ts)',
};

export function setup(): void {
  if (!IN_CI) return;
  const needs = Object.keys(CHECKED_BY_THEIR_FILES) as SystemNeed[];
  const missing = lacking(needs).map((need) => missingMessage(need, CHECKED_BY_THEIR_FILES[need] ?? need));
  if (missing.length) throw new Error(missing.join('\n'));
}
