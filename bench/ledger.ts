/**
 * The ledger of billed calls on both its stores: SQLite (GATEWAY_LEDGER_DIR/ledger.sqlite, the
 * default) and PostgreSQL (GATEWAY_LEDGER_URL; a server on loopback that this bench starts and
 * stops, skipped when PostgreSQL is not installed). Each figure is set against its goal and, where
 * one applies, a baseline measured in the same run; nothing asserts.
 *
 * 1. A billed call's added time: Ledger.begin (the duplicate guard, the limits under realistic
 *    GATEWAY_LIMITS and GATEWAY_PRICES, the insert, the commit) + Ledger.end (its commit), p50 and
 *    p99, in three processes billing into one ledger: every PACE_MS all three begin a call at the
 *    same moment; and back to back, each process beginning its next call as soon as the last has
 *    ended, every call sent between its begin and its end (an HTTP request to a server on
 *    loopback that answers at once: the fastest a gateway could). For reference, a stress figure
 *    of no use: back to back with nothing sent between begin and end, so each process holds or
 *    wants the writer's lock all the time (every core busy). Settled: each
 *    process has first made SETTLE_CALLS billed calls in a ledger of its own, as a running server
 *    has; fresh: the timing starts at a process's 21st call, while V8 still compiles. The floor is
 *    the least a record costs here: one synced append per call (SQLite's disk), one committed
 *    one-row INSERT per call (PostgreSQL), from three processes at once. PostgreSQL is the test
 *    harness's server, run for speed: its commits are not synced to the disk (see postgresBackend).
 * 2. The event loop's longest stall per billed call, p99, in the same three processes billing at
 *    once: a 1 ms interval timer's longest gap between ticks from a call's start to the next
 *    call's start, less the 1 ms between ticks (stallProbe). node:sqlite is
 *    synchronous, so SQLite's statements and commits (with their fsync) run on the event loop;
 *    pg's queries do not. Baseline: the same probe in a fourth process beside them that bills
 *    nothing.
 * 3. Growth: a ledger of GROWTH_ROWS calls over 30 days, written straight into the store's own
 *    tables (made by the store itself) in one statement. In fresh processes: the first billed call
 *    (open + begin + end) and the calls after it (with the event loop's longest stall in each),
 *    usage(), recentJobs() (video_status without a job id), RSS after usage(), doctor's ledger
 *    checks, and the built CLI's `usage` and `doctor` (wall time, doctor against the reference
 *    service on loopback); each against the same on an empty ledger.
 *
 * The same file is the worker the processes run (`--worker <task>`). Run alone:
 * `npx tsx bench/ledger.ts [--quick]` (it builds dist/ first when dist/cli.js is older than src/).
 */
