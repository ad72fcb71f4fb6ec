// A fleet as a team runs one: replicas of the built server over HTTP, sharing one PostgreSQL
// (GATEWAY_LEDGER_URL) and one output folder, behind HAProxy (haproxy.ts). Each replica is a real
// process, so one can be killed with SIGKILL in the middle of a test.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningHaproxy, startHaproxy } from './haproxy.js';
import { tempDir } from './harness.js';
import { type HttpServerProcess, startHttpCli } from './http-harness.js';
import { type RunningPostgres, startPostgres } from './postgres.js';

export interface Fleet {
  /** The load balancer's base URL: what clients are given. */
  url: string;
  replicas: HttpServerProcess[];
  postgres: RunningPostgres;
  haproxy: RunningHaproxy;
  /** The output folder every replica shares. */
  outputDir: string;
  stop(): Promise<void>;
}

export async function startFleet(env: Record<string, string>, count = 3): Promise<Fleet> {
  const postgres = await startPostgres();
  const outputDir = join(tempDir('gtm-fleet-'), 'output');
  mkdirSync(outputDir, { recursive: true });
  const replicas: HttpServerProcess[] = [];
  let haproxy: RunningHaproxy | undefined;
  const stop = async () => {
    await haproxy?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await postgres.stop();
  };
  try {
    for (let i = 0; i < count; i++) {
      replicas.push(
        await startHttpCli({
          GATEWAY_LEDGER_URL: postgres.url,
          GATEWAY_OUTPUT_DIR: outputDir,
          GATEWAY_LOG_LEVEL: 'debug',
          ...env,
        }),
      );
    }
    haproxy = await startHaproxy(replicas.map((replica) => replica.url));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: haproxy.url, replicas, postgres, haproxy, outputDir, stop };
}
