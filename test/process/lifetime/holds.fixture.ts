// Started by test/process/lifetime.test.ts through ./vitest.config.ts, never by the main run (its
// name does not end in .test.ts). Starts what the tests start that lives on — the built server
// over stdio and over HTTP, a PostgreSQL server, Chromium, and (LIFETIME_GATEWAY=1) 9router,
// started by the run's global set-up — writes who they are to LIFETIME_RECORD, and waits to be
// killed.
import { writeFileSync } from 'node:fs';
import { inject, it } from 'vitest';
import { connectStdio } from '../../harness/harness.js';
import { startHttpCli } from '../../harness/http-harness.js';
import { startPostgres } from '../../harness/postgres.js';
import { systemHas } from '../../harness/requires.js';
import type {} from '../../nine-router/global-setup.js';
import { ViewHost } from '../../views/view-host.js';

it('holds its processes until it is killed', async () => {
  const env = { GATEWAY_BASE_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: 'unused' };
  const stdio = await connectStdio(env);
  const http = await startHttpCli(env);
  const groups: Record<string, number> = {};
  const processes: Record<string, number> = {
    worker: process.pid,
    'server over stdio': stdio.pid() ?? 0,
    'server over HTTP': http.child.pid ?? 0,
  };
  if (systemHas('postgresql', 'the PostgreSQL part of the lifetime test')) {
    processes.postgres = (await startPostgres()).pid;
  }
  if (systemHas('chromium', 'the Chromium part of the lifetime test')) {
    const host = new ViewHost();
    await host.start();
  }
  if (process.env.LIFETIME_GATEWAY === '1') groups['9router'] = inject('realGateway').pid;
  writeFileSync(
    process.env.LIFETIME_RECORD ?? '',
    JSON.stringify({ processes, groups, runner: process.env.TEST_RUNNER_PID, ppid: process.ppid }),
  );
  await new Promise(() => undefined);
});
