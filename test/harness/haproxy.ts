// HAProxy (Debian's `haproxy`) in front of a fleet of HTTP servers, as a team would run it:
// round-robin for what needs no affinity (2026-07-28 requests), stickiness for 2025-era sessions
// (the Mcp-Session-Id header the replica answered initialize with) and legacy SSE sessions (the
// same header on GET /sse, then the sessionId of their POSTs). The configuration is the one
// docs/http.md shows. The process runs in the foreground with SIGKILL as its parent-death signal:
// it never outlives the test process.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../nine-router/process.js';
import { tempDir } from './harness.js';
import { diesWithParent } from './lifetime.js';
import { missingMessage } from './requires.js';
import { scaled } from './time.js';

export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));

export interface RunningHaproxy {
  url: string;
  /** The configuration it runs with. */
  config: string;
  log(): string;
  /** The replica (replica1, replica2…) that served each logged request for `path`, in order. */
  servedBy(path: string): string[];
  stop(): Promise<void>;
}

/** The configuration for `replicas` (base URLs), listening on `port`. */
export function haproxyConfig(port: number, replicas: readonly string[]): string {
  const servers = replicas.map(
    (url, i) => `  server replica${i + 1} ${new URL(url).host} check inter 1s fall 2 rise 1`,
  );
  return [
    'global',
    '  maxconn 2000',
    '  log stdout format raw local0',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  timeout connect 2s',
    '  timeout client 10m',
    '  timeout server 10m',
    '  timeout tunnel 1h',
    '  option redispatch',
    '  retries 2',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  stick-table type string len 64 size 100k expire 1h',
    '  stick match req.hdr(mcp-session-id)',
    '  stick match url_param(sessionId)',
    '  stick store-response res.hdr(mcp-session-id)',
    ...servers,
    '',
  ].join('\n');
}

export async function startHaproxy(replicas: readonly string[]): Promise<RunningHaproxy> {
  if (!HAPROXY) throw new Error(missingMessage('haproxy', 'the tests of replicas behind a load balancer'));
  const port = await freePort();
  const config = haproxyConfig(port, replicas);
  const file = join(tempDir('gtm-haproxy-'), 'haproxy.cfg');
  writeFileSync(file, config);
  const { command, args } = diesWithParent(HAPROXY, ['-db', '-f', file]);
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + scaled(10_000);
  for (;;) {
    const up = await fetch(`${url}/healthz`).then(
      (res) => res.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`HAProxy did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    config,
    log: () => log,
    servedBy: (path) =>
      log
        .split('\n')
        .filter((line) => line.includes(` ${path}`))
        .map((line) => /replicas\/(replica\d+)/.exec(line)?.[1] ?? '?'),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
