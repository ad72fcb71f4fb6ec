// The ledger in one SQLite file (GATEWAY_LEDGER_DIR/ledger.sqlite), shared by every server process
// of the user on this machine through SQLite's own locks, which the kernel releases when a process
// dies. WAL mode, synchronous=NORMAL: a commit is written to the WAL file, and a transaction (a
// begin) or a durable write syncs that file itself (fdatasync, off the event loop) before it
// returns, so a begin recorded is a begin kept: its frames are in that file, or already in the
// database file, which SQLite synced when it checkpointed them. The writer's lock is not held
// during that sync, so other processes' begins go on meanwhile; SQLite's own synchronous=FULL
// would sync inside the lock and on the event loop, which tripled a billed call's added time
// with three processes at once (bench/ledger.ts). A write whose loss costs nothing (an end, a
// cached page) is not synced: it reaches the disk with the next sync.
//
// node:sqlite is synchronous, so the adapter never waits inside it: a lock held by another process
// is answered at once (busy_timeout 0) and tried again on a timer, up to the wait bound, while the
// event loop serves everything else. A transaction is BEGIN IMMEDIATE: the writer's lock is taken
// before the limits are read, so no two processes both see room for one more call.
//
// The ledger's clock is the kernel's, read from the time the file system stamps on a write, not
// the process's own. Processes on one machine may see different clocks (libfaketime makes one
// process's clock what it is told): had each stamped and reckoned by its own, one a day behind
// would count none of today's calls, so a day's limit would let twice through, and one 40 days
// ahead would remove, as past their retention, calls the others still count. A clock kept in the
// database that never goes back would mend the first but not the second: one process ahead would
// carry it forward for every process. The kernel's clock is the one every process on the machine
// shares and none moves for itself (libfaketime changes what the C library answers, not the times
// the kernel stamps), so every stamp, window and retention is judged by it, as PostgreSQL's are by
// the database server's. Each writer's window then ends at that clock, and retention removes only
// calls older than 30 days by it: older than any window (a day at most) of any writer. It is read
// once per transaction, under the writer's lock, so stamps follow the order of commits. A ledger
// opened only to report writes nothing, and reads the process's clock.

import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../lib/log.js';
import {
  type Database,
  LedgerUnavailable,
  type Params,
  type Row,
  type RunOptions,
  type Statements,
  waitText,
} from './database.js';
import { SCHEMA_VERSION, schemaSql } from './sql.js';
import { checkLedgerPlace, DATABASE_FILE, fullDisk, placeError, readOnlyFolder } from './sqlite-place.js';

export interface SqliteOptions {
  dir: string;
  waitMs: number;
  /** Opened only to report: nothing is made or written, and a missing ledger reads as empty. */
  readOnly?: boolean;
  /** The clock instead of the kernel's (ms since the epoch); tests move it. */
  now?: () => number;
  log: Logger;
}

/** SQLite's primary result codes (the low byte of an extended code), by what they mean here. */
const BUSY = [5, 6];
const [READONLY, IOERR, CORRUPT, FULL, CANTOPEN, NOTADB] = [8, 10, 11, 13, 14, 26];

export async function openSqlite(options: SqliteOptions): Promise<Database> {
  const { dir, readOnly = false } = options;
  const { exists, warning } = await checkLedgerPlace(dir, !readOnly);
  if (warning) options.log.warn(`ledger: ${warning.problem}: ${warning.fix}`);
  const file = join(dir, DATABASE_FILE);
  const { DatabaseSync } = await loadSqlite();
  // A report on a ledger not made yet reads an empty one. A report on one that exists reads through
  // a connection that may write where this user can (SQLite then tidies its WAL files on closing);
  // on a read-only file system SQLite reads a WAL database only as immutable.
  const ways: (() => DatabaseSync)[] = !readOnly
    ? [() => new DatabaseSync(file)]
    : !exists
      ? [() => new DatabaseSync(':memory:')]
      : [() => new DatabaseSync(file), () => new DatabaseSync(new URL(`${pathToFileURL(file)}?immutable=1`))];
  const clock = options.now ?? (readOnly ? Date.now : kernelClock(dir));
  let failure: unknown;
  for (const open of ways) {
    let db: DatabaseSync | undefined;
    try {
      db = open();
      const database = new Sqlite(db, file, options.waitMs, clock);
      await database.prepare(readOnly && exists);
      return database;
    } catch (error) {
      db?.close();
      failure ??= error;
    }
  }
  (clock as { close?: () => void }).close?.();
  throw sqliteError(file, failure);
}

/**
 * The kernel's clock: the time the file system stamps on a one-byte write (see the top), to a file
 * of this process's own beside the database, unlinked at once: nothing is left in the folder.
 */