import { type ChildProcess, type ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fdatasync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { parseCommandLine } from '../src/config/config.js';
import { parseLimits } from '../src/config/limits.js';
import { parsePrices } from '../src/config/prices.js';
import { checkLedger } from '../src/doctor/ledger-checks.js';
import { type BillableCall, Ledger } from '../src/ledger/ledger.js';
import { CALLS, STATUSES } from '../src/ledger/sql.js';
import type { Logger } from '../src/lib/log.js';
import { HAS_POSTGRES, startPostgres } from '../test/harness/postgres.js';
import { type BenchService, median, ROOT, ratio, startReferenceProcess } from './lib.js';

/** Limits as a user might set them, so each begin reads and counts real calls. */
const LIMITS = 'video=100000/day,speech=100000/day,chat=100000/hour,cost=1000000/day';
/** Each person's limits, checked beside LIMITS: per-person tallies, and the longest window (a month). */
const LIMITS_PER_USER = 'video=100000/day,chat=100000/hour,cost=1000000/month';
/** Prices as a user might set them (GATEWAY_PRICES), so the cost limit prices every call. */
const PRICES = [
  'xai/grok-imagine-video=0.05/second',
  'openai/sora-2=0.10/second',
  'openai/tts-1=0.015/1k-chars',
  'openai/gpt-4o-mini-tts=0.012/1k-chars',
  'openai/whisper-1=0.006/minute',
  'chat:*=0.50/1m-tokens',
  'search:*=0.005/call',
  'fetch:*=0.001/call',
].join(',');

/** Calls before the timing starts in every timed process. */
const WARM_UP = 20;
/** The billed calls a settled process has made (in a ledger of its own) before the timing starts. */
const SETTLE_CALLS = 1_000;
/** The billed calls a growth probe makes after its first, timed one by one. */
const LATER_CALLS = 5;
/** How often the paced processes begin a call, all three at once. */
const PACE_MS = 10;
/** The event-loop probe's resolution: its ticks are this far apart when nothing stalls. */
const PROBE_MS = 1;
/** The growth ledger's calls, spread over the last 30 days. */
const GROWTH_ROWS = 1_000_000;
const DAY_MS = 86_400_000;
/** A run of workers that has not finished by then is stopped, and the bench fails. */
const RUN_BOUND_MS = 300_000;

const GOAL = {
  /** p99 of a billed call's added time, per store. */
  callMs: { SQLite: 5, PostgreSQL: 10 },
  stallMs: 5,
  firstCallMs: 50,
  usageMs: 100,
  recentJobsMs: 50,
  cliMs: 500,
  rssMiB: 30,
} as const;

export const POSTGRES_NOT_RUN = 'not run: PostgreSQL is not installed (apt-get install postgresql)';

type StoreName = 'SQLite' | 'PostgreSQL';

/** Where a ledger is: GATEWAY_LEDGER_DIR, and GATEWAY_LEDGER_URL for PostgreSQL. */
interface Place {
  dir: string;
  url?: string;
}

interface Percentiles {
  p50: number;
  p99: number;
}

/** A billed call's added time (begin + end) and begin's alone, ms; CPU per call, µs; stalls, ms. */
export type Timing = Percentiles & {
  begin: Percentiles;
  cpuUs: number;
  stall: Percentiles;
  /** How long the slowest 1% of calls waited, on average, for a CPU to run on (ms; NaN off Linux). */
  slowestCpuWait: number;
};

/** A figure on the growth ledger and on an empty one, measured in the same run. */
export interface Pair {
  big: number;
  empty: number;
}

export interface Growth {
  rows: number;
  /** How long writing the growth ledger took, ms. */
  buildMs: number;
  /** A fresh process's first billed call: open + begin + end, ms. */
  firstCall: Pair;
  /** The calls after it (one process alone, 10 ms apart), ms; the event loop's longest stall in each, ms. */
  laterCall: Pair;
  laterStall: Pair;
  /** usage() in a fresh process, its first call (so opening the store), ms; then warm. */
  usage: Pair;
  usageWarm: Pair;
  /** recentJobs() right after, ms; then warm. */
  recentJobs: Pair;
  recentJobsWarm: Pair;
  /** RSS of that process after usage(), MiB. */
  rssMiB: Pair;
  /** doctor's ledger checks (checkLedger) in a fresh process, ms. */
  doctorLedger: Pair;
  /** Wall time of `node dist/cli.js usage` and `node dist/cli.js doctor`, ms. */
  cliUsage: Pair;
  cliDoctor: Pair;
}

export interface StoreBench {
  store: StoreName;
  /** Three settled processes, each call begun at the same moment as the other two's. */
  together: Timing;
  /** Three settled processes billing back to back, each call sent between its begin and end. */
  backToBack: Timing;
  /** Three settled processes back to back with nothing sent between begin and end. */
  stress: Timing;
  /** The same two in fresh processes. */
  fresh: { together: Timing; backToBack: Timing };
  /** The floor: the least a durable record costs, three processes at once, every PACE_MS. */
  floor: Timing;
  /** The event-loop probe in a fourth process that bills nothing, beside `together`. */
  idleStall: Percentiles;
  growth: Growth;
}

export interface LedgerBench {
  calls: number;
  paceMs: number;
  reps: number;
  sqlite: StoreBench;
  /** A string when PostgreSQL could not be run: why. */
  postgres: StoreBench | string;
}

/** `calls`: timed billed calls per process; `reps`: fresh processes per growth figure and ledger. */
export async function benchLedger(calls: number, reps: number, service?: BenchService): Promise<LedgerBench> {
  ensureBuilt();
  const ownService = service ? undefined : await startReferenceProcess();
  const gateway = service ?? ownService!;
  const sending = await startAnswering();
  try {
    const sqlite = await benchStore(sqliteBackend(), calls, reps, gateway, sending.url);
    let postgres: StoreBench | string = POSTGRES_NOT_RUN;
    if (HAS_POSTGRES) {
      const backend = await postgresBackend().catch((error: Error) => `not run: ${error.message}`);
      if (typeof backend === 'string') postgres = backend;
      else {
        try {
          postgres = await benchStore(backend, calls, reps, gateway, sending.url);
        } finally {
          await backend.close();
        }
      }
    }
    return { calls, paceMs: PACE_MS, reps, sqlite, postgres };
  } finally {
    await sending.close();
    await ownService?.close();
  }
}

/** A server on loopback that answers every request at once, with nothing: where calls are sent. */
async function startAnswering(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function benchStore(
  backend: Backend,
  calls: number,
  reps: number,
  service: BenchService,
  send: string,
): Promise<StoreBench> {
  const step = (what: string) => process.stderr.write(`ledger bench, ${backend.name}: ${what}\n`);
  step('the floor');
  const floor = (await runWorkers(backend, 3, calls, PACE_MS, { mode: backend.floorMode })).timing;
  step('three processes at once');
  const paced = await runWorkers(backend, 3, calls, PACE_MS, { idleProbe: true });
  step('three processes back to back');
  const backToBack = (await runWorkers(backend, 3, calls, 0, { send })).timing;
  step('three processes back to back, nothing sent');
  const stress = (await runWorkers(backend, 3, calls, 0)).timing;
  step('fresh processes');
  const fresh = {
    together: (await runWorkers(backend, 3, calls, PACE_MS, { settle: false })).timing,
    backToBack: (await runWorkers(backend, 3, calls, 0, { settle: false, send })).timing,
  };
  step(`a ledger of ${GROWTH_ROWS.toLocaleString('en')} calls`);
  const growth = await benchGrowth(backend, reps, service);
  return {
    store: backend.name,
    together: paced.timing,
    backToBack,
    stress,
    fresh,
    floor,
    idleStall: paced.idle ?? { p50: Number.NaN, p99: Number.NaN },
    growth,
  };
}

// ---- The stores ----

interface Backend {
  name: StoreName;
  /** A new place for a ledger (nothing made in it yet). */
  place(): Promise<Place>;
  remove(place: Place): Promise<void>;
  /** Writes `rows` calls over 30 days straight into a ledger the store has made. */
  fill(place: Place, rows: number): Promise<void>;
  floorMode: 'floor' | 'pg-floor';
  /** Makes what the floor's processes write to. */
  prepareFloor(place: Place): Promise<void>;
  close(): Promise<void>;
}

function sqliteBackend(): Backend {
  return {
    name: 'SQLite',
    async place() {
      return { dir: mkdtempSync(join(tmpdir(), 'gtm-bench-ledger-')) };
    },
    async remove(place) {
      rmSync(place.dir, { recursive: true, force: true });
    },
    async fill(place, rows) {
      await fillSqlite(join(place.dir, 'ledger.sqlite'), rows);
    },
    floorMode: 'floor',
    async prepareFloor() {},
    async close() {},
  };
}

/**
 * The test harness's PostgreSQL server (test/harness/postgres.ts), a database of its own for each
 * ledger, owned by the URL's user. The harness runs the server for speed (fsync, full-page writes
 * and synchronous commit off; settings given on its command line, which nothing overrides but
 * synchronous_commit): each database here sets synchronous_commit back to on, PostgreSQL's
 * default, so a commit waits for its WAL to be written, though not synced to the disk.
 */
async function postgresBackend(): Promise<Backend> {
  const server = await startPostgres();
  let made = 0;
  const names = new Map<string, string>();
  const onDatabase = async (url: string, work: (client: pg.Client) => Promise<void>) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'PostgreSQL',
    async place() {
      const name = `gtm_bench_${++made}`;
      await server.psql(`CREATE DATABASE ${name} OWNER ${server.user}`);
      await server.psql(`ALTER DATABASE ${name} SET synchronous_commit = on`);
      const url = new URL(server.url);
      url.pathname = `/${name}`;
      names.set(url.toString(), name);
      // GATEWAY_LEDGER_DIR is not used with a URL: a folder that stays empty.
      return { dir: mkdtempSync(join(tmpdir(), 'gtm-bench-ledger-')), url: url.toString() };
    },
    async remove(place) {
      rmSync(place.dir, { recursive: true, force: true });
      const name = place.url ? names.get(place.url) : undefined;
      if (name) await server.psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
    async fill(place, rows) {
      await onDatabase(place.url!, (client) => fillPostgres(client, rows));
    },
    floorMode: 'pg-floor',
    async prepareFloor(place) {
      await onDatabase(place.url!, async (client) => {
        await client.query('CREATE TABLE bench_floor (id bigserial PRIMARY KEY, line text NOT NULL)');
      });
    },
    async close() {
      await server.stop();
    },
  };
}

// ---- 1 and 2: billed calls in three processes at once ----

interface WorkerTask {
  mode: 'calls' | 'floor' | 'pg-floor' | 'idle' | 'first-call' | 'reports' | 'doctor-ledger';
  place: Place;
  /** For `calls`: the place of the ledger of its own the process settles in first. */
  settle?: Place;
  calls?: number;
  paceMs?: number;
  /** For `calls`: where each call is sent between its begin and its end. */
  send?: string;
}

interface CallsResult {
  total: number[];
  /** Each call's wait for a CPU (the process's time runnable but not running), ms. */
  cpuWait: number[];
  begin: number[];
  stall: number[];
  cpuUs: number;
}

/**
 * `count` processes making `calls` timed calls each into one new ledger, every `paceMs` ms (0:
 * back to back). Settled (unless `settle: false`): each first makes SETTLE_CALLS in a ledger of its
 * own. `idleProbe`: a further process beside them that only probes its event loop.
 */
async function runWorkers(
  backend: Backend,
  count: number,
  calls: number,
  paceMs: number,
  options: {
    mode?: 'calls' | 'floor' | 'pg-floor';
    settle?: boolean;
    idleProbe?: boolean;
    send?: string;
  } = {},
): Promise<{ timing: Timing; idle?: Percentiles }> {
  const mode = options.mode ?? 'calls';
  const shared = await backend.place();
  const places: Place[] = [shared];
  try {
    // The shared ledger exists already, as a team's or a user's does once the first call is made.
    if (mode === 'calls') await makeLedger(shared);
    else await backend.prepareFloor(shared);
    const tasks: WorkerTask[] = [];
    for (let i = 0; i < count; i++) {
      const task: WorkerTask = {
        mode,
        place: shared,
        calls,
        paceMs,
        ...(options.send ? { send: options.send } : {}),
      };
      if (mode === 'calls' && options.settle !== false) {
        task.settle = await backend.place();
        places.push(task.settle);
      }
      tasks.push(task);
    }
    if (options.idleProbe) tasks.push({ mode: 'idle', place: shared, calls, paceMs });
    const results = await runTogether(tasks);
    const working = results.slice(0, count);
    const idle = options.idleProbe ? results[count] : undefined;
    return {
      timing: {
        ...percentiles(working.flatMap((r) => r.total)),
        begin: percentiles(working.flatMap((r) => r.begin)),
        cpuUs: working.reduce((sum, r) => sum + r.cpuUs, 0) / working.length,
        stall: percentiles(working.flatMap((r) => r.stall)),
        slowestCpuWait: slowestCpuWait(working),
      },
      ...(idle ? { idle: percentiles(idle.stall) } : {}),
    };
  } finally {
    for (const place of places) await backend.remove(place);
  }
}

/** Starts a worker per task, waits until all are ready, then gives them one start time. */
async function runTogether(tasks: WorkerTask[]): Promise<CallsResult[]> {
  const workers = tasks.map((task) => {
    const child = spawnWorker(task);
    const lines = createInterface({ input: child.stdout });
    const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
    const result = new Promise<CallsResult>((resolve, reject) => {
      lines.on('line', (line) => line.startsWith('{') && resolve(JSON.parse(line)));
      child.once('exit', (code) =>
        reject(new Error(`a ledger bench worker exited (${code}) before its result`)),
      );
    });
    return { child, ready, result, closed: exited(child) };
  });
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`ledger bench workers took over ${RUN_BOUND_MS} ms`)),
      RUN_BOUND_MS,
    );
  });
  try {
    await Promise.race([Promise.all(workers.map((w) => Promise.race([w.ready, w.result]))), bound]);
    // One start time for all, a little ahead, from which each schedules its calls.
    const startAt = Date.now() + 100;
    for (const w of workers) w.child.stdin.end(`${startAt}\n`);
    const results = await Promise.race([Promise.all(workers.map((w) => w.result)), bound]);
    // Each closes its ledger and exits.
    await Promise.all(workers.map((w) => w.closed));
    return results;
  } finally {
    clearTimeout(timer);
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  }
}

