// The ledger shared by real processes: a race for the last calls a limit allows, a process killed
// with a call in flight, appends at once that must never interleave, a lock left by a dead holder.

import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { linkSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.js';
import { parseLimits } from '../../src/ledger/limits.js';
import { FileLock } from '../../src/ledger/lock.js';
import type { Logger } from '../../src/lib/log.js';
import { PROJECT_ROOT, processAlive, tempDir } from '../harness/harness.js';
import type { WorkerTask } from './worker.js';

const WORKER = join(PROJECT_ROOT, 'test/ledger/worker.ts');

interface Worker {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  /** The one line of JSON the worker prints when done. */
  result: Promise<Record<string, unknown>>;
  stderr(): string;
  go(): void;
}

function startWorker(task: WorkerTask): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(task)], {
    cwd: PROJECT_ROOT,
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let ready!: () => void;
  let finished!: (value: Record<string, unknown>) => void;
  const result = new Promise<Record<string, unknown>>((resolve, reject) => {
    finished = resolve;
    child.once('exit', (code, signal) =>
      reject(new Error(`worker exited (${code ?? signal}) before its result: ${stderr}`)),
    );
  });
  result.catch(() => undefined);
  const readyPromise = new Promise<void>((resolve) => {
    ready = resolve;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    const lines = stdout.split('\n');
    if (lines.includes('ready')) ready();
    const json = lines.find((l) => l.startsWith('{'));
    if (json) finished(JSON.parse(json));
  });
  return { child, ready: readyPromise, result, stderr: () => stderr, go: () => child.stdin.write('go\n') };
}

async function runTogether(
  tasks: WorkerTask[],
): Promise<{ results: Record<string, unknown>[]; stderr: string[] }> {
  const workers = tasks.map(startWorker);
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  const results = await Promise.all(workers.map((w) => w.result));
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => (w.child.exitCode !== null ? resolve(null) : w.child.once('exit', resolve))),
    ),
  );
  return { results, stderr: workers.map((w) => w.stderr()) };
}

function collectingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    level: 'debug',
    warnings,
    error: (m) => warnings.push(m),
    warn: (m) => warnings.push(m),
    info() {},
    debug() {},
  };
}

