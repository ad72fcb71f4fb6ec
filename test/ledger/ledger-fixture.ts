// What the tests of the ledger share (ledger.test.ts, ledger-limits.test.ts, ledger-place.test.ts):
// the stores they run on, ledgers opened on them, the calls they make, and what a store holds.
//
// SQLite is a real ledger.sqlite in a temporary folder, with a clock the tests move (the store
// times calls by the process's clock, which the `now` option replaces). PostgreSQL is a real
// server, one per test file, started in beforeAll and stopped in afterAll, with a database of its
// own for each test; its time is the database server's, which no test can move.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { parseLimits } from '../../src/config/limits.js';
import { parsePrices } from '../../src/config/prices.js';
import {
  type BillableCall,
  Ledger,
  type LedgerCall,
  type LedgerOptions,
  type LedgerReader,
} from '../../src/ledger/ledger.js';
import type { Logger } from '../../src/lib/log.js';
import { PROJECT_ROOT, tempDir } from '../harness/harness.js';
import { HAS_POSTGRES, POSTGRES_MISSING, type RunningPostgres, startPostgres } from '../harness/postgres.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** Where the SQLite clock starts: a fixed time, so refusals can be checked word for word. */
export const START = Date.parse('2026-11-24T10:00:00.000Z');
export const DATABASE = 'ledger.sqlite';

/** Where a ledger is: its folder, and for PostgreSQL the database's URL. */
export interface Place {
  dir: string;
  url?: string;
}

export interface StoreUnderTest {
  name: 'SQLite' | 'PostgreSQL';
  /** Whether the tests' clock is the store's (SQLite); PostgreSQL's time is the server's. */
  movableClock: boolean;
  /** A new, empty ledger's place. */
  place(): Promise<Place>;
  /** Everything the store keeps, as text: to show what it never keeps. */
  contents(place: Place): Promise<string>;
  /** Where reports say the ledger is: its folder, or its URL with the password masked. */
  where(place: Place): string;
}

/** ledger.sqlite in a new temporary folder; its contents are the database's files, byte for byte. */
export const SQLITE: StoreUnderTest = {
  name: 'SQLite',
  movableClock: true,
  async place() {
    return { dir: tempDir('gtm-ledger-') };
  },
  async contents(place) {
    return ['', '-wal', '-journal']
      .map((suffix) => join(place.dir, DATABASE + suffix))
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file, 'latin1'))
      .join('\n');
  },
  where: (place) => place.dir,
};

/**
 * The stores a test file runs its shared tests on: SQLite, and PostgreSQL where it is installed
 * (else the run says why not, once). Closes the ledgers each test opened after it.
 */
export function useStores(): StoreUnderTest[] {
  afterEach(closeLedgers);
  if (!HAS_POSTGRES) {
    console.warn(POSTGRES_MISSING);
    return [SQLITE];
  }
  return [SQLITE, usePostgres()];
}

/**
 * One PostgreSQL server for the file; each place is a database of its own on it, made by the
 * superuser and owned by the (not super) user the ledger's URL names.
 */