type Worker = ChildProcessByStdio<Writable, Readable, null>;

function spawnWorker(task: WorkerTask): Worker {
  return spawn(process.execPath, ['--import', 'tsx', 'bench/ledger.ts', '--worker', JSON.stringify(task)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

/**
 * The event loop's longest stall, span by span: a PROBE_MS interval timer notes the longest gap
 * between its ticks, and `take()` returns it (with the gap still open, less the PROBE_MS a tick
 * takes anyway) and starts the next span. (perf_hooks.monitorEventLoopDelay cannot be read span by
 * span: after its reset() the first gap is not recorded, and a call's own stall is that gap.)
 */
function stallProbe(): { take(): number; stop(): void } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, PROBE_MS);
  return {
    take() {
      const stall = Math.max(0, Math.max(longest, performance.now() - last) - PROBE_MS);
      longest = 0;
      return stall;
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** The CPU wait of the slowest 1% of calls, on average: how much of the tail is a busy machine. */
function slowestCpuWait(results: readonly CallsResult[]): number {
  const calls = results.flatMap((r) =>
    r.total.map((total, i) => ({ total, wait: r.cpuWait[i] ?? Number.NaN })),
  );
  const slowest = calls
    .sort((a, b) => b.total - a.total)
    .slice(0, Math.max(1, Math.ceil(calls.length / 100)));
  return slowest.reduce((sum, call) => sum + call.wait, 0) / slowest.length;
}

/**
 * The time this process's main thread has spent runnable but not running, ms (Linux's
 * /proc/<pid>/task/<pid>/schedstat, second field); NaN where there is none.
 */
function cpuWaited(): number {
  try {
    return (
      Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
    );
  } catch {
    return Number.NaN;
  }
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * Waits for the start time on stdin, then makes the calls, the i-th at start + i × pace (or at
 * once when late), timing each, and the event loop's longest stall from each call's start to the
 * next's; prints them and the CPU per call as one line of JSON. `call` returns the time it added
 * and its begin's share, ms.
 */
async function timeCalls(
  calls: number,
  paceMs: number,
  call: (i: number) => Promise<{ added: number; begin: number }>,
): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  const startAt = Number(await new Promise<string>((resolve) => lines.once('line', resolve)));
  const total: number[] = [];
  const begin: number[] = [];
  const stall: number[] = [];
  const cpuWait: number[] = [];
  const probe = stallProbe();
  let cpu = process.cpuUsage();
  for (let i = 0; i < WARM_UP + calls; i++) {
    const wait = startAt + i * paceMs - Date.now();
    if (wait > 0) await sleep(wait);
    const longest = probe.take();
    if (i > WARM_UP) stall.push(longest);
    if (i === WARM_UP) cpu = process.cpuUsage();
    const waited = cpuWaited();
    const timed = await call(i);
    if (i >= WARM_UP) {
      total.push(timed.added);
      begin.push(timed.begin);
      cpuWait.push(cpuWaited() - waited);
    }
  }
  const used = process.cpuUsage(cpu);
  // The last call's stall, were it at its very end, shows at the probe's next tick.
  await sleep(Math.max(paceMs, 5 * PROBE_MS));
  stall.push(probe.take());
  probe.stop();
  const result: CallsResult = { total, begin, stall, cpuWait, cpuUs: (used.user + used.system) / calls };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  lines.close();
}

const quiet = () => {};
const LOG: Logger = {
  level: 'error',
  error: (m) => process.stderr.write(`${m}\n`),
  warn: quiet,
  info: quiet,
  debug: quiet,
};

/** A ledger with the bench's limits and prices. */
function openLedger(place: Place): Ledger {
  const limits = parseLimits(LIMITS);
  if (!limits.ok) throw new Error(limits.error);
  const prices = parsePrices(PRICES);
  if (!prices.ok) throw new Error(prices.error);
  const perUser = parseLimits(LIMITS_PER_USER);
  if (!perUser.ok) throw new Error(perUser.error);
  return Ledger.open({
    dir: place.dir,
    ...(place.url ? { url: place.url } : {}),
    limits: limits.value,
    limitsPerUser: perUser.value,
    prices: prices.value,
    log: LOG,
  });
}

/** A billed call as the tools make them: a video submit every third call, chat otherwise. */
function billable(i: number): BillableCall {
  const video = i % 3 === 0;
  return {
    kind: video ? 'video' : 'chat',
    by: { id: `bench-user-${process.pid % 3}` },
    tool: video ? 'video_generate' : 'ask_model',
    model: video ? 'xai/grok-imagine-video' : 'openai/gpt-4o-mini',
    text: `bench call ${process.pid} ${i}: a short prompt of a few words`,
    ...(video
      ? {
          idempotencyKey: `gtm-bench-${process.pid}-${i}`,
          expected: 8,
          amountArgument: 'duration',
          options: { duration: 8 },
        }
      : {}),
  };
}

/**
 * One billed call: begin, the request sent to `send` (when given), then end accepted (a video with
 * its job id). Returns the begin's and the end's time together, and the begin's alone.
 */
async function billedCall(
  ledger: Ledger,
  i: number,
  send?: string,
): Promise<{ added: number; begin: number }> {
  const call = billable(i);
  const started = performance.now();
  const result = await ledger.begin(call);
  const begin = performance.now() - started;
  if (result.status !== 'go') throw new Error(`unexpected ${result.status}`);
  if (send) await (await fetch(send, { method: 'POST', body: call.text })).arrayBuffer();
  const ending = performance.now();
  await ledger.end(
    result.id,
    call.kind === 'video'
      ? { outcome: 'accepted', jobId: `vj_bench_${process.pid}_${i}`, amount: 8, status: 'queued' }
      : { outcome: 'accepted', amount: 1200 },
  );
  return { added: begin + performance.now() - ending, begin };
}

/** One process's billed calls, after settling in a ledger of its own. */
async function callsWorker(task: WorkerTask): Promise<void> {
  if (task.settle) {
    const settling = openLedger(task.settle);
    for (let i = 0; i < SETTLE_CALLS; i++) await billedCall(settling, i, task.send);
    await settling.close();
  }
  const ledger = openLedger(task.place);
  await timeCalls(task.calls ?? 0, task.paceMs ?? 0, (i) => billedCall(ledger, i, task.send));
  await ledger.close();
}

/** SQLite's floor: one synced append per call to one file, nothing else. */
async function floorWorker(task: WorkerTask): Promise<void> {
  const line = Buffer.from(`${JSON.stringify({ type: 'begin', pad: 'x'.repeat(300) })}\n`);
  const sync = promisify(fdatasync);
  await timeCalls(task.calls ?? 0, task.paceMs ?? 0, async () => {
    const started = performance.now();
    const fd = openSync(join(task.place.dir, 'floor.jsonl'), 'a', 0o600);
    writeSync(fd, line);
    await sync(fd);
    closeSync(fd);
    const added = performance.now() - started;
    return { added, begin: added };
  });
}

/** PostgreSQL's floor: one committed one-row INSERT per call over one connection, nothing else. */
async function postgresFloorWorker(task: WorkerTask): Promise<void> {
  const client = new pg.Client({ connectionString: task.place.url });
  await client.connect();
  const line = 'x'.repeat(300);
  await timeCalls(task.calls ?? 0, task.paceMs ?? 0, async () => {
    const started = performance.now();
    await client.query('INSERT INTO bench_floor (line) VALUES ($1)', [line]);
    const added = performance.now() - started;
    return { added, begin: added };
  });
  await client.end();
}

// ---- 3: growth ----

async function benchGrowth(backend: Backend, reps: number, service: BenchService): Promise<Growth> {
  const empty = await backend.place();
  const big = await backend.place();
  try {
    // Both ledgers are made by the store itself (its tables, indexes and version), then the big
    // one gets its calls.
    await makeLedger(empty);
    await makeLedger(big);
    const started = performance.now();
    await backend.fill(big, GROWTH_ROWS);
    const buildMs = performance.now() - started;
    const samples = { big: [] as Sample[], empty: [] as Sample[] };
    for (let rep = 0; rep < reps; rep++) {
      // Turn about, so neither ledger is always measured first.
      const order = rep % 2 === 0 ? (['big', 'empty'] as const) : (['empty', 'big'] as const);
      for (const which of order)
        samples[which].push(await sampleGrowth(which === 'big' ? big : empty, service));
    }
    const pair = (of: (s: Sample) => number): Pair => ({
      big: median(samples.big.map(of)),
      empty: median(samples.empty.map(of)),
    });
    return {
      rows: GROWTH_ROWS,
      buildMs,
      firstCall: pair((s) => s.firstCall.ms),
      laterCall: pair((s) => s.firstCall.laterMs),
      laterStall: pair((s) => s.firstCall.laterStall),
      usage: pair((s) => s.reports.usage),
      usageWarm: pair((s) => s.reports.usageWarm),
      recentJobs: pair((s) => s.reports.recentJobs),
      recentJobsWarm: pair((s) => s.reports.recentJobsWarm),
      rssMiB: pair((s) => s.reports.rssMiB),
      doctorLedger: pair((s) => s.doctorLedger),
      cliUsage: pair((s) => s.cliUsage),
      cliDoctor: pair((s) => s.cliDoctor),
    };
  } finally {
    await backend.remove(empty);
    await backend.remove(big);
  }
}

interface ReportsResult {
  usage: number;
  usageWarm: number;
  recentJobs: number;
  recentJobsWarm: number;
  rssMiB: number;
  /** What the reports found, to check that they read the ledger. */
  jobs: number;
  dayCalls: number;
}

interface FirstCallResult {
  ms: number;
  /** The median of the LATER_CALLS calls after it, and of their event loop's longest stalls. */
  laterMs: number;
  laterStall: number;
}

interface Sample {
  firstCall: FirstCallResult;
  reports: ReportsResult;
  doctorLedger: number;
  cliUsage: number;
  cliDoctor: number;
}

/** One of each growth figure, each in a fresh process. */
async function sampleGrowth(place: Place, service: BenchService): Promise<Sample> {
  const firstCall = await runProbe<FirstCallResult>({ mode: 'first-call', place });
  const reports = await runProbe<ReportsResult>({ mode: 'reports', place });
  const doctorLedger = (await runProbe<{ ms: number }>({ mode: 'doctor-ledger', place })).ms;
  const cliUsage = await timeCli(['usage'], place, service, /Billed calls of every server process/);
  const cliDoctor = await timeCli(['doctor'], place, service, /Ready: every required check passed/);
  return { firstCall, reports, doctorLedger, cliUsage, cliDoctor };
}

/** Makes the store's tables, as a server's first use does, with no call in them. */
async function makeLedger(place: Place): Promise<void> {
  const ledger = openLedger(place);
  await ledger.usage();
  await ledger.close();
}

/** Runs a probe in a fresh process; its one line of JSON. */
async function runProbe<T>(task: WorkerTask): Promise<T> {
  const child = spawnWorker(task);
  child.stdin.end();
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const code = await exited(child);
  const line = out.split('\n').find((l) => l.startsWith('{'));
  if (code !== 0 || !line) throw new Error(`ledger bench probe ${task.mode} failed (${code}): ${out}`);
  return JSON.parse(line) as T;
}

function exited(child: ChildProcess): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  return new Promise<number | null>((resolve, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`a ledger bench process took over ${RUN_BOUND_MS} ms`));
    }, RUN_BOUND_MS);
    // 'close': the process has exited and its output has all been read.
    child.once('close', (code) => resolve(code));
  }).finally(() => clearTimeout(timer));
}