function limits(text: string) {
  const parsed = parseLimits(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function allLines(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  const pid = Number(child.stdout);
  expect(processAlive(pid)).toBe(false);
  return pid;
}

describe('the ledger across processes', () => {
  it('lets exactly two of six video submits from three processes through video=2/day', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir('gtm-ledger-');
      const { results, stderr } = await runTogether(
        ['a', 'b', 'c'].map((name) => ({ dir, action: 'race', calls: 2, name, limits: 'video=2/day' })),
      );
      const outcomes = results.flatMap((r) => r.outcomes as string[]);
      expect(outcomes).toHaveLength(6);
      expect(outcomes.filter((o) => o === 'go')).toHaveLength(2);
      expect(outcomes.filter((o) => o === 'limited')).toHaveLength(4);
      expect(stderr.join('')).toBe('');
      // The file agrees: two calls accepted, four recorded as declined by the limit.
      const ledger = Ledger.open({ dir, log: collectingLogger(), limits: limits('video=2/day') });
      const usage = await ledger.usage(10);
      expect(usage.periods.day.kinds.video.calls).toBe(2);
      expect(usage.periods.day.notBilled).toBe(4);
      expect(usage.limits).toEqual([expect.objectContaining({ limit: 'video=2/day', used: 2, left: 0 })]);
    }
  });

  it('lets exactly ten of sixty submits through video=10/day, in a longer race', async () => {
    for (let round = 0; round < 2; round++) {
      const dir = tempDir('gtm-ledger-');
      const { results } = await runTogether(
        ['a', 'b', 'c'].map((name) => ({ dir, action: 'race', calls: 20, name, limits: 'video=10/day' })),
      );
      const outcomes = results.flatMap((r) => r.outcomes as string[]);
      expect(outcomes.filter((o) => o === 'go')).toHaveLength(10);
      expect(outcomes.filter((o) => o === 'limited')).toHaveLength(50);
    }
  });

  it('lists a submit whose process was killed mid-call as unknown, with its idempotency key, and counts it', async () => {
    const dir = tempDir('gtm-ledger-');
    const worker = startWorker({ dir, action: 'hang', name: 'killed' });
    await worker.ready;
    worker.go();
    const begun = await worker.result;
    expect(begun.status).toBe('go');
    const log = collectingLogger();
    const other = Ledger.open({ dir, log, limits: limits('video=1/day') });
    // While the process lives, its call is in flight.
    expect((await other.recentJobs()).map((j) => j.state)).toEqual(['pending']);
    worker.child.kill('SIGKILL');
    await new Promise((resolve) => worker.child.once('exit', resolve));

    const jobs = await other.recentJobs();
    expect(jobs).toEqual([
      expect.objectContaining({
        state: 'unknown',
        jobId: null,
        idempotencyKey: 'key-killed',
        words: 'a lighthouse in a storm, slow zoom out,…',
        model: 'xai/grok-imagine-video',
        thisSession: false,
      }),
    ]);
    const usage = await other.usage();
    expect(usage.periods.day.unknown).toBe(1);
    // It may have been billed, so it counts against the limit.
    const next = await other.begin({
      kind: 'video',
      tool: 'video_generate',
      model: 'xai/grok-imagine-video',
      text: 'another',
    });
    expect(next.status).toBe('limited');
    expect(log.warnings).toEqual([]);
  });

  it('never interleaves lines appended by three processes at once, each line under 4 KiB', async () => {
    const dir = tempDir('gtm-ledger-');
    const { results, stderr } = await runTogether(
      ['p', 'q', 'r'].map((name) => ({ dir, action: 'many', calls: 150, name })),
    );
    expect(results.map((r) => r.calls)).toEqual([150, 150, 150]);
    expect(stderr.join('')).toBe('');
    const lines = allLines(dir);
    expect(lines).toHaveLength(900);
    for (const line of lines) {
      expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(4095);
      expect(() => JSON.parse(line)).not.toThrow();
    }
    // The longest records the API can make still keep their job ids.
    const ends = lines.map((l) => JSON.parse(l)).filter((r) => r.type === 'end');
    expect(ends.every((r) => typeof r.job === 'string' && r.job.length === 2048)).toBe(true);
    expect(Math.max(...lines.map((l) => Buffer.byteLength(l)))).toBeGreaterThan(3000);
    const log = collectingLogger();
    const reader = Ledger.open({ dir, log });
    expect((await reader.usage()).periods.day.kinds.speech).toEqual({
      calls: 450,
      amount: 450 * 70,
      unit: 'chars',
    });
    expect(log.warnings).toEqual([]);
  });

  it('takes the lock over from a holder that died holding it', async () => {
    const dir = tempDir('gtm-ledger-');
    const pid = deadPid();
    // As a process leaves it when killed holding the lock: its holder file, linked as the lock.
    const holderFile = join(dir, `.holder.${pid}.n1`);
    writeFileSync(
      holderFile,
      `${JSON.stringify({ pid, host: hostname(), nonce: 'n1', at: new Date().toISOString() })}\n`,
    );
    linkSync(holderFile, join(dir, '.lock'));
    const log = collectingLogger();
    const ledger = Ledger.open({ dir, log, lockWaitMs: 2_000 });
    const started = Date.now();
    const result = await ledger.begin({
      kind: 'chat',
      tool: 'ask_model',
      model: 'openai/gpt-4o-mini',
      text: 'hi',
    });
    expect(result.status).toBe('go');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(log.warnings).toEqual([
      `ledger: took over the lock of ${dir} from process ${pid} on ${hostname()}`,
    ]);
    // The lock is free again, and the dead holder's file is swept away; ours goes on close.
    expect(
      readdirSync(dir)
        .filter((n) => n.startsWith('.'))
        .map((n) => n.replace(/\.[^.]+$/, '')),
    ).toEqual([`.holder.${process.pid}`]);
    await ledger.close();
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it("lets exactly two through when three processes race to take over a dead holder's lock", async () => {
    for (let round = 0; round < 2; round++) {
      const dir = tempDir('gtm-ledger-');
      const holder = { pid: deadPid(), host: hostname(), nonce: 'gone', at: new Date().toISOString() };
      writeFileSync(join(dir, '.lock'), `${JSON.stringify(holder)}\n`);
      // A taker that died mid-takeover, too.
      if (round === 1)
        writeFileSync(join(dir, '.lock.break'), `${JSON.stringify({ ...holder, pid: deadPid() })}\n`);
      const { results, stderr } = await runTogether(
        ['a', 'b', 'c'].map((name) => ({ dir, action: 'race', calls: 2, name, limits: 'video=2/day' })),
      );
      expect(results.flatMap((r) => r.outcomes as string[]).filter((o) => o === 'go')).toHaveLength(2);
      const takeovers = stderr.join('').match(/took over the lock/g) ?? [];
      expect(takeovers).toHaveLength(1);
      expect(readdirSync(dir).filter((n) => n.startsWith('.lock'))).toEqual([]);
    }
  });

  it('waits for a live holder, and takes over a lock held past the bound', async () => {
    const dir = tempDir('gtm-ledger-');
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    try {
      const lock = join(dir, '.lock');
      writeFileSync(
        lock,
        `${JSON.stringify({ pid: holder.pid, host: hostname(), nonce: 'n2', at: new Date().toISOString() })}\n`,
      );
      const call = { kind: 'chat', tool: 'ask_model', model: 'openai/gpt-4o-mini', text: 'hi' } as const;
      const log = collectingLogger();
      const waiting = Ledger.open({ dir, log, lockWaitMs: 300 });
      await expect(waiting.begin(call)).rejects.toThrow(/ledger of billed calls is busy.*process \d+/);
      expect(allLines(dir)).toEqual([]);
      // A hold longer than the bound is no real hold (a stopped process): it is taken over.
      const patient = Ledger.open({ dir, log, lockWaitMs: 5_000, lockStaleMs: 1_000 });
      const started = Date.now();
      expect((await patient.begin(call)).status).toBe('go');
      expect(Date.now() - started).toBeGreaterThan(500);
      expect(log.warnings).toEqual([
        `ledger: took over the lock of ${dir} from process ${holder.pid} on ${hostname()}`,
      ]);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});

describe('the lock', () => {
  it("wakes a waiter when the holder releases it, without waiting for the waiter's timer", async () => {
    const dir = tempDir('gtm-ledger-');
    const options = { staleMs: 10_000, waitMs: 30_000, host: hostname() };
    const holder = new FileLock(join(dir, '.lock'), options);
    const waiter = new FileLock(join(dir, '.lock'), { ...options, retryMs: 60_000 });
    try {
      const release = await holder.acquire();
      let taken = false;
      const waiting = waiter.acquire().then((releaseAgain) => {
        taken = true;
        return releaseAgain;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(taken).toBe(false);
      release();
      // Only the release can wake it: its next try on the timer is a minute away.
      (await waiting)();
      expect(taken).toBe(true);
    } finally {
      holder.close();
      waiter.close();
    }
  }, 10_000);
});
