// Nothing a test run starts outlives it, even when the run is killed with SIGKILL: a run of vitest
// (./lifetime/vitest.config.ts) starts the built server over stdio and over HTTP, a PostgreSQL
// server, Chromium and 9router with its Next.js server, as the tests do, and is killed once they
// run — its vitest process alone (its workers are orphaned), or its whole process group at once
// (what a CI timeout does). Every process of the run, and of the groups it started, must be gone
// within seconds (test/harness/lifetime.ts says how).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, tempDir } from '../harness/harness.js';
import { guardGroup } from '../harness/lifetime.js';
import { scaled } from '../harness/time.js';

const VITEST = join(PROJECT_ROOT, 'node_modules/vitest/vitest.mjs');
const CONFIG = join(PROJECT_ROOT, 'test/process/lifetime/vitest.config.ts');
/** How long after the kill the last process may still run: the watchdogs poll every 200 ms, a
 * group gets 2 s between SIGTERM and SIGKILL, and a worker checks its runner every second. */
const GONE_WITHIN_MS = scaled(10_000);

interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  start: string;
  command: string;
}

function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return {
      pid,
      state: fields[0] ?? '',
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      start: fields[19] ?? '',
      command: command.slice(0, 160),
    };
  } catch {
    return null;
  }
}

function allProcs(): Proc[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => readProc(Number(entry)) ?? []);
}

/** Every process descended from `root`, and every member of `groups`. */
function treeOf(root: number, groups: number[]): Proc[] {
  const procs = allProcs();
  const found = new Map<number, Proc>();
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift() as number;
    for (const proc of procs) {
      if ((proc.pid === pid || proc.ppid === pid) && !found.has(proc.pid)) {
        found.set(proc.pid, proc);
        if (proc.pid !== pid) queue.push(proc.pid);
      }
    }
  }
  for (const proc of procs) if (groups.includes(proc.pgid)) found.set(proc.pid, proc);
  return [...found.values()];
}

/** The ones still running: the same process (pid and start time), and not a zombie. */
function running(procs: Proc[]): Proc[] {
  return procs.filter((proc) => {
    const now = readProc(proc.pid);
    return now !== null && now.start === proc.start && now.state !== 'Z';
  });
}

interface Recorded {
  processes: Record<string, number>;
  groups: Record<string, number>;
  runner: string;
}

/** The environment of the run to kill: this run's own markers left out. */
function runEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(VITEST|TEST_RUNNER_PID$|TEST_TIER$)/.test(name)),
  );
  return { ...env, ...extra };
}

async function startRun(
  gateway: boolean,
): Promise<{ child: ChildProcess; recorded: Recorded; output(): string }> {
  const record = join(tempDir('gtm-lifetime-'), 'record.json');
  const child = spawn(process.execPath, [VITEST, 'run', '--config', CONFIG], {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: runEnv({ LIFETIME_RECORD: record, LIFETIME_GATEWAY: gateway ? '1' : '0' }),
  });
  if (child.pid) guardGroup(child.pid);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + scaled(gateway ? 180_000 : 60_000);
  while (!existsSync(record) || readFileSync(record, 'utf8') === '') {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the run ended before its processes started: ${output}`);
    }
    if (Date.now() > deadline) {
      process.kill(-(child.pid as number), 'SIGKILL');
      throw new Error(`the run's processes did not start in time: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, recorded: JSON.parse(readFileSync(record, 'utf8')) as Recorded, output: () => output };
}

async function killAndCheck(how: 'vitest' | 'group', gateway: boolean): Promise<void> {
  const { child, recorded, output } = await startRun(gateway);
  const runner = child.pid as number;
  // The worker watches this run's vitest process, not the one running this test.
  expect(recorded.runner).toBe(String(runner));
  const tree = treeOf(runner, Object.values(recorded.groups));
  const pids = tree.map((proc) => proc.pid);
  for (const [name, pid] of Object.entries(recorded.processes)) expect(pids, name).toContain(pid);
  for (const [name, pgid] of Object.entries(recorded.groups)) {
    // 9router's server names itself next-server; whatever it starts stays in its group.
    expect(tree.filter((proc) => proc.pgid === pgid).length, name).toBeGreaterThan(0);
  }
  process.kill(how === 'vitest' ? runner : -runner, 'SIGKILL');
  const deadline = Date.now() + GONE_WITHIN_MS;
  while (running(tree).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const left = running(tree).map((proc) => `${proc.pid} ${proc.command}`);
  expect(left, output()).toEqual([]);
}

describe('a test run killed with SIGKILL leaves nothing running', () => {
  it('its vitest process alone: the orphaned worker, servers, PostgreSQL and Chromium go', {
    timeout: scaled(120_000),
  }, async () => {
    await killAndCheck('vitest', false);
  });

  it('its vitest process alone, with 9router: the gateway and its Next.js server go too', {
    timeout: scaled(300_000),
  }, async () => {
    await killAndCheck('vitest', true);
  });

  it('its whole process group at once, with 9router', { timeout: scaled(300_000) }, async () => {
    await killAndCheck('group', true);
  });
});
