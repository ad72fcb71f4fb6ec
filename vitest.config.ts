import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { markRunner } from './test/harness/lifetime.js';
import { scaled } from './test/harness/time.js';

// Everything the tests start watches this process and dies with it (test/harness/lifetime.ts).
markRunner();

// Three projects, in two tiers.
//
// `npm test` runs `quick`: every test file that runs in-process, or starts the built server
// (dist/cli.js) and the reference service, or the PostgreSQL server test/harness/postgres.ts makes
// for the ledger's shared suites (about a second). It is meant to stay within two minutes on a quiet
// 2-core machine, and no test in it has a wall-clock floor.
//
// `npm run test:all` runs every project, then the tests of the server as users start it on the
// other Node lines (scripts/test-on-node.ts). Beyond `quick`:
// - `heavy`: the files below, each for what it starts or how long it runs;
// - `real-gateway`: the files named `*.real.test.ts`, beside their feature's other tests, which
//   need the real gateway, 9router, started once for the run by its global set-up
//   (test/nine-router); its files run one at a time, because the gateway's cooldowns lock a
//   provider for every caller at once.
// A file goes in `quick` unless it is listed here. The harness refuses to start Chromium, 9router,
// a real MCP client or a local npm registry in `quick` (TEST_TIER, test/harness/tier.ts), so a
// file that starts one and is not listed fails and says to list it.
const REAL_GATEWAY_FILES = 'test/**/*.real.test.ts';
const HEAVY_FILES = [
  // Real MCP clients (Claude Code, Codex, Gemini CLI), installed from the npm registry.
  'test/clients/**/*.test.ts',
  // Chromium.
  'test/views/views-browser.test.ts',
  // The package through a local npm registry (Verdaccio), npm pack, npx; the release script; the
  // container image where Docker runs; `npm run demo` through tsx.
  'test/process/published-package.test.ts',
  'test/process/release.test.ts',
  'test/process/container.test.ts',
  'test/process/demo.test.ts',
  // 500 MiB through download and upload, and RSS sampled while they stream.
  'test/process/streaming-memory.test.ts',
  // The PostgreSQL harness itself: servers started, killed with their test process, left behind.
  'test/process/postgres-harness.test.ts',
  // Nothing a run starts outlives it: runs of vitest started and SIGKILLed.
  'test/process/lifetime.test.ts',
  // The fault matrix: every tool against every fault, timeouts and hangs included, in memory and
  // over stdio in both eras; it writes docs/reliability.md (most of a minute).
  'test/gateway/fault-matrix.test.ts',
  // Both eras of MCP through every transport, a spawned server for each case (most of a minute).
  'test/mcp/session/eras.test.ts',
  // Load: thousands of calls, memory against a baseline.
  'test/transports/stdio-load.test.ts',
  'test/transports/http/load.test.ts',
  // The ledger: processes racing on one ledger, PostgreSQL on its own (servers, hosts sharing
  // one), and places that need root, mounts and bindfs, whose refusals are timed in wall-clock
  // milliseconds.
  'test/ledger/processes.test.ts',
  'test/ledger/postgres-store.test.ts',
  'test/ledger/postgres-ledger.test.ts',
  'test/ledger/hostile-places.test.ts',
  'test/ledger/ledger-place.test.ts',
  // Processes on one ledger whose clocks libfaketime sets apart.
  'test/ledger/clocks.test.ts',
  // A fleet: three servers, PostgreSQL and HAProxy.
  'test/transports/http/fleet.test.ts',
  // Node 20 from the npm registry, against every entry.
  'test/process/node-version.test.ts',
];

export default defineConfig({
  test: {
    // Bounds that catch a hang, not performance: TEST_TIME_FACTOR stretches them on a busy machine.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(30_000),
    teardownTimeout: scaled(30_000),
    pool: 'forks',
    // Most files wait on timers and sockets rather than the CPU: a worker more than the cores.
    maxWorkers: availableParallelism() + 1,
    setupFiles: ['test/harness/cleanup.ts'],
    // The SDK v2 client rejects a call whose POST a load balancer answers 502 (its replica died
    // under it, test/transports/http/fleet.test.ts), and also leaves that same rejection unhandled
    // inside its transport. That one is the SDK's, said by the call already: nothing else is hidden.
    onUnhandledError: (error) =>
      !(
        (error as { code?: unknown; status?: unknown }).code === 'CLIENT_HTTP_NOT_IMPLEMENTED' &&
        (error as { status?: unknown }).status === 502
      ),
    reporters: ['default', './test/nine-router/reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'quick',
          include: ['test/**/*.test.ts'],
          exclude: [REAL_GATEWAY_FILES, ...HEAVY_FILES],
          env: { TEST_TIER: 'quick' },
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'heavy',
          include: HEAVY_FILES,
          exclude: [REAL_GATEWAY_FILES],
          // Its tests move hundreds of megabytes or thousands of calls: a hang still ends them.
          testTimeout: scaled(120_000),
          hookTimeout: scaled(120_000),
          // With CI=true, fails the run when root or bindfs is missing (suites that check for
          // them in their own files would skip); Chromium and PostgreSQL fail their files.
          globalSetup: ['test/harness/system-check.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'real-gateway',
          include: [REAL_GATEWAY_FILES],
          globalSetup: ['test/nine-router/global-setup.ts'],
          fileParallelism: false,
          hookTimeout: scaled(300_000),
        },
      },
    ],
  },
});
