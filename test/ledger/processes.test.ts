// The ledger shared by real processes, on each store: a race for the last calls a limit allows, a
// process killed with a call in flight or in the middle of its calls, a process stopped (SIGSTOP)
// while it holds a begin's transaction, and many calls with the longest fields at once.
//
// SQLite: every process names the same GATEWAY_LEDGER_DIR. PostgreSQL: every process has a
// GATEWAY_LEDGER_DIR of its own, and they share only the database's URL (a fresh database for each
// test); without a PostgreSQL server to start, its cases are skipped, and said so once.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseLimits } from '../../src/config/limits.js';
import { Ledger, type LedgerCall } from '../../src/ledger/ledger.js';
import type { Logger } from '../../src/lib/log.js';
import { PROJECT_ROOT, processAlive, tempDir } from '../harness/harness.js';
import { HAS_POSTGRES, POSTGRES_MISSING, startPostgres } from '../harness/postgres.js';
import type { CallReport, WorkerTask } from './worker.js';

const WORKER = join(PROJECT_ROOT, 'test/ledger/worker.ts');
const VIDEO_MODEL = 'xai/grok-imagine-video';
/** How long a begin waits for another process's transaction, in the tests of a held one. */
const WAIT_MS = 1_000;

// ---- Workers ----

const workers = new Set<Worker>();
const readers: Ledger[] = [];

/** One worker process (test/ledger/worker.ts): its stdout read as lines, every wait bounded. */
class Worker {
  readonly child: ChildProcessWithoutNullStreams;
  /** Lines printed so far; `cursor` is the first not yet taken by `line()`. */
  readonly lines: string[] = [];
  private cursor = 0;
  private partial = '';
  private err = '';
  /** How it ended, once its output is closed. */
  gone: string | null = null;
  readonly closed: Promise<void>;

