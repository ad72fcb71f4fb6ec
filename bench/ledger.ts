/**
 * What the ledger adds to a billed call: begin (the lock, the limit check, the append, fdatasync)
 * plus end (the append; an accepted job's end is synced soon after, off the call's path), timed
 * in three processes writing to one ledger at once: every PACE_MS all three begin a call at the
 * same moment, so each call meets two others at the lock and the disk; and back to back with no
 * pause at all (every core busy: the worst case, far beyond use). Also one process alone at the
 * same pace.
 *
 * Settled: each process first makes SETTLE_CALLS billed calls of its own (in a ledger of its
 * own), as a server that has been running has, so V8 has compiled the ledger's code before the
 * timing starts. Fresh: the timing starts at a process's 21st call, while V8 is still compiling;
 * three processes compiling at once compete with the calls for the two cores.
 *
 * The same file is the worker the processes run (`--worker`). Run alone:
 * `npx tsx bench/ledger.ts [--quick]`.
 */
import { spawn } from 'node:child_process';
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Ledger } from '../src/ledger/ledger.js';
import { parseLimits } from '../src/ledger/limits.js';
import { ROOT } from './lib.js';

/** A billed call's added time (begin + end) and begin's alone, ms; CPU per call, µs. */
type Timing = Percentiles & { begin: Percentiles; cpuUs: number };

export interface LedgerBench {
  /** Three settled processes, each call begun at the same moment as the other two's. */
  together: Timing;
  /** Three settled processes billing back to back, with no pause between calls. */
  backToBack: Timing;
  /** The same two, in fresh processes. */
  fresh: { together: Timing; backToBack: Timing };
  /** One settled process alone, at the same pace. */
  alone: Timing;
  /**
   * The floor: three processes each appending one line per call to one file and syncing it
   * (fdatasync) at the same moments, the least any durable record costs on this disk.
   */
  floor: Timing;
  calls: number;
  paceMs: number;
}

interface Percentiles {
  p50: number;
  p99: number;
}

const WARM_UP = 20;
/** The billed calls a settled process has made before the timing starts. */
const SETTLE_CALLS = 1_000;
/** How often the paced processes begin a call, all three at once. */
const PACE_MS = 10;
const fdatasyncAsync = promisify(fdatasync);
/** Limits as a user might set them, so each check reads and counts real records. */
const LIMITS = 'video=100000/day,speech=100000/day,chat=100000/hour,cost=1000000/day';

export async function benchLedger(calls: number): Promise<LedgerBench> {
  const floor = await runWorkers(3, calls, PACE_MS, '--floor');
  const together = await runWorkers(3, calls, PACE_MS);
  const backToBack = await runWorkers(3, calls, 0);
  const fresh = {
    together: await runWorkers(3, calls, PACE_MS, '--worker', 0),
    backToBack: await runWorkers(3, calls, 0, '--worker', 0),
  };
  const alone = await runWorkers(1, calls, PACE_MS);
  return { together, backToBack, fresh, alone, floor, calls, paceMs: PACE_MS };
}

/**
 * `paceMs`: every how many ms each process begins a call (0: back to back); `settle`: the billed
 * calls each makes in a ledger of its own first.
 */