function usePostgres(): StoreUnderTest {
  let server: RunningPostgres | undefined;
  let databases = 0;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  return {
    name: 'PostgreSQL',
    movableClock: false,
    async place() {
      if (!server) throw new Error('the PostgreSQL server did not start');
      const name = `ledger_test_${++databases}`;
      await server.psql(`CREATE DATABASE ${name} OWNER "${server.user}"`);
      const url = new URL(server.url);
      url.pathname = `/${name}`;
      return { dir: tempDir('gtm-ledger-'), url: url.toString() };
    },
    async contents(place) {
      if (!place.url) throw new Error('not a PostgreSQL place');
      return withClient(place.url, async (client) => {
        const tables = await client.query<{ table_schema: string; table_name: string }>(
          `SELECT table_schema, table_name FROM information_schema.tables
           WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
        );
        const texts: string[] = [];
        for (const { table_schema, table_name } of tables.rows) {
          const rows = await client.query(`SELECT * FROM "${table_schema}"."${table_name}"`);
          texts.push(`${table_name}: ${JSON.stringify(rows.rows)}`);
        }
        return texts.join('\n');
      });
    },
    where(place) {
      const url = new URL(place.url ?? '');
      return url.toString().replace(`//${url.username}:${url.password}@`, '//***@');
    },
  };
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const opened: LedgerReader[] = [];

/** Closes every ledger opened since the last time (after each test: PostgreSQL's connections). */
export async function closeLedgers(): Promise<void> {
  await Promise.all(opened.splice(0).map((ledger) => ledger.close()));
}

export interface Setup {
  place: Place;
  /** The SQLite ledgers' clock (ms); PostgreSQL's ledgers do not read it. */
  clock: { now: number };
  /** What the ledgers logged as warnings or errors, and at debug level. */
  warnings: string[];
  debug: string[];
  /** The first ledger opened: a server process. */
  ledger: Ledger;
  /** Another server process's ledger on the same place. */
  open(more?: Partial<LedgerOptions>): Ledger;
  /** A ledger opened only to report (`usage`, doctor, `ledger export`). */
  read(more?: Partial<LedgerOptions>): LedgerReader;
  /** The store's time now, as near as the test knows it. */
  now(): number;
  /**
   * Lets time pass between two calls, so the later is later: the SQLite clock moves `ms`;
   * on PostgreSQL a few real milliseconds pass.
   */
  later(ms?: number): Promise<void>;
}

/** A ledger on a new place of `store`, with GATEWAY_LIMITS and GATEWAY_PRICES as written. */
export async function setup(
  store: StoreUnderTest,
  options: { limits?: string; limitsPerUser?: string; prices?: string; place?: Place } & Omit<
    Partial<LedgerOptions>,
    'limits' | 'limitsPerUser' | 'prices' | 'dir' | 'url' | 'log'
  > = {},
): Promise<Setup> {
  const { limits = '', limitsPerUser = '', prices = '', place: given, ...rest } = options;
  const place = given ?? (await store.place());
  const clock = { now: START };
  const warnings: string[] = [];
  const debug: string[] = [];
  const log: Logger = {
    level: 'debug',
    error: (m) => warnings.push(m),
    warn: (m) => warnings.push(m),
    info() {},
    debug: (m) => debug.push(m),
  };
  const parsedLimits = parseLimits(limits);
  const parsedPrices = parsePrices(prices);
  const perUser = parseLimits(limitsPerUser);
  if (!parsedLimits.ok || !parsedPrices.ok || !perUser.ok) throw new Error('bad test setting');
  const options_ = (more: Partial<LedgerOptions>): LedgerOptions => ({
    ...place,
    log,
    limits: parsedLimits.value,
    limitsPerUser: perUser.value,
    prices: parsedPrices.value,
    ...(store.movableClock ? { now: () => clock.now } : {}),
    ...rest,
    ...more,
  });
  const open = (more: Partial<LedgerOptions> = {}) => tracked(Ledger.open(options_(more)));
  return {
    place,
    clock,
    warnings,
    debug,
    ledger: open(),
    open,
    read: (more = {}) => tracked(Ledger.read(options_(more))),
    now: () => (store.movableClock ? clock.now : Date.now()),
    async later(ms = 1000) {
      if (store.movableClock) clock.now += ms;
      else await sleep(5);
    },
  };
}

function tracked<T extends LedgerReader>(ledger: T): T {
  opened.push(ledger);
  return ledger;
}

export const VIDEO_MODEL = 'xai/grok-imagine-video';

/** Who the fixture's calls are for, unless a test says. */
export const ANA = { id: 'ana', client: 'cli-a' };

/** A video submit of 6 seconds, as video_generate begins it. */
export function video(
  text = 'a red fox running through snow at dawn',
  more: Partial<BillableCall> = {},
): BillableCall {
  return {
    kind: 'video',
    by: ANA,
    tool: 'video_generate',
    model: VIDEO_MODEL,
    text,
    options: { duration: 6 },
    expected: 6,
    ...more,
  };
}

export function chat(text: string): BillableCall {
  return { kind: 'chat', by: ANA, tool: 'ask_model', model: 'openai/gpt-4o-mini', text };
}

export function speech(text: string, more: Partial<BillableCall> = {}): BillableCall {
  return { kind: 'speech', by: ANA, tool: 'audio_speech', model: 'openai/tts-1', text, ...more };
}

/** Begins a call that must go, and returns its id. */
export async function go(ledger: Ledger, call: BillableCall): Promise<string> {
  const result = await ledger.begin(call);
  if (result.status !== 'go') throw new Error(`expected go, got ${JSON.stringify(result)}`);
  return result.id;
}

/** Every call begun after `since`, as `ledger export` lists them (oldest first). */
export async function exported(ledger: Pick<LedgerReader, 'exportCalls'>, since = 0): Promise<LedgerCall[]> {
  const calls: LedgerCall[] = [];
  await ledger.exportCalls(since, (page) => {
    calls.push(...page);
  });
  return calls;
}

/** Lets the sweep a begin scheduled (setImmediate) run to its end. */
export async function afterSweep(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The rows of ledger.sqlite's calls, read by a connection of its own, read only. */
export function sqliteRows(dir: string): Record<string, unknown>[] {
  const db = new DatabaseSync(join(dir, DATABASE), { readOnly: true });
  try {
    return db.prepare('SELECT * FROM gateway_ledger_calls ORDER BY seq').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const LEDGER_MODULE = pathToFileURL(join(PROJECT_ROOT, 'src/ledger/ledger.ts')).href;

/** What another server process does: open the ledger, begin the call, exit without ending it. */
const BEGIN_AND_EXIT = `
const { Ledger } = await import(process.env.LEDGER_MODULE);
const { place, call, now } = JSON.parse(process.env.LEDGER_TASK);
const quiet = () => {};
const log = { level: 'error', error: quiet, warn: quiet, info: quiet, debug: quiet };
const ledger = Ledger.open({ ...place, log, ...(now === undefined ? {} : { now: () => now }) });
const result = await ledger.begin(call);
process.stdout.write(JSON.stringify({ ...result, pid: process.pid }));
process.exit(0);
`;

/**
 * Begins a call in another server process that exits before ending it (as one killed mid-call),
 * at `now` on SQLite's clock: its begin result and its process id, gone by the time this returns.
 */
export function beginInProcessThatExits(
  setup: Pick<Setup, 'place' | 'clock'>,
  store: StoreUnderTest,
  call: BillableCall,
): Promise<{ status: string; id?: string; pid: number }> {
  const task = { place: setup.place, call, ...(store.movableClock ? { now: setup.clock.now } : {}) };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', BEGIN_AND_EXIT],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, LEDGER_MODULE, LEDGER_TASK: JSON.stringify(task) },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the other process failed: ${error.message} ${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}
