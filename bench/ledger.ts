/**
 * What the ledger adds to a billed call: begin (the lock, the limit check, the append, fdatasync)
 * plus end (append, fdatasync for an accepted call), timed in three processes writing to one
 * ledger at once, and in one process alone. The same file is the worker the processes run
 * (`--worker`). Run alone: `npx tsx bench/ledger.ts [--quick]`.
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
  /** Three processes at once. */
  together: Timing;
  /** One process alone. */
  alone: Timing;
  /**
   * The floor: three processes each appending one line per call to one file and syncing it
   * (fdatasync), the least any durable record costs on this disk.
   */
  floor: Timing;
  calls: number;
}

interface Percentiles {
  p50: number;
  p99: number;
}

const WARM_UP = 20;
const fdatasyncAsync = promisify(fdatasync);
/** Limits as a user might set them, so each check reads and counts real records. */
const LIMITS = 'video=100000/day,speech=100000/day,chat=100000/hour,cost=1000000/day';

export async function benchLedger(calls: number): Promise<LedgerBench> {
  const floor = await runWorkers(3, calls, '--floor');
  const together = await runWorkers(3, calls);
  const alone = await runWorkers(1, calls);
  return { together, alone, floor, calls };
}

async function runWorkers(
  count: number,
  calls: number,
  mode: '--worker' | '--floor' = '--worker',
): Promise<Timing> {
  const dir = mkdtempSync(join(tmpdir(), 'gtm-bench-ledger-'));
  try {
    const workers = Array.from({ length: count }, () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/ledger.ts', mode, dir, String(calls)],
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
    for (const w of workers) w.child.stdin.end('go\n');
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

/** One process's billed calls: begin, end accepted, timed; prints the times as JSON. */
async function worker(dir: string, calls: number): Promise<void> {
  const limits = parseLimits(LIMITS);
  if (!limits.ok) throw new Error(limits.error);
  const quiet = () => {};
  const ledger = Ledger.open({
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
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  const total: number[] = [];
  const begin: number[] = [];
  let cpu = process.cpuUsage();
  for (let i = 0; i < WARM_UP + calls; i++) {
    if (i === WARM_UP) cpu = process.cpuUsage();
    const started = performance.now();
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
    if (i >= WARM_UP) {
      total.push(performance.now() - started);
      begin.push(begun - started);
    }
  }
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${JSON.stringify({ total, begin, cpuUs: (used.user + used.system) / calls })}\n`);
  lines.close();
}

/** The floor's process: one synced append per call, nothing else. */
async function floorWorker(dir: string, calls: number): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  const total: number[] = [];
  const line = Buffer.from(`${JSON.stringify({ type: 'begin', pad: 'x'.repeat(300) })}\n`);
  let cpu = process.cpuUsage();
  for (let i = 0; i < WARM_UP + calls; i++) {
    if (i === WARM_UP) cpu = process.cpuUsage();
    const started = performance.now();
    const fd = openSync(join(dir, 'floor.jsonl'), 'a', 0o600);
    writeSync(fd, line);
    await fdatasyncAsync(fd);
    closeSync(fd);
    if (i >= WARM_UP) total.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    `${JSON.stringify({ total, begin: total, cpuUs: (used.user + used.system) / calls })}\n`,
  );
  lines.close();
}

const args = process.argv.slice(2);
if (args[0] === '--worker') {
  await worker(args[1] as string, Number(args[2]));
} else if (args[0] === '--floor') {
  await floorWorker(args[1] as string, Number(args[2]));
} else if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const result = await benchLedger(args.includes('--quick') ? 100 : 500);
  const f = (p: Percentiles) => `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms`;
  const cpu = (t: Timing) => `${t.cpuUs.toFixed(0)} µs CPU per call`;
  console.log(`ledger, ${result.calls} billed calls per process (begin + end):`);
  console.log(
    `  three processes at once: ${f(result.together)}; begin ${f(result.together.begin)}; ${cpu(result.together)}`,
  );
  console.log(
    `  one process alone:       ${f(result.alone)}; begin ${f(result.alone.begin)}; ${cpu(result.alone)}`,
  );
  console.log(
    `  floor, one synced append per call, three processes at once: ${f(result.floor)}; ${cpu(result.floor)}`,
  );
}