/** Wall time of the built CLI, from spawn to exit; its output must match `expect`. */
async function timeCli(args: string[], place: Place, service: BenchService, expect: RegExp): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], {
    cwd: place.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: place.dir,
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: service.apiKey,
      GATEWAY_LEDGER_DIR: place.dir,
      ...(place.url ? { GATEWAY_LEDGER_URL: place.url } : {}),
      GATEWAY_LIMITS: LIMITS,
      GATEWAY_LIMITS_PER_USER: LIMITS_PER_USER,
      GATEWAY_PRICES: PRICES,
      GATEWAY_LOG_LEVEL: 'error',
    },
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const code = await exited(child);
  const ms = performance.now() - started;
  if (code !== 0 || !expect.test(out))
    throw new Error(`gateway-tools-mcp ${args.join(' ')} failed (${code}): ${out}`);
  return ms;
}

/** A fresh process's first billed call: opening the ledger, begin and end. */
async function firstCallProbe(task: WorkerTask): Promise<void> {
  const started = performance.now();
  const ledger = openLedger(task.place);
  await billedCall(ledger, 0);
  const ms = performance.now() - started;
  // Then LATER_CALLS more, 10 ms apart, each timed with the event loop's longest stall in it.
  const probe = stallProbe();
  const later: number[] = [];
  const stalls: number[] = [];
  for (let i = 1; i <= LATER_CALLS; i++) {
    await sleep(10);
    probe.take();
    const began = performance.now();
    await billedCall(ledger, i);
    later.push(performance.now() - began);
    await sleep(5 * PROBE_MS);
    stalls.push(probe.take());
  }
  probe.stop();
  await ledger.close();
  const result: FirstCallResult = { ms, laterMs: median(later), laterStall: median(stalls) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** usage() (the first, so opening the store) and recentJobs() in a fresh process; then warm. */
async function reportsProbe(task: WorkerTask): Promise<void> {
  const ledger = openLedger(task.place);
  const time = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
    const started = performance.now();
    const value = await work();
    return [performance.now() - started, value];
  };
  const [usage, report] = await time(() => ledger.usage());
  const rssMiB = process.memoryUsage().rss / 1024 / 1024;
  const [recentJobs, jobs] = await time(() => ledger.recentJobs());
  const usageWarm: number[] = [];
  const recentJobsWarm: number[] = [];
  for (let i = 0; i < 5; i++) {
    usageWarm.push((await time(() => ledger.usage()))[0]);
    recentJobsWarm.push((await time(() => ledger.recentJobs()))[0]);
  }
  await ledger.close();
  const dayCalls = Object.values(report.periods.day.kinds).reduce((sum, k) => sum + k.calls, 0);
  const result: ReportsResult = {
    usage,
    usageWarm: median(usageWarm),
    recentJobs,
    recentJobsWarm: median(recentJobsWarm),
    rssMiB,
    jobs: jobs.length,
    dayCalls,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** doctor's ledger checks alone (the ledger's line and the limits' line), in a fresh process. */
async function doctorLedgerProbe(task: WorkerTask): Promise<void> {
  const env = {
    GATEWAY_LEDGER_DIR: task.place.dir,
    ...(task.place.url ? { GATEWAY_LEDGER_URL: task.place.url } : {}),
    GATEWAY_LIMITS: LIMITS,
    GATEWAY_LIMITS_PER_USER: LIMITS_PER_USER,
    GATEWAY_PRICES: PRICES,
  };
  const { config } = parseCommandLine(['doctor'], env, task.place.dir);
  const started = performance.now();
  const checks = await checkLedger(config, LOG);
  const ms = performance.now() - started;
  const failed = checks.filter((c) => c.status === 'fail');
  if (failed.length > 0)
    throw new Error(`doctor's ledger checks failed: ${failed.map((c) => c.message).join('; ')}`);
  process.stdout.write(`${JSON.stringify({ ms })}\n`);
}

// ---- The growth ledger, written straight into the store's tables ----

/**
 * What the calls are, by their number i: a mix of kinds (3% video, 5% speech, 3% transcription,
 * 30% chat, 40% search, 19% fetch), two or three models each, and outcomes (90% accepted, 5%
 * refused, 3.8% declined, 1% unknown, 0.2% never ended), as SQL both stores read. Accepted videos
 * have job ids, and a last status in the job status table.
 */
const KIND = `CASE WHEN i % 100 < 3 THEN 'video' WHEN i % 100 < 8 THEN 'speech' WHEN i % 100 < 11 THEN 'transcription'
  WHEN i % 100 < 41 THEN 'chat' WHEN i % 100 < 81 THEN 'search' ELSE 'fetch' END`;
const OUTCOME = `CASE WHEN (i * 7919) % 1000 < 2 THEN NULL WHEN (i * 7919) % 1000 < 902 THEN 'accepted'
  WHEN (i * 7919) % 1000 < 952 THEN 'refused' WHEN (i * 7919) % 1000 < 990 THEN 'declined' ELSE 'unknown' END`;
const CALL_COLUMNS =
  'id, began_at, session, pid, host, person, client, kind, tool, model, hash, words, key, expected, outcome, ended_at, job, amount, reason, status, file';
/** The columns' values from i, t (began at), kind and outcome; `hash`: a 32-hex-digit expression. */
function callValues(hash: string): string {
  return `'bench' || i, t, 'bs' || (i / 3000 * 3 + i % 3), 20000 + (i / 3000 * 3 + i % 3) % 10000, 'bench-host',
    'bench-user-' || (i % 20), NULL, kind,
    CASE kind WHEN 'video' THEN 'video_generate' WHEN 'speech' THEN 'audio_speech' WHEN 'transcription' THEN 'audio_transcribe'
      WHEN 'chat' THEN 'ask_model' WHEN 'search' THEN 'web_search' ELSE 'web_fetch' END,
    CASE kind WHEN 'video' THEN (CASE WHEN i % 7 = 0 THEN 'openai/sora-2' ELSE 'xai/grok-imagine-video' END)
      WHEN 'speech' THEN (CASE WHEN i % 2 = 0 THEN 'openai/tts-1' ELSE 'openai/gpt-4o-mini-tts' END)
      WHEN 'transcription' THEN 'openai/whisper-1'
      WHEN 'chat' THEN (CASE i % 3 WHEN 0 THEN 'openai/gpt-4o-mini' WHEN 1 THEN 'anthropic/claude-sonnet-4' ELSE 'google/gemini-2.5-flash' END)
      WHEN 'search' THEN (CASE WHEN i % 2 = 0 THEN 'tavily' ELSE 'exa' END)
      ELSE (CASE WHEN i % 2 = 0 THEN 'tavily' ELSE 'firecrawl' END) END,
    ${hash}, 'bench call ' || i || ': a prompt of a few words',
    CASE WHEN kind = 'video' THEN 'gtm-bench-' || i END,
    CASE kind WHEN 'video' THEN 8 WHEN 'speech' THEN 400 END,
    outcome,
    CASE WHEN outcome IS NOT NULL THEN t + 900 + (i % 50) * 100 END,
    CASE WHEN kind = 'video' AND outcome = 'accepted' THEN 'vj_bench_' || i END,
    CASE WHEN outcome = 'accepted' THEN (CASE kind WHEN 'video' THEN 8 WHEN 'speech' THEN 400
      WHEN 'transcription' THEN 60 WHEN 'chat' THEN 1200 END) END,
    CASE outcome WHEN 'refused' THEN 'HTTP 429: rate limited' WHEN 'declined' THEN 'not confirmed'
      WHEN 'unknown' THEN 'connection reset' END,
    CASE WHEN kind = 'video' AND outcome = 'accepted' THEN 'queued' END,
    CASE WHEN kind = 'speech' AND outcome = 'accepted' THEN '/home/user/project/gateway-output/speech-' || i || '.mp3' END`;
}

/** The last status of each accepted video's job: most completed, some failed, a minute and a half after. */
const JOB_STATUSES = `SELECT job, CASE WHEN seq % 10 = 0 THEN 'failed' ELSE 'completed' END, ended_at + 90000
  FROM ${CALLS} WHERE job IS NOT NULL`;

/** When the growth ledger's calls begin: from 30 days less an hour ago to a minute ago. */
function growthSpan(): { start: number; span: number } {
  const now = Date.now();
  const start = now - 30 * DAY_MS + 3_600_000;
  return { start, span: now - 60_000 - start };
}

/**
 * SQLite: the store's indexes set aside (their SQL kept), every call inserted by one statement in
 * one transaction, the indexes made again, the WAL checkpointed (a ledger that grew over 30 days
 * has been, many times). Not ANALYZEd: the store never does it.
 */
async function fillSqlite(file: string, rows: number): Promise<void> {
  const { start, span } = growthSpan();
  // Loaded here, after the store has loaded it quietly: Node 22 announces it on stderr.
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(file);
  try {
    db.exec('PRAGMA synchronous = OFF');
    db.exec('BEGIN IMMEDIATE');
    const indexes = db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = $table AND sql IS NOT NULL",
      )
      .all({ $table: CALLS }) as { name: string; sql: string }[];
    for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
    db.prepare(
      `INSERT INTO ${CALLS} (${CALL_COLUMNS})
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $rows - 1),
       k AS (SELECT i, CAST($start + (i * $span) / $rows AS INTEGER) AS t, ${KIND} AS kind, ${OUTCOME} AS outcome FROM n)
       SELECT ${callValues('lower(hex(randomblob(16)))')} FROM k`,
    ).run({ $rows: rows, $start: start, $span: span });
    for (const index of indexes) db.exec(index.sql);
    db.exec(`INSERT INTO ${STATUSES} (job, status, at) ${JOB_STATUSES}`);
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/**
 * PostgreSQL: the same, by one INSERT … SELECT over generate_series, then VACUUM ANALYZE of each
 * table, the tallies the triggers kept too (a table that grew over 30 days has been vacuumed and
 * analyzed by autovacuum).
 */
async function fillPostgres(client: pg.Client, rows: number): Promise<void> {
  const { start, span } = growthSpan();
  await client.query('BEGIN');
  const indexes = (
    await client.query<{ name: string; sql: string }>(
      `SELECT indexname AS name, indexdef AS sql FROM pg_indexes WHERE tablename = $1
         AND indexname NOT IN (SELECT conname FROM pg_constraint)`,
      [CALLS],
    )
  ).rows;
  for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
  await client.query(
    `INSERT INTO ${CALLS} (${CALL_COLUMNS})
     SELECT ${callValues('md5(i::text)')}
     FROM (SELECT i, $2::bigint + (i * $3::bigint) / $1 AS t, ${KIND} AS kind, ${OUTCOME} AS outcome
       FROM generate_series(0::bigint, $1 - 1) AS i) AS k`,
    [rows, start, span],
  );
  for (const index of indexes) await client.query(index.sql);
  await client.query(`INSERT INTO ${STATUSES} (job, status, at) ${JOB_STATUSES}`);
  await client.query('COMMIT');
  await client.query(`VACUUM ANALYZE ${CALLS}`);
  await client.query(`VACUUM ANALYZE ${STATUSES}`);
  await client.query('VACUUM ANALYZE gateway_ledger_tallies');
}

// ---- The built CLI ----

/** Builds dist/ when dist/cli.js is missing or older than a file of src/. */
function ensureBuilt(): void {
  const cli = join(ROOT, 'dist/cli.js');
  const built = existsSync(cli) ? statSync(cli).mtimeMs : 0;
  const src = join(ROOT, 'src');
  const newest = Math.max(
    ...readdirSync(src, { recursive: true, encoding: 'utf8' }).map(
      (file) => statSync(join(src, file)).mtimeMs,
    ),
  );
  if (built >= newest) return;
  console.error('bench/ledger.ts: dist/ is older than src/, building it first (npm run build)');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) throw new Error(`npm run build failed (${build.status})`);
}

// ---- The rows ----

const ms = (value: number) => `${value.toFixed(2)} ms`;
const s = (value: number) => `${(value / 1000).toFixed(2)} s`;
const signed = (value: number) => `${value < 0 ? '-' : '+'}${Math.abs(value).toFixed(1)}`;

/** The bench's rows for the table of `npm run bench`: benchmark, figure, baseline, ratio. */
export function ledgerRows(result: LedgerBench): [string, string, string, string][] {
  const rows: [string, string, string, string][] = [];
  for (const bench of [result.sqlite, result.postgres]) {
    if (typeof bench === 'string') {
      for (const name of rowNames('PostgreSQL')) rows.push([name, bench, '', '']);
      continue;
    }
    rows.push(...storeRows(bench, result));
  }
  return rows;
}

function rowNames(store: StoreName): string[] {
  return [
    `ledger (${store}): a billed call's added time, three at once, p99`,
    `ledger (${store}): a billed call's added time, back to back, p99`,
    `ledger (${store}): event loop's longest stall per call, p99`,
    `ledger (${store}), 1,000,000 calls: a fresh process's first billed call`,
    `ledger (${store}), 1,000,000 calls: the billed calls after it`,
    `ledger (${store}), 1,000,000 calls: usage()`,
    `ledger (${store}), 1,000,000 calls: recentJobs()`,
    `ledger (${store}), 1,000,000 calls: node dist/cli.js usage`,
    `ledger (${store}), 1,000,000 calls: node dist/cli.js doctor`,
    `ledger (${store}), 1,000,000 calls: RSS after usage()`,
  ];
}

function storeRows(b: StoreBench, result: LedgerBench): [string, string, string, string][] {
  const names = rowNames(b.store);
  const goal = GOAL.callMs[b.store];
  const g = b.growth;
  const floorWhat =
    b.store === 'SQLite' ? 'one synced append per call' : 'one committed one-row INSERT per call';
  const vsEmpty = (pair: Pair, goalMs: number, format = ms) =>
    `${ratio(pair.big, pair.empty)} the empty ledger; ${ratio(pair.big, goalMs)} of the ${format(goalMs)} goal`;
  return [
    [
      names[0]!,
      `${ms(b.together.p99)} (p50 ${ms(b.together.p50)}; three settled processes, each call begun at once with the other two's, every ${result.paceMs} ms; begin alone p99 ${ms(b.together.begin.p99)}; ${b.together.cpuUs.toFixed(0)} µs CPU per call); fresh processes ${ms(b.fresh.together.p99)}`,
      `floor: ${ms(b.floor.p99)} (${floorWhat}, three processes at once; p50 ${ms(b.floor.p50)})`,
      `${ratio(b.together.p99, goal)} of the ${goal} ms goal`,
    ],
    [
      names[1]!,
      `${ms(b.backToBack.p99)} (p50 ${ms(b.backToBack.p50)}; three settled processes, each call sent to a server on loopback between its begin and end, the next begun as soon as it ended; begin alone p99 ${ms(b.backToBack.begin.p99)}; the slowest 1% waited ${ms(b.backToBack.slowestCpuWait)} on average for a CPU, besides waiting for other processes that did); fresh processes ${ms(b.fresh.backToBack.p99)}; with nothing sent between begin and end (a stress figure: every core busy) ${ms(b.stress.p99)} (p50 ${ms(b.stress.p50)})`,
      `same floor`,
      `${ratio(b.backToBack.p99, goal)} of the ${goal} ms goal`,
    ],
    [
      names[2]!,
      `${ms(b.together.stall.p99)} (p50 ${ms(b.together.stall.p50)}; each of three processes billing at once, every ${result.paceMs} ms)`,
      `${ms(b.idleStall.p99)} (the same probe in a fourth process that bills nothing; p50 ${ms(b.idleStall.p50)})`,
      `${ratio(b.together.stall.p99, GOAL.stallMs)} of the ${GOAL.stallMs} ms goal`,
    ],
    [
      names[3]!,
      `${ms(g.firstCall.big)} (open + begin + end, median of ${result.reps} processes; the ledger built in ${s(g.buildMs)})`,
      `${ms(g.firstCall.empty)} (an empty ledger)`,
      vsEmpty(g.firstCall, GOAL.firstCallMs),
    ],
    [
      names[4]!,
      `${ms(g.laterCall.big)} (the median of the ${LATER_CALLS} calls after the first, one process alone, 10 ms apart); the event loop's longest stall in each ${ms(g.laterStall.big)}`,
      `${ms(g.laterCall.empty)}; stall ${ms(g.laterStall.empty)} (an empty ledger)`,
      `${ratio(g.laterCall.big, g.laterCall.empty)} the empty ledger; ${ratio(g.laterCall.big, goal)} of the ${goal} ms goal; the stall ${ratio(g.laterStall.big, GOAL.stallMs)} of the ${GOAL.stallMs} ms goal`,
    ],
    [
      names[5]!,
      `${ms(g.usage.big)} (a fresh process's first, so opening the store; then ${ms(g.usageWarm.big)})`,
      `${ms(g.usage.empty)} (then ${ms(g.usageWarm.empty)})`,
      vsEmpty(g.usage, GOAL.usageMs),
    ],
    [
      names[6]!,
      `${ms(g.recentJobs.big)} (video_status without a job id, right after usage(); then ${ms(g.recentJobsWarm.big)})`,
      `${ms(g.recentJobs.empty)} (then ${ms(g.recentJobsWarm.empty)})`,
      vsEmpty(g.recentJobs, GOAL.recentJobsMs),
    ],
    [
      names[7]!,
      `${s(g.cliUsage.big)} (wall time)`,
      `${s(g.cliUsage.empty)}`,
      vsEmpty(g.cliUsage, GOAL.cliMs, s),
    ],
    [
      names[8]!,
      `${s(g.cliDoctor.big)} (wall time, gateway on loopback; its ledger checks alone ${ms(g.doctorLedger.big)})`,
      `${s(g.cliDoctor.empty)} (ledger checks ${ms(g.doctorLedger.empty)})`,
      vsEmpty(g.cliDoctor, GOAL.cliMs, s),
    ],
    [
      names[9]!,
      `${signed(g.rssMiB.big - g.rssMiB.empty)} MiB (${g.rssMiB.big.toFixed(1)} MiB, median of ${result.reps} processes)`,
      `${g.rssMiB.empty.toFixed(1)} MiB (an empty ledger)`,
      `${ratio(g.rssMiB.big - g.rssMiB.empty, GOAL.rssMiB)} of the ${GOAL.rssMiB} MiB goal`,
    ],
  ];
}

// ---- Entry ----

const args = process.argv.slice(2);
if (args[0] === '--worker') {
  const task = JSON.parse(args[1] ?? '{}') as WorkerTask;
  const run = {
    calls: callsWorker,
    floor: floorWorker,
    'pg-floor': postgresFloorWorker,
    idle: (t: WorkerTask) => timeCalls(t.calls ?? 0, t.paceMs ?? 0, async () => ({ added: 0, begin: 0 })),
    'first-call': firstCallProbe,
    reports: reportsProbe,
    'doctor-ledger': doctorLedgerProbe,
  }[task.mode];
  await run(task);
} else if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const quick = args.includes('--quick');
  const started = performance.now();
  const result = await benchLedger(quick ? 100 : 500, quick ? 3 : 5);
  console.log(
    `ledger: ${result.calls} timed billed calls per process, growth figures the median of ${result.reps} processes; ${s(performance.now() - started)} in all\n`,
  );
  console.log('| benchmark | gateway-tools-mcp | baseline | ratio |\n|---|---|---|---|');
  for (const row of ledgerRows(result)) console.log(`| ${row.join(' | ')} |`);
}
