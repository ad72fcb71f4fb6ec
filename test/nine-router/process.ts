// Starts 9router's Next.js server the way its own launcher's spawnServer() does, but without the
// launcher (cli.js kills every process that looks like 9router and whatever holds its port).
// Detached, in its own process group, with HOME pointing at a scratch folder (its database and
// secrets live in $HOME/.9router), stopped by PID, and the group killed by a watchdog if the
// process that started it dies first (test/harness/lifetime.ts).
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { processAlive } from '../harness/harness.js';
import { guardGroup } from '../harness/lifetime.js';
import { notInQuickTier } from '../harness/tier.js';
import { scaled } from '../harness/time.js';

export interface NineRouterProcess {
  url: string;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '(no log)';
  }
}

export async function startNineRouter(
  appDir: string,
  home: string,
  env: Record<string, string>,
): Promise<NineRouterProcess> {
  notInQuickTier('9router (the real gateway)');
  const port = await freePort();
  const logFile = join(home, 'nine-router.log');
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--dns-result-order=ipv4first', 'custom-server.js'], {
    cwd: appDir,
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      PORT: String(port),
      HOSTNAME: '127.0.0.1',
      NODE_PATH: join(appDir, 'node_modules'),
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      ...env,
    },
  });
  child.unref();
  const pid = child.pid;
  if (!pid) throw new Error('9router did not start: no process id');
  // Its group (the Next.js server and whatever that starts) dies with the run, even a killed one.
  guardGroup(pid);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      try {
        process.kill(-pid, signal);
      } catch {
        // Already gone.
      }
      const deadline = Date.now() + scaled(3000);
      while (processAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (!processAlive(pid)) return;
    }
  };
  const deadline = Date.now() + scaled(60_000);
  while (Date.now() < deadline) {
    if (!processAlive(pid)) throw new Error(`9router exited at start: ${logTail(logFile)}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok && ((await res.json()) as { ok?: boolean }).ok) return { url, pid, logFile, stop };
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`9router did not answer /api/health within ${scaled(60)} s: ${logTail(logFile)}`);
}