function kernelClock(dir: string): (() => number) & { close?: () => void } {
  const path = join(dir, `${DATABASE_FILE}-clock-${process.pid}-${randomBytes(4).toString('hex')}`);
  let fd: number;
  try {
    fd = openSync(path, 'wx+', 0o600);
    unlinkSync(path);
  } catch (error) {
    throw fullDisk(dir) ?? placeError(path, error);
  }
  const byte = Buffer.from('t');
  const clock = () => {
    try {
      writeSync(fd, byte, 0, 1, 0);
      return Math.floor(fstatSync(fd).mtimeMs);
    } catch (error) {
      throw fullDisk(dir) ?? placeError(dir, error);
    }
  };
  return Object.assign(clock, { close: () => closeSync(fd) });
}

class Sqlite implements Database {
  /** One transaction at a time from this process: a transaction spans awaits. */
  private writing: Promise<unknown> = Promise.resolve();
  private readonly prepared = new Map<string, StatementSync>();
  /** The WAL file, opened at the first sync, and the syncs under way (close() lets them finish). */
  private wal: Promise<FileHandle> | undefined;
  private readonly syncing = new Set<Promise<void>>();

  constructor(
    private readonly db: DatabaseSync,
    readonly where: string,
    private readonly waitMs: number,
    private readonly clock: (() => number) & { close?: () => void },
  ) {}

  async prepare(readOnlyExisting: boolean): Promise<void> {
    this.guard(() => this.db.exec('PRAGMA busy_timeout = 0'));
    if (!readOnlyExisting) {
      // Another process may be making the file at this moment: every first statement waits its turn.
      await this.whenFree(() => this.db.exec('PRAGMA journal_mode = WAL'));
      await this.whenFree(() => this.db.exec('PRAGMA synchronous = NORMAL'));
    }
    await this.whenFree(() => {
      if (readOnlyExisting) return this.checkVersion();
      this.db.exec('BEGIN IMMEDIATE');
      try {
        if (this.checkVersion() === 0) {
          for (const statement of schemaSql('sqlite')) this.db.exec(statement);
          this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        }
        // Statistics for the query planner, bounded in cost: a large ledger's tallies then read the
        // window's calls by time rather than every call of a kind.
        this.db.exec('PRAGMA analysis_limit = 400; PRAGMA optimize = 0x10002; COMMIT');
      } catch (error) {
        this.rollback();
        throw error;
      }
    });
  }

  private checkVersion(): number {
    const version = Number(this.db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
    if (version === 0 || version === SCHEMA_VERSION) return version;
    throw new LedgerUnavailable(
      `The ledger of billed calls (${this.where}) was written by another version of gateway-tools-mcp (ledger version ${version}, this one reads ${SCHEMA_VERSION}): run the same version in every server process, or move the file aside to start a new ledger.`,
    );
  }

  async now(): Promise<number> {
    return this.guard(this.clock);
  }

  query(sql: string, params?: Params): Promise<Row[]> {
    return this.whenFree(() => this.statements().query(sql, params));
  }

  async run(sql: string, params?: Params, options?: RunOptions): Promise<number> {
    const changed = await this.serially(() => this.whenFree(() => this.statements().run(sql, params)));
    if (options?.durable !== false) await this.synced();
    return changed;
  }

  /**
   * BEGIN IMMEDIATE: the writer's lock, taken before the work reads anything; the clock read under
   * it. One writer at a time whatever the scope.
   */
  async transaction<T>(work: (tx: Statements) => Promise<T>): Promise<T> {
    const result = await this.serially(async () => {
      await this.whenFree(() => this.db.exec('BEGIN IMMEDIATE'));
      try {
        const now = this.guard(this.clock);
        const { query, run } = this.statements(now);
        const sent: Promise<unknown>[] = [];
        const sending = <R>(op: () => R) => {
          const running = (async () => this.guard(op))();
          running.catch(() => undefined);
          sent.push(running);
          return running;
        };
        const result = await work({
          now: async () => now,
          query: (sql, params) => sending(() => query(sql, params)),
          run: (sql, params) => sending(() => run(sql, params)),
        });
        // A statement the work did not wait for is committed only if it succeeded.
        await Promise.all(sent);
        this.guard(() => this.db.exec('COMMIT'));
        return result;
      } catch (error) {
        this.rollback();
        throw error;
      }
    });
    await this.synced();
    return result;
  }

  /** The WAL file's data on the disk: what this process committed, and everything before it. */
  private synced(): Promise<void> {
    const syncing = (async () => {
      try {
        this.wal ??= open(`${this.where}-wal`, 'r');
        await (await this.wal).datasync();
      } catch (error) {
        this.wal = undefined;
        const dir = this.where.slice(0, -DATABASE_FILE.length - 1);
        throw fullDisk(dir) ?? placeError(this.where, error);
      }
    })();
    this.syncing.add(syncing);
    const done = () => this.syncing.delete(syncing);
    syncing.then(done, done);
    return syncing;
  }

  async close(): Promise<void> {
    await this.writing;
    await Promise.allSettled([...this.syncing]);
    await (await this.wal?.catch(() => undefined))?.close();
    this.clock.close?.();
    try {
      this.db.close();
    } catch {
      // closed already
    }
  }

  /** Statements run at once, `$now` the time given (a transaction's) or read as each runs. */
  private statements(now?: number) {
    const bound = (sql: string, params: Params = {}) =>
      sql.includes('$now') ? { ...params, $now: now ?? this.clock() } : params;
    return {
      query: (sql: string, params?: Params) => this.statement(sql).all(bound(sql, params)) as Row[],
      run: (sql: string, params?: Params) => Number(this.statement(sql).run(bound(sql, params)).changes),
    };
  }

  private statement(sql: string): StatementSync {
    let found = this.prepared.get(sql);
    if (!found) {
      found = this.db.prepare(sql);
      this.prepared.set(sql, found);
    }
    return found;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.writing.then(work, work);
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** Runs `op`, trying again on a timer while another process holds the lock, up to the wait bound. */
  private async whenFree<T>(op: () => T): Promise<T> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      try {
        return this.guard(op, true);
      } catch (error) {
        if (!BUSY.includes(resultCode(error) ?? 0)) throw error;
        if (Date.now() >= deadline)
          throw new LedgerUnavailable(
            `The ledger of billed calls (${this.where}) is held by another server process that has not let go for ${waitText(this.waitMs)} (stopped, or stuck): try again shortly; if it stays busy, end the stuck gateway-tools-mcp process.`,
          );
        // The shortest pause a timer gives: a waiter that slept longer would lose the lock again
        // to the next begins (each holds it for well under a millisecond).
        await sleep(1);
      }
    }
  }