async function runWorkers(
  count: number,
  calls: number,
  paceMs: number,
  mode: '--worker' | '--floor' = '--worker',
  settle = SETTLE_CALLS,
): Promise<Timing> {
  const dir = mkdtempSync(join(tmpdir(), 'gtm-bench-ledger-'));
  try {
    const workers = Array.from({ length: count }, () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/ledger.ts', mode, dir, String(calls), String(paceMs), String(settle)],
        {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      );
      const lines = createInterface({ input: child.stdout });
      const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
      const result = new Promise<{ total: number[]; begin: number[]; cpuUs: number }>((resolve) =>
        lines.on('line', (line) => line.startsWith('{') && resolve(JSON.parse(line))),
      );
      return { child, ready, result };
    });
    await Promise.all(workers.map((w) => w.ready));
    // One start time for all, a little ahead, from which each schedules its calls.
    const startAt = Date.now() + 100;
    for (const w of workers) w.child.stdin.end(`${startAt}\n`);
    const results = await Promise.all(workers.map((w) => w.result));
    return {
      ...percentiles(results.flatMap((r) => r.total)),
      begin: percentiles(results.flatMap((r) => r.begin)),
      cpuUs: results.reduce((sum, r) => sum + r.cpuUs, 0) / results.length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * Waits for the start time on stdin, then makes the calls, the i-th at start + i × pace (or at
 * once when late), timing each; prints the times and the CPU per call as one line of JSON.
 * `call` returns when its begin was done (ms, performance.now()), for the begin's share.
 */
async function timeCalls(calls: number, paceMs: number, call: (i: number) => Promise<number>): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  const startAt = Number(await new Promise<string>((resolve) => lines.once('line', resolve)));
  const total: number[] = [];
  const begin: number[] = [];
  let cpu = process.cpuUsage();
  for (let i = 0; i < WARM_UP + calls; i++) {
    const wait = startAt + i * paceMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (i === WARM_UP) cpu = process.cpuUsage();
    const started = performance.now();
    const begun = await call(i);
    if (i >= WARM_UP) {
      total.push(performance.now() - started);
      begin.push(begun - started);
    }
  }
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${JSON.stringify({ total, begin, cpuUs: (used.user + used.system) / calls })}\n`);
  lines.close();
}

/** A ledger with the bench's limits. */
function openLedger(dir: string): Ledger {
  const limits = parseLimits(LIMITS);
  if (!limits.ok) throw new Error(limits.error);
  const quiet = () => {};
  return Ledger.open({
    dir,
    limits: limits.value,
    log: {
      level: 'error',
      error: (m) => process.stderr.write(`${m}\n`),
      warn: quiet,
      info: quiet,
      debug: quiet,
    },
  });
}

/** One billed call: begin, then end accepted with a job id; returns when the begin was done. */
async function billedCall(ledger: Ledger, i: number): Promise<number> {
  const result = await ledger.begin({
    kind: i % 3 === 0 ? 'video' : 'chat',
    tool: i % 3 === 0 ? 'video_generate' : 'ask_model',
    model: i % 3 === 0 ? 'xai/grok-imagine-video' : 'openai/gpt-4o-mini',
    text: `bench call ${process.pid} ${i}: a short prompt of a few words`,
    idempotencyKey: `gtm-bench-${process.pid}-${i}`,
  });
  const begun = performance.now();
  if (result.status !== 'go') throw new Error(`unexpected ${result.status}`);
  await ledger.end(result.id, { outcome: 'accepted', jobId: `vj_bench_${i}`, amount: 100 });
  return begun;
}

/** One process's billed calls, after `settle` calls in a ledger of its own. */
async function worker(dir: string, calls: number, paceMs: number, settle: number): Promise<void> {
  if (settle > 0) {
    const own = mkdtempSync(join(tmpdir(), 'gtm-bench-settle-'));
    const settling = openLedger(own);
    for (let i = 0; i < settle; i++) await billedCall(settling, i);
    await settling.close();
    rmSync(own, { recursive: true, force: true });
  }
  const ledger = openLedger(dir);
  await timeCalls(calls, paceMs, (i) => billedCall(ledger, i));
  await ledger.close();
}

/** The floor's process: one synced append per call, nothing else. */
async function floorWorker(dir: string, calls: number, paceMs: number): Promise<void> {
  const line = Buffer.from(`${JSON.stringify({ type: 'begin', pad: 'x'.repeat(300) })}\n`);
  await timeCalls(calls, paceMs, async () => {
    const fd = openSync(join(dir, 'floor.jsonl'), 'a', 0o600);
    writeSync(fd, line);
    await fdatasyncAsync(fd);
    closeSync(fd);
    return performance.now();
  });
}

const args = process.argv.slice(2);
if (args[0] === '--worker') {
  await worker(args[1] as string, Number(args[2]), Number(args[3]), Number(args[4]));
} else if (args[0] === '--floor') {
  await floorWorker(args[1] as string, Number(args[2]), Number(args[3]));
} else if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const result = await benchLedger(args.includes('--quick') ? 100 : 500);
  const f = (p: Percentiles) => `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms`;
  const line = (name: string, t: Timing) =>
    console.log(`  ${name.padEnd(40)} ${f(t)}; begin ${f(t.begin)}; ${t.cpuUs.toFixed(0)} µs CPU per call`);
  console.log(`ledger, ${result.calls} billed calls per process (begin + end):`);
  line(`three at once, every ${result.paceMs} ms:`, result.together);
  line('three back to back:', result.backToBack);
  line(`fresh: three at once, every ${result.paceMs} ms:`, result.fresh.together);
  line('fresh: three back to back:', result.fresh.backToBack);
  line(`one alone, every ${result.paceMs} ms:`, result.alone);
  line('floor, one synced append, three at once:', result.floor);
}
