// The ledger in one SQLite file (GATEWAY_LEDGER_DIR/ledger.sqlite), shared by every server process
// of the user on this machine through SQLite's own locks, which the kernel releases when a process
// dies.
//
// WAL mode, synchronous=NORMAL: a commit is written to the WAL file, and SQLite syncs that file
// before each checkpoint, so a power cut may lose the latest commits but never damages the
// database. A begin's record must not be lost once its call may leave, so a begin, once committed,
// syncs the WAL file itself (fdatasync, off the event loop) before it returns: its frames are in
// that file, or already in the database file, which SQLite synced when it checkpointed them. The
// writer's lock is not held during that sync, so other processes' begins go on meanwhile. Other
// writes (a call's end, a job's status, removing old calls) are not synced: a lost end leaves its
// call reading as unknown, which still counts against the limits.
//
// SQLite's API here is synchronous, so the store never waits inside it: a lock held by another
// process is answered at once (busy_timeout 0) and tried again on a timer, up to the wait bound,
// while the event loop serves everything else. A begin's transaction is BEGIN IMMEDIATE: the
// writer's lock is taken before the limits are read, so no two processes both see room for one
// more call. Times are this process's clock.

import { constants } from 'node:fs';
import { access, type FileHandle, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../lib/log.js';
import {
  type SqlDatabase,
  type SqlParams,
  type SqlRow,
  type SqlRunner,
  SqlStore,
  schemaSql,
} from './sql-store.js';
import { checkLedgerPlace, DATABASE_FILE, placeError } from './sqlite-place.js';
import { LedgerUnavailable, waitText } from './store.js';

export interface SqliteStoreOptions {
  dir: string;
  /** How long a begin waits for another process's transaction before the call is refused. */
  waitMs: number;
  /** Opened only to report: nothing is made or written, and a missing ledger reads as empty. */
  readOnly?: boolean;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
  log: Logger;
}

// SQLite's primary result codes (the low byte of an extended code).
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/** The schema's version, in SQLite's user_version: a ledger of another version is not written to. */
const SCHEMA_VERSION = 3;

export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqlStore> {
  const readOnly = options.readOnly ?? false;
  const { exists, warning } = await checkLedgerPlace(options.dir, !readOnly);
  if (warning) options.log.warn(`ledger: ${warning.problem}: ${warning.fix}`);
  const file = join(options.dir, DATABASE_FILE);
  const { DatabaseSync } = await loadSqlite();
  // A report on a ledger not made yet reads an empty one, and makes nothing. A report on one that
  // exists only reads, through a connection that may write where this user can: SQLite then tidies
  // its WAL files on closing, where a read-only connection would leave them behind. On a read-only
  // file system, SQLite can read a WAL database only as immutable (Node 23 and later open URIs).
  const ways: (() => DatabaseSync)[] =
    readOnly && !exists
      ? [() => new DatabaseSync(':memory:')]
      : readOnly
        ? [
            () => new DatabaseSync(file),
            () => new DatabaseSync(new URL(`${pathToFileURL(file)}?immutable=1`)),
          ]
        : [() => new DatabaseSync(file)];
  let failure: unknown;
  for (const open of ways) {
    let db: DatabaseSync | undefined;
    try {
      db = open();
      const database = new SqliteDatabase(db, file, options);
      await database.prepare(readOnly && exists);
      return new SqlStore(database);
    } catch (error) {
      db?.close();
      failure ??= error;
    }
  }
  throw await openingError(file, failure);
}

/** Why the database could not be opened: a read-only file system is said as such. */
async function openingError(file: string, error: unknown): Promise<Error> {
  const code = resultCode((error as { cause?: unknown }).cause ?? error);
  if (code === SQLITE_CANTOPEN || code === SQLITE_READONLY) {
    const denied = await access(dirname(file), constants.W_OK).then(
      () => null,
      (why: NodeJS.ErrnoException) => why,
    );
    if (denied?.code === 'EROFS') return placeError(dirname(file), denied);
  }
  return sqliteError(file, error);
}

/** One connection to the ledger's file, as the SQL store runs it. */
class SqliteDatabase implements SqlDatabase {
  private readonly clock: () => number;
  /** One write at a time from this process: a begin's transaction spans awaits. */
  private writing: Promise<unknown> = Promise.resolve();
  private readonly statements = new Map<string, StatementSync>();
  /** The WAL file, opened at the first begin, to sync it. */
  private wal: Promise<FileHandle> | undefined;

  constructor(
    private readonly db: DatabaseSync,
    readonly where: string,
    private readonly options: SqliteStoreOptions,
  ) {
    this.clock = options.now ?? Date.now;
  }

  async prepare(readOnlyExisting: boolean): Promise<void> {
    if (readOnlyExisting) {
      this.guard(() => this.db.exec('PRAGMA busy_timeout = 0'));
      const version = await this.whenFree(() => this.db.prepare('PRAGMA user_version').get()?.user_version);
      if (version !== SCHEMA_VERSION) throw this.newerOrOlder(Number(version));
      return;
    }
    this.guard(() => this.db.exec('PRAGMA busy_timeout = 0'));
    // Another process may be making the file at this moment: every first statement waits its turn.
    await this.whenFree(() => this.db.exec('PRAGMA synchronous = NORMAL'));
    await this.whenFree(() => this.db.exec('PRAGMA journal_mode = WAL'));
    await this.whenFree(() => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const version = Number(this.db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
        if (version === 0) {
          for (const statement of schemaSql('sqlite')) this.db.exec(statement);
          this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        } else if (version !== SCHEMA_VERSION) throw this.newerOrOlder(version);
        // Statistics for the query planner, bounded in cost: a large ledger's tallies then read the
        // window's calls by time rather than every call of a kind.
        this.db.exec('PRAGMA analysis_limit = 400; PRAGMA optimize = 0x10002');
        this.db.exec('COMMIT');
      } catch (error) {
        this.rollback();
        throw error;
      }
    });
  }

  private newerOrOlder(version: number): LedgerUnavailable {
    return new LedgerUnavailable(
      `The ledger of billed calls (${this.where}) was written by another version of gateway-tools-mcp (ledger version ${version}, this one reads ${SCHEMA_VERSION}): run the same version in every server process, or move the file aside to start a new ledger.`,
    );
  }

  async now(): Promise<number> {
    return this.clock();
  }

  all(sql: string, params: SqlParams = {}): Promise<SqlRow[]> {
    return this.whenFree(() => this.statement(sql).all(this.bind(sql, params)) as SqlRow[]);
  }

  run(sql: string, params: SqlParams = {}): Promise<number> {
    return this.serially(() =>
      this.whenFree(() => Number(this.statement(sql).run(this.bind(sql, params)).changes)),
    );
  }

  /**
   * BEGIN IMMEDIATE: the writer's lock, taken before the work reads anything. Returns once the
   * commit is on the disk (see the top of this file).
   */
  async transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const result = await this.serially(async () => {
      await this.whenFree(() => this.db.exec('BEGIN IMMEDIATE'));
      const inside: SqlRunner = {
        now: () => this.now(),
        all: async (sql, params = {}) =>
          this.guard(() => this.statement(sql).all(this.bind(sql, params)) as SqlRow[]),
        run: async (sql, params = {}) =>
          this.guard(() => Number(this.statement(sql).run(this.bind(sql, params)).changes)),
      };
      try {
        const result = await work(inside);
        this.guard(() => this.db.exec('COMMIT'));
        return result;
      } catch (error) {
        this.rollback();
        throw error;
      }
    });
    await this.walSynced();
    return result;
  }

  /** The WAL file's data on the disk: what this process committed, and all before it. */
  private async walSynced(): Promise<void> {
    try {
      this.wal ??= open(`${this.where}-wal`, 'r');
      await (await this.wal).datasync();
    } catch (error) {
      this.wal = undefined;
      throw new LedgerUnavailable(
        `The ledger of billed calls (${this.where}) could not be written to the disk (${(error as Error).message}): check the disk.`,
      );
    }
  }

  async close(): Promise<void> {
    await this.writing;
    await (await this.wal?.catch(() => undefined))?.close();
    try {
      this.db.close();
    } catch {
      // closed already
    }
  }

  /** The parameters a statement names, with `$now` read from this process's clock. */
  private bind(sql: string, params: SqlParams): SqlParams {
    return sql.includes('$now') ? { ...params, $now: this.clock() } : params;
  }

  private statement(sql: string): StatementSync {
    let found = this.statements.get(sql);
    if (!found) {
      found = this.guard(() => this.db.prepare(sql));
      this.statements.set(sql, found);
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
    const deadline = Date.now() + this.options.waitMs;

    for (;;) {
      try {
        return this.guard(op, true);
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() >= deadline)
          throw new LedgerUnavailable(
            `The ledger of billed calls (${this.where}) is held by another server process that has not let go for ${waitText(this.options.waitMs)} (stopped, or stuck): try again shortly; if it stays busy, end the stuck gateway-tools-mcp process.`,
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
      if (keepBusy && isBusy(error)) throw error;
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

function isBusy(error: unknown): boolean {
  const code = resultCode(error);
  return code === SQLITE_BUSY || code === SQLITE_LOCKED;
}

/** SQLite's failure in words: what it means for billed calls, and what to do. */
function sqliteError(file: string, error: unknown): Error {
  if (error instanceof LedgerUnavailable) return error;
  const said = (error as { errstr?: string }).errstr ?? (error as Error).message;
  const unavailable = sqliteUnavailable(file, error, said);
  if (unavailable instanceof LedgerUnavailable) unavailable.cause = error;
  return unavailable;
}

function sqliteUnavailable(file: string, error: unknown, said: string): Error {
  switch (resultCode(error)) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new LedgerUnavailable(
        `The ledger of billed calls (${file}) is damaged (${said}), so no billed call is sent: move it aside (mv ${file} ${file}.damaged) and the next call starts a new, empty ledger.`,
      );
    case SQLITE_READONLY:
      return placeError(file, Object.assign(new Error(said), { code: 'EROFS' }));
    case SQLITE_FULL:
      return placeError(file, Object.assign(new Error(said), { code: 'ENOSPC' }));
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
      return new LedgerUnavailable(
        `The ledger of billed calls (${file}) cannot be opened or written (${said}): check the disk and that GATEWAY_LEDGER_DIR is a folder of this user's.`,
      );
    case undefined:
      return error instanceof Error ? error : new Error(String(error));
    default:
      return new LedgerUnavailable(`The ledger of billed calls (${file}) failed (${said}).`);
  }
}

// ---- Loading node:sqlite ----
// Node's built-in SQLite is loaded on the first use of the ledger (start-up does not pay for it).
// Node 22 announces the module with an ExperimentalWarning on stderr, which a user's terminal or
// client log would show at every start; that one warning is held back while the module loads.
// Node 24 and later print none.

type SqliteModule = typeof import('node:sqlite');

let loading: Promise<SqliteModule> | undefined;

function loadSqlite(): Promise<SqliteModule> {
  loading ??= importQuietly();
  return loading;
}

async function importQuietly(): Promise<SqliteModule> {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && text.startsWith('SQLite')) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return await import('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
}