  constructor(readonly task: WorkerTask) {
    this.child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(task)], {
      cwd: PROJECT_ROOT,
    });
    workers.add(this);
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.err += chunk;
    });
    this.closed = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        this.gone = signal ?? `exit ${code}`;
        resolve();
      }),
    );
  }

  get pid(): number {
    return this.child.pid as number;
  }

  stderr(): string {
    return this.err;
  }

  /** The next line that `match` accepts (the lines before it are passed over). */
  async line(match: (line: string) => boolean, what: string, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.lines.length) {
        const line = this.lines[this.cursor++] as string;
        if (match(line)) return line;
      }
      if (this.gone !== null)
        throw new Error(`worker ${this.task.name} ended (${this.gone}) before ${what}: ${this.err}`);
      if (Date.now() > deadline)
        throw new Error(`worker ${this.task.name}: no ${what} within ${timeoutMs} ms: ${this.err}`);
      await sleep(5);
    }
  }

  ready(): Promise<string> {
    return this.line((l) => l === 'ready', '"ready"', 15_000);
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Does its action once: `go`, and the line of JSON it answers with. */
  async run<T = Record<string, unknown>>(timeoutMs = 15_000): Promise<T> {
    this.send('go');
    return JSON.parse(await this.line((l) => l.startsWith('{'), 'its result', timeoutMs)) as T;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Closes its stdin (it exits) and waits for it to be gone. */
  async end(): Promise<void> {
    this.child.stdin.end();
    await within(this.closed, 10_000, `worker ${this.task.name} to exit`);
  }

  /** Kills it, and waits for it to be gone. */
  async kill(): Promise<void> {
    if (this.gone === null) this.child.kill('SIGKILL');
    await within(this.closed, 10_000, `worker ${this.task.name} to be killed`);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The workers warned of nothing (on stderr), to the end: checked last, after what they did. */
function expectNoWarnings(list: Worker[]): void {
  expect(Object.fromEntries(list.map((w) => [w.task.name, w.stderr()]))).toEqual(
    Object.fromEntries(list.map((w) => [w.task.name, ''])),
  );
}

/** Starts workers and waits until every one has its ledger open. */
async function started(tasks: WorkerTask[]): Promise<Worker[]> {
  const list = tasks.map((task) => new Worker(task));
  await Promise.all(list.map((w) => w.ready()));
  return list;
}

// Every process is gone after each test, also when it failed (a stopped one is killed too).
afterEach(async () => {
  await Promise.all([...workers].map((w) => w.kill().catch(() => undefined)));
  workers.clear();
  await Promise.all(readers.splice(0).map((l) => l.close().catch(() => undefined)));
  readerWarnings.length = 0;
});

// ---- The stores ----

/** One test's ledger: where each process finds it, and this test process's view of it. */
interface Place {
  /** What a worker is given: the folder every process shares (SQLite), or its own and the URL. */
  worker(task: Omit<WorkerTask, 'dir' | 'url'>): WorkerTask;
  /** The ledger from this test process, another process to the workers. */
  open(limitsText?: string): Ledger;
  /** The store holds the ledger where it should, and nowhere else. */
  checkPlace(): void;
}

interface Store {
  name: string;
  available: boolean;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** A new, empty ledger for one test: not made yet, unless `made`, and then kept open here. */
  fresh(made?: boolean): Promise<Place>;
  /** The refusal a begin meets when another process holds the transaction past the wait bound. */
  busy: RegExp;
  /** How soon the store frees a transaction whose process is stopped (never: null). */
  stoppedHeldForMs: number | null;
  /** The database file's own check, where there is one. */
  integrity?(place: Place): string;
}

/** What this test process's ledgers warned of: nothing, checked by each test's checkPlace(). */
const readerWarnings: string[] = [];

const readerLog: Logger = {
  level: 'debug',
  error: (m) => readerWarnings.push(m),
  warn: (m) => readerWarnings.push(m),
  info() {},
  debug() {},
};

function limitsOf(text: string) {
  const parsed = parseLimits(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const sqliteDirs = new WeakMap<Place, string>();

const SQLITE: Store = {
  name: 'SQLite',
  available: true,
  setUp: async () => {},
  tearDown: async () => {},
  async fresh(made = true) {
    const dir = tempDir('gtm-ledger-');
    const place: Place = {
      worker: (task) => ({ ...task, dir }),
      open(limitsText = '') {
        const ledger = Ledger.open({ dir, log: readerLog, limits: limitsOf(limitsText) });
        readers.push(ledger);
        return ledger;
      },
      checkPlace() {
        expect(existsSync(join(dir, 'ledger.sqlite'))).toBe(true);
        expect(readerWarnings).toEqual([]);
      },
    };
    sqliteDirs.set(place, dir);
    if (made) await place.open().usage(0);
    return place;
  },
  // The tool layer puts "Not sent, and nothing billed:" first where the store does not.
  busy: /^The ledger of billed calls \(\/.+\/ledger\.sqlite\) is held by another server process that has not let go for 1 s \(stopped, or stuck\): try again shortly; if it stays busy, end the stuck gateway-tools-mcp process\.$/,
  stoppedHeldForMs: null,
  integrity(place) {
    const db = new DatabaseSync(join(sqliteDirs.get(place) as string, 'ledger.sqlite'), { readOnly: true });
    try {
      return String(db.prepare('PRAGMA integrity_check').get()?.integrity_check);
    } finally {
      db.close();
    }
  },
};

/** The database server's idle_in_transaction_session_timeout, as src/ledger/postgres-store.ts sets it. */
const POSTGRES_IDLE_IN_TRANSACTION_MS = 5_000;

let server: Awaited<ReturnType<typeof startPostgres>> | undefined;
let databases = 0;

const POSTGRES: Store = {
  name: 'PostgreSQL',
  available: HAS_POSTGRES,
  async setUp() {
    server = await startPostgres();
  },
  async tearDown() {
    await server?.stop();
    server = undefined;
  },
  async fresh(made = true) {
    if (!server) throw new Error('no PostgreSQL server');
    const database = `ledger_${process.pid}_${++databases}`;
    // Made by the superuser, owned by the URL's user, who may then make the ledger's tables.
    await server.psql(`CREATE DATABASE ${database} OWNER "${server.user}"`);
    const url = new URL(server.url);
    url.pathname = `/${database}`;
    const shared = url.toString();
    const password = server.password;
    const dirs: string[] = [];
    const place: Place = {
      worker(task) {
        // A folder of its own: the database's URL is all the processes share.
        const dir = tempDir('gtm-ledger-');
        dirs.push(dir);
        return { ...task, dir, url: shared };
      },
      open(limitsText = '') {
        const dir = tempDir('gtm-ledger-');
        dirs.push(dir);
        const ledger = Ledger.open({ dir, url: shared, log: readerLog, limits: limitsOf(limitsText) });
        readers.push(ledger);
        return ledger;
      },
      checkPlace() {
        for (const dir of dirs) expect(readdirSync(dir), `${dir} stays empty`).toEqual([]);
        for (const worker of workers) expect(worker.stderr()).not.toContain(password);
        expect(readerWarnings).toEqual([]);
      },
    };
    if (made) await place.open().usage(0);
    return place;
  },
  busy: /^The ledger of billed calls \(postgres(ql)?:\/\/\*\*\*@[^)]+\) is busy: .*\b1 s\b.*pg_stat_activity/,
  stoppedHeldForMs: POSTGRES_IDLE_IN_TRANSACTION_MS,
};

if (!HAS_POSTGRES) console.warn(POSTGRES_MISSING);

/** Every call of the ledger, oldest first, as reports show them. */
async function allCalls(ledger: Ledger): Promise<LedgerCall[]> {
  const calls: LedgerCall[] = [];
  await ledger.exportCalls(0, (page) => {
    calls.push(...page);
  });
  return calls;
}

const LIMIT_SENTENCE = (limit: string, used: number) =>
  new RegExp(
    `^Not sent, and nothing billed: the shared limit ${limit.replace('/', '\\/')} \\(GATEWAY_LIMITS\\) is reached, with ${used} video calls in the last 24 hours, by everyone sharing the ledger\\. The next is possible at .+ \\(in .+\\); to allow more, raise it in GATEWAY_LIMITS and restart the server\\.$`,
  );

describe.each([SQLITE, POSTGRES])('the ledger across processes on $name', (store) => {
  describe.skipIf(!store.available)(store.name, () => {
    beforeAll(() => store.setUp(), 60_000);
    afterAll(() => store.tearDown());

    /** Processes racing: outcomes and sentences, and what the ledger then holds. */
    async function race(processes: number, calls: number, limit: string, allowed: number, made = true) {
      const place = await store.fresh(made);
      const racers = await started(
        Array.from({ length: processes }, (_, i) =>
          place.worker({ action: 'race', calls, name: `p${i}`, limits: limit }),
        ),
      );
      const results = await Promise.all(
        racers.map((w) => w.run<{ outcomes: string[]; sentences: string[] }>()),
      );
      await Promise.all(racers.map((w) => w.end()));
      const outcomes = results.flatMap((r) => r.outcomes);
      expect(outcomes).toHaveLength(processes * calls);
      expect(outcomes.filter((o) => o === 'go')).toHaveLength(allowed);
      expect(outcomes.filter((o) => o === 'limited')).toHaveLength(processes * calls - allowed);
      const sentences = results.flatMap((r) => r.sentences);
      expect(sentences).toHaveLength(processes * calls - allowed);
      for (const sentence of sentences) expect(sentence).toMatch(LIMIT_SENTENCE(limit, allowed));

      // The ledger agrees: the calls let through, accepted; the rest declined by the limit.
      const reader = place.open(limit);
      const recorded = await allCalls(reader);
      expect(recorded).toHaveLength(processes * calls);
      expect(recorded.filter((c) => c.state === 'accepted')).toHaveLength(allowed);
      expect(
        recorded.filter((c) => c.state === 'accepted').every((c) => /^vj_p\d+_0_\d+$/.test(c.jobId ?? '')),
      ).toBe(true);
      const declined = recorded.filter((c) => c.state === 'declined');
      expect(declined).toHaveLength(processes * calls - allowed);
      expect(declined.every((c) => c.reason === `limit ${limit}` && c.jobId === null)).toBe(true);
      const usage = await reader.usage(0);
      expect(usage.periods.day.kinds.video.calls).toBe(allowed);
      expect(usage.periods.day.notBilled).toBe(processes * calls - allowed);
      expect(usage.limits).toEqual([expect.objectContaining({ limit, used: allowed, left: 0 })]);
      place.checkPlace();
      expectNoWarnings(racers);
    }

    it('lets exactly the calls a limit allows through when processes race for them', async () => {
      await race(3, 2, 'video=2/day', 2);
      await race(3, 10, 'video=8/day', 8);
    });

    it('makes a new ledger from several processes opening it at once, and still keeps the limit', async () => {
      // Servers started together, whose first billed calls come at once: each opens (and one makes)
      // the ledger while the others do. Several rounds, since who comes first varies (SQLite's
      // file goes through more states as it is made: created, switched to WAL, given its tables).
      const rounds = store.name === 'SQLite' ? 5 : 3;
      for (let round = 0; round < rounds; round++) await race(4, 1, 'video=3/day', 3, false);
    });

    it('lists a call whose process was killed between its begin and its end as unknown, and counts it', async () => {
      const place = await store.fresh();
      const limit = 'video=2/day';
      const [killed, b, c] = (await started([
        place.worker({ action: 'hang', name: 'killed', limits: limit }),
        place.worker({ action: 'race', calls: 1, name: 'b', limits: limit }),
        place.worker({ action: 'race', calls: 1, name: 'c', limits: limit }),
      ])) as [Worker, Worker, Worker];
      const begun = await killed.run<{ status: string; id: string }>();
      expect(begun.status).toBe('go');

      const other = place.open(limit);
      // While the process lives, its call is in flight.
      expect(await other.recentJobs()).toEqual([
        expect.objectContaining({ state: 'pending', jobId: null, idempotencyKey: 'key-killed' }),
      ]);
      killed.signal('SIGKILL');
      await within(killed.closed, 5_000, 'the killed worker to be gone');
      expect(processAlive(killed.pid)).toBe(false);

      expect(await other.recentJobs()).toEqual([
        expect.objectContaining({
          state: 'unknown',
          jobId: null,
          idempotencyKey: 'key-killed',
          words: 'a lighthouse in a storm, slow zoom out,…',
          model: VIDEO_MODEL,
          thisSession: false,
        }),
      ]);
      const usage = await other.usage(0);
      expect(usage.periods.day.unknown).toBe(1);
      expect(usage.periods.day.kinds.video.calls).toBe(1);

      // It may have been billed, so it counts: of two more processes' calls, one fits video=2/day.
      const results = await Promise.all(
        [b, c].map((w) => w.run<{ outcomes: string[]; sentences: string[] }>()),
      );
      expect(results.flatMap((r) => r.outcomes).sort()).toEqual(['go', 'limited']);
      expect(results.flatMap((r) => r.sentences)).toEqual([expect.stringMatching(LIMIT_SENTENCE(limit, 2))]);

      // Nothing is lost: the killed call is recorded as it was begun, without an end.
      const recorded = await allCalls(other);
      expect(recorded.map((r) => r.state).sort()).toEqual(['accepted', 'declined', 'unknown']);
      expect(recorded.find((r) => r.state === 'unknown')).toEqual(
        expect.objectContaining({
          id: begun.id,
          pid: killed.pid,
          endedAt: null,
          idempotencyKey: 'key-killed',
        }),
      );
      await Promise.all([b, c].map((w) => w.end()));
      place.checkPlace();
      expectNoWarnings([b, c]);
    });

    it('loses no call of a process killed in the middle of its calls', async () => {
      const place = await store.fresh();
      const [streamer, caller] = (await started([
        place.worker({ action: 'stream', calls: 2_000, name: 'stream' }),
        place.worker({ action: 'call', name: 'after' }),
      ])) as [Worker, Worker];
      streamer.send('go');
      for (let i = 0; i < 40; i++) await streamer.line((l) => l.startsWith('begun '), `begun call ${i}`);
      streamer.signal('SIGKILL');
      await within(streamer.closed, 5_000, 'the killed worker to be gone');
      const printed = streamer.lines
        .filter((l) => l.startsWith('begun '))
        .map((l) => l.slice('begun '.length));
      expect(printed.length).toBeGreaterThanOrEqual(40);
      expect(printed.length).toBeLessThan(2_000);

      const reader = place.open();
      const recorded = (await allCalls(reader)).filter((c) => c.tool === 'ask_model');
      const ids = new Set(recorded.map((c) => c.id));
      // Every call whose begin was recorded is there; at most one more was begun as it was killed.
      expect(printed.filter((id) => !ids.has(id))).toEqual([]);
      expect(recorded.length - printed.length).toBeGreaterThanOrEqual(0);
      expect(recorded.length - printed.length).toBeLessThanOrEqual(1);
      // Each ended but the one in flight, which reads as unknown.
      const open = recorded.filter((c) => c.endedAt === null);
      expect(open.length).toBeLessThanOrEqual(1);
      expect(open.every((c) => c.state === 'unknown')).toBe(true);
      expect(recorded.filter((c) => c.endedAt !== null).every((c) => c.state === 'accepted')).toBe(true);
      if (store.integrity) expect(store.integrity(place)).toBe('ok');

      // The ledger goes on.
      const after = await caller.run<CallReport>();
      expect(after).toEqual(expect.objectContaining({ status: 'go', error: null }));
      await caller.end();
      place.checkPlace();
      expectNoWarnings([caller]);
    });

    it('refuses a call while a stopped process holds a begin, without freezing, and calls go again once it lets go', async () => {
      const place = await store.fresh();
      const [caller, holder] = (await started([
        place.worker({ action: 'call', name: 'caller', waitMs: WAIT_MS }),
        place.worker({ action: 'hold', name: 'holder', waitMs: WAIT_MS }),
      ])) as [Worker, Worker];
      holder.send('go');
      await holder.line((l) => l === 'holding', '"holding"');
      const heldAt = Date.now();
      holder.signal('SIGSTOP');

      const refused = await caller.run<CallReport>();
      expect(refused.status).toBeNull();
      expect(refused.error?.name).toBe('LedgerUnavailable');
      expect(refused.error?.message).toMatch(store.busy);
      // After about the wait bound, not at once and not stuck.
      expect(refused.ms).toBeGreaterThanOrEqual(WAIT_MS - 50);
      expect(refused.ms).toBeLessThan(WAIT_MS + 2_000);
      // Its event loop went on meanwhile: a 10 ms timer turned at least half as often as it could.
      expect(refused.ticks).toBeGreaterThanOrEqual(Math.floor(refused.ms / 20));

      const reader = place.open();
      if (store.stoppedHeldForMs === null) {
        // SQLite: a stopped process keeps its lock; continued, it finishes its begin, and calls go.
        holder.signal('SIGCONT');
        holder.send('release');
        expect(await holder.line((l) => l.startsWith('{'), 'the release')).toBe('{"released":true}');
        await within(holder.closed, 5_000, 'the holder to exit');
        const after = await caller.run<CallReport>();
        expect(after).toEqual(expect.objectContaining({ status: 'go', error: null }));
        expect(after.ms).toBeLessThan(WAIT_MS);
        expect((await allCalls(reader)).map((c) => c.id)).toContain('hold-holder');
      } else {
        // PostgreSQL: the database ends the stopped process's idle transaction after its bound, and
        // calls go again while that process is still stopped.
        let after: CallReport | undefined;
        const tries: CallReport[] = [];
        while (Date.now() - heldAt < store.stoppedHeldForMs + 3 * WAIT_MS) {
          const report = await caller.run<CallReport>();
          tries.push(report);
          if (report.status === 'go') {
            after = report;
            break;
          }
          expect(report.error?.message).toMatch(store.busy);
        }
        const freedAfter = Date.now() - heldAt;
        expect(after, JSON.stringify(tries)).toEqual(expect.objectContaining({ status: 'go', error: null }));
        expect(freedAfter).toBeGreaterThanOrEqual(store.stoppedHeldForMs - 500);
        expect(freedAfter).toBeLessThan(store.stoppedHeldForMs + 3 * WAIT_MS);
        expect(processAlive(holder.pid)).toBe(true);
        // What it wrote in its transaction was never committed.
        expect((await allCalls(reader)).map((c) => c.id)).not.toContain('hold-holder');
        await holder.kill();
      }

      // A holder killed while stopped: its transaction is rolled back, and calls go at once.
      const [killed] = (await started([
        place.worker({ action: 'hold', name: 'killed', waitMs: WAIT_MS }),
      ])) as [Worker];
      killed.send('go');
      await killed.line((l) => l === 'holding', '"holding"');
      killed.signal('SIGSTOP');
      killed.signal('SIGKILL');
      await within(killed.closed, 5_000, 'the killed holder to be gone');
      const again = await caller.run<CallReport>();
      expect(again).toEqual(expect.objectContaining({ status: 'go', error: null }));
      expect(again.ms).toBeLessThan(WAIT_MS);
      const ids = (await allCalls(reader)).map((c) => c.id);
      expect(ids).not.toContain('hold-killed');
      expect(ids.filter((id) => !id.startsWith('hold-'))).toHaveLength(2);
      await caller.end();
      place.checkPlace();
      expectNoWarnings([caller]);
    });

    it('records every call of several processes with the longest fields, with its end', async () => {
      const place = await store.fresh();
      const names = ['p', 'q', 'r'];
      const calls = 60;
      const many = await started(names.map((name) => place.worker({ action: 'many', calls, name })));
      const results = await Promise.all(many.map((w) => w.run<{ calls: number }>(20_000)));
      await Promise.all(many.map((w) => w.end()));
      expect(results.map((r) => r.calls)).toEqual(names.map(() => calls));

      const reader = place.open();
      const recorded = await allCalls(reader);
      expect(recorded).toHaveLength(names.length * calls);
      for (const name of names) {
        const own = recorded.filter((c) => c.model === `${'é'.repeat(250)}-${name}`);
        expect(own).toHaveLength(calls);
        own.forEach((call, i) => {
          expect(call).toEqual(
            expect.objectContaining({
              state: 'accepted',
              kind: 'speech',
              tool: 'audio_speech',
              jobId: `${name}-${i}-`.padEnd(2048, 'j'),
              idempotencyKey: `${name}-${i}-`.padEnd(256, 'k'),
              amount: 70,
              reason: '🙂'.repeat(100),
              file: `/tmp/${'ö'.repeat(500)}`,
              endedAt: expect.any(String),
            }),
          );
          expect(call.words.startsWith('ü')).toBe(true);
        });
      }
      const usage = await reader.usage(0);
      expect(usage.periods.day.kinds.speech).toEqual({
        calls: names.length * calls,
        amount: names.length * calls * 70,
        unit: 'chars',
      });
      place.checkPlace();
      expectNoWarnings(many);
    });
  });
});
