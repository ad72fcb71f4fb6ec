// Nothing the tests start may outlive the run, even when the runner is killed with SIGKILL (a CI
// timeout, the OOM killer): a gateway or a database left listening takes ports and CPU, and
// answers the next run's requests with this run's state. Three layers, one for each way a process
// can be started:
// - a single program that starts no children of its own (a spawned server, a registry) is run
//   under setpriv with SIGKILL as its parent-death signal: the kernel kills it the moment the
//   process that spawned it (a test worker, or vitest itself) dies, however that died;
// - a process group (9router and its Next.js server, Chromium and its helpers, a real MCP client
//   and the server it starts) carries a watchdog (watchdog.mjs) that kills the group once the
//   worker that started it or the run's vitest process is gone;
// - a test worker whose vitest process is gone exits (watchRunner(), from the set-up file), so the
//   two layers above fire for it too.
// TEST_RUNNER_PID names the run's vitest process (set by vitest.config.ts); a process started
// outside vitest (`npm run real-gateway`) is watched through the process that started it.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const WATCHDOG = join(import.meta.dirname, 'watchdog.mjs');
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/** The run's vitest process, or this process when not under vitest. */
export function runnerPid(): number {
  const pid = Number(process.env.TEST_RUNNER_PID);
  return Number.isInteger(pid) && pid > 1 ? pid : process.pid;
}

/** Called once in the vitest process (vitest.config.ts): the processes of this run watch it. */
export function markRunner(): void {
  process.env.TEST_RUNNER_PID = String(process.pid);
}

/** A process's start time (field 22 of /proc/<pid>/stat), null if there is no such process. */
export function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** The processes a group started by this process must not outlive: this one and the runner. */
function watchedPids(): string[] {
  const pids = [...new Set([process.pid, runnerPid()])];
  return pids.flatMap((pid) => {
    const start = startTime(pid);
    return start === null ? [] : [`${pid}:${start}`];
  });
}

/**
 * The command line that runs `command` with SIGKILL as its parent-death signal (setpriv execs it,
 * so the pid, stdio and exit status are the program's own). Unchanged where setpriv is missing.
 */
export function diesWithParent(command: string, args: string[]): { command: string; args: string[] } {
  if (!SETPRIV) return { command, args };
  return { command: SETPRIV, args: ['--pdeathsig=SIGKILL', '--', command, ...args] };
}

/**
 * Gives the process group `pgid` (a process spawned with `detached: true` leads its own group) a
 * watchdog that kills the whole group once this process or the run's vitest process is gone.
 * The watchdog exits by itself when the group ends first.
 */
export function guardGroup(pgid: number): void {
  const watched = watchedPids();
  if (!existsSync('/proc/self/stat') || watched.length === 0) return;
  const watchdog = spawn(process.execPath, [WATCHDOG, String(pgid), ...watched], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
}

/** The processes whose parent is `parent` (from /proc), e.g. the browser a library launched. */
export function childrenOf(parent: number): number[] {
  const children: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

/** Process group id of `pid` (field 5 of /proc/<pid>/stat), null if there is no such process. */
function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/**
 * Runs `start` (a library that launches a program in a group of its own, as playwright launches
 * Chromium) and gives every group a child of this process started meanwhile a watchdog.
 */
export async function guardingNewGroups<T>(start: () => Promise<T>): Promise<T> {
  const before = new Set(childrenOf(process.pid));
  try {
    return await start();
  } finally {
    for (const pid of childrenOf(process.pid)) {
      if (!before.has(pid) && groupOf(pid) === pid) guardGroup(pid);
    }
  }
}

let watching = false;

/**
 * In a test worker: exit once the run's vitest process is gone (checked every second, without
 * keeping the worker alive), so what the worker spawned under diesWithParent() dies with it.
 */
export function watchRunner(): void {
  const runner = runnerPid();
  if (watching || runner === process.pid) return;
  watching = true;
  const start = startTime(runner);
  if (start === null) return;
  setInterval(() => {
    if (startTime(runner) !== start) process.exit(1);
  }, 1_000).unref();
}

const atFileEnd = new Set<() => Promise<void>>();

/**
 * Registers how to stop something a test file started and may leave running (a PostgreSQL
 * server): stopLeftovers() runs it after the file. Returns the call that unregisters it.
 */
export function stopAtFileEnd(stop: () => Promise<void>): () => void {
  atFileEnd.add(stop);
  return () => atFileEnd.delete(stop);
}

/** Stops whatever the test file left running (cleanup.ts, after each file). */
export async function stopLeftovers(): Promise<void> {
  await Promise.all([...atFileEnd].map((stop) => stop()));
}