  /** Runs `op`, saying SQLite's failures as LedgerUnavailable (a busy one left as it is when asked). */
  private guard<T>(op: () => T, keepBusy = false): T {
    try {
      return op();
    } catch (error) {
      if (keepBusy && BUSY.includes(resultCode(error) ?? 0)) throw error;
      throw sqliteError(this.where, error);
    }
  }

  private rollback(): void {
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // no transaction was open (BEGIN failed), or SQLite rolled it back already
    }
  }
}

function resultCode(error: unknown): number | undefined {
  const code = (error as { errcode?: unknown }).errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}

/**
 * SQLite's failure in words: what it means for billed calls, and what to do. SQLite says a full
 * disk as SQLITE_FULL only where a write of its own failed; growing the WAL index fails as an I/O
 * error, so any failure to write is first checked against the disk's free space.
 */
function sqliteError(file: string, error: unknown): Error {
  if (error instanceof LedgerUnavailable) return error;
  const code = resultCode(error);
  const said = (error as { errstr?: string }).errstr ?? (error as Error).message;
  const dir = file.slice(0, -DATABASE_FILE.length - 1);
  const place =
    ([FULL, IOERR, CANTOPEN].includes(code ?? 0) ? fullDisk(dir) : undefined) ??
    ([READONLY, CANTOPEN].includes(code ?? 0) ? readOnlyFolder(dir) : undefined);
  const unavailable = place
    ? place
    : code === CORRUPT || code === NOTADB
      ? new LedgerUnavailable(
          `The ledger of billed calls (${file}) is damaged (${said}), so no billed call is sent: move it aside (mv ${file} ${file}.damaged) and the next call starts a new, empty ledger.`,
        )
      : code === READONLY
        ? placeError(file, error, 'EROFS')
        : code === IOERR || code === CANTOPEN
          ? new LedgerUnavailable(
              `The ledger of billed calls (${file}) cannot be opened or written (${said}): check the disk and that GATEWAY_LEDGER_DIR is a folder of this user's.`,
            )
          : code !== undefined
            ? new LedgerUnavailable(`The ledger of billed calls (${file}) failed (${said}).`)
            : error instanceof Error
              ? error
              : new Error(String(error));
  if (unavailable !== error) unavailable.cause = error;
  return unavailable;
}

// Node 22 announces node:sqlite with an ExperimentalWarning on stderr, which a user's terminal or
// client log would show at every start: that one warning is held back while the module loads
// (on first use of the ledger; start-up does not pay for it).
let loading: Promise<typeof import('node:sqlite')> | undefined;

function loadSqlite(): Promise<typeof import('node:sqlite')> {
  const emitWarning = process.emitWarning;
  loading ??= (async () => {
    process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
      const text = typeof warning === 'string' ? warning : warning.message;
      if (text.startsWith('SQLite')) return;
      return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
    } as typeof process.emitWarning;
    return import('node:sqlite').finally(() => {
      process.emitWarning = emitWarning;
    });
  })();
  return loading;
}
