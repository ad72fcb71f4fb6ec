// The ledger in one SQLite file (GATEWAY_LEDGER_DIR/ledger.sqlite), shared by every server process
// of the user on this machine through SQLite's own locks, which the kernel releases when a process
// dies. WAL mode, and every commit synced to disk before the call it records may leave.
//
// SQLite's API here is synchronous, so the store never waits inside it: a lock held by another
// process is answered at once (busy_timeout 0) and tried again on a timer, up to the wait bound,
// while the event loop serves everything else. A begin's transaction is BEGIN IMMEDIATE: the
// writer's lock is taken before the limits are read, so no two processes both see room for one
// more call. Times are this process's clock.

import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../lib/log.js';
import { checkLedgerPlace, DATABASE_FILE, placeError } from './sqlite-place.js';
import type {
  BeginTransaction,
  CallEndRow,
  CallRow,
  CountedCall,
  LedgerReads,
  LedgerStore,
  NewCall,
  TallyRow,
  UsageRow,
  Window,
} from './store.js';
import { LedgerUnavailable } from './unavailable.js';

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

const COUNTED = `(outcome IS NULL OR outcome IN ('accepted', 'unknown'))`;
const MEASURED = 'coalesce(amount, expected)';

export async function openSqliteStore(options: SqliteStoreOptions): Promise<LedgerStore> {
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
        ? [() => new DatabaseSync(file), () => new DatabaseSync(new URL(`${pathToFileURL(file)}?immutable=1`))]
        : [() => new DatabaseSync(file)];
  let failure: unknown;
  for (const open of ways) {
    let db: DatabaseSync | undefined;
    try {
      db = open();
      const store = new SqliteStore(db, file, options);
      await store.prepare(readOnly && exists);
      return store;
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

class SqliteStore implements LedgerStore {
  private readonly now: () => number;
  /** One write at a time from this process: a begin's transaction spans awaits. */
  private writing: Promise<unknown> = Promise.resolve();
  private readonly statements = new Map<string, StatementSync>();

  constructor(
    private readonly db: DatabaseSync,
    readonly where: string,
    private readonly options: SqliteStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async prepare(readOnlyExisting: boolean): Promise<void> {
    if (readOnlyExisting) {
      this.run(() => this.db.exec('PRAGMA busy_timeout = 0'));
      const version = await this.whenFree(() => this.db.prepare('PRAGMA user_version').get()?.user_version);
      if (version !== SCHEMA_VERSION) throw this.newerOrOlder(Number(version));
      return;
    }
    this.run(() => this.db.exec('PRAGMA busy_timeout = 0; PRAGMA synchronous = FULL'));
    await this.whenFree(() => this.db.exec('PRAGMA journal_mode = WAL'));
    await this.whenFree(() => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const version = Number(this.db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
        if (version === 0) {
          this.db.exec(sqliteSchema());
          this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        } else if (version !== SCHEMA_VERSION) throw this.newerOrOlder(version);
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

  beginTransaction<T>(work: (tx: BeginTransaction) => Promise<T>): Promise<T> {
    return this.serially(async () => {
      await this.whenFree(() => this.db.exec('BEGIN IMMEDIATE'));
      let result: T;
      try {
        result = await work(this.transaction());
        this.run(() => this.db.exec('COMMIT'));
      } catch (error) {
        this.rollback();
        throw error;
      }
      return result;
    });
  }

  private transaction(): BeginTransaction {
    return {
      ...this.reads(),
      insert: async (call) => {
        const at = this.now();
        this.run(() => this.statement(INSERT).run({ ...callParams(call), $began_at: at }));
        return at;
      },
      insertEnded: async (call, end) => {
        const at = this.now();
        this.run(() =>
          this.statement(INSERT_ENDED).run({ ...callParams(call), ...endParams(end), $began_at: at, $ended_at: at }),
        );
      },
    };
  }

  end(id: string, end: CallEndRow): Promise<void> {
    return this.serially(() =>
      this.whenFree(() => {
        this.statement(END).run({ ...endParams(end), $id: id, $ended_at: this.now() });
      }),
    );
  }

  noteJobStatus(job: string, status: string): Promise<void> {
    return this.serially(() =>
      this.whenFree(() => {
        this.statement(NOTE_STATUS).run({ $job: job, $status: status, $at: this.now() });
      }),
    );
  }

  async jobStatuses(jobs: readonly string[]): Promise<Map<string, { status: string; at: number }>> {
    const found = new Map<string, { status: string; at: number }>();
    for (const job of jobs) {
      const row = await this.whenFree(() => this.statement(JOB_STATUS).get({ $job: job }));
      if (row) found.set(job, { status: String(row.status), at: Number(row.at) });
    }
    return found;
  }

  reads(): LedgerReads {
    return {
      now: async () => this.now(),
      duplicate: async (hash, since, exceptKey) => {
        const row = await this.whenFree(() =>
          this.statement(DUPLICATE).get({ $hash: hash, $since: since, $except: exceptKey }),
        );
        return row ? callRow(row) : null;
      },
      tally: async (window) => {
        const rows = await this.whenFree(() => this.statement(tallySql(window)).all(windowParams(window)));
        return rows.map(tallyRow);
      },
      counted: async (window) => {
        const rows = await this.whenFree(() => this.statement(countedSql(window)).all(windowParams(window)));
        return rows.map(countedCall);
      },
    };
  }

  async recentVideoCalls(limit: number): Promise<CallRow[]> {
    const rows = await this.whenFree(() => this.statement(RECENT_VIDEO).all({ $limit: limit }));
    return rows.map(callRow);
  }

  async latest(limit: number): Promise<CallRow[]> {
    const rows = await this.whenFree(() => this.statement(LATEST).all({ $limit: limit }));
    return rows.map(callRow);
  }

  async usageRows(now: number, session: string): Promise<UsageRow[]> {
    const rows = await this.whenFree(() =>
      this.statement(USAGE).all({ $hour: now - 3_600_000, $day: now - 86_400_000, $session: session }),
    );
    return rows.map(usageRow);
  }

  async openCalls(since: number, limit: number): Promise<CallRow[]> {
    const rows = await this.whenFree(() => this.statement(OPEN_CALLS).all({ $since: since, $limit: limit }));
    return rows.map(callRow);
  }

  async exportCalls(since: number, onPage: (rows: CallRow[]) => Promise<void> | void): Promise<void> {
    let after = -1;
    for (;;) {
      const rows = await this.whenFree(() => this.statement(EXPORT_PAGE).all({ $since: since, $after: after }));
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1]?.seq);
      await onPage(rows.map(callRow));
    }
  }

  /**
   * Removes calls older than the retention. One process's wrong clock must not delete what the
   * others still count: another session's calls go only when older than the retention by the
   * newest time another session recorded too (a clock far ahead finds nothing that old).
   */
  removeOld(retentionMs: number, session: string): Promise<number> {
    return this.serially(() =>
      this.whenFree(() => {
        const now = this.now();
        const newest = this.statement(NEWEST_OTHER).get({ $session: session })?.newest;
        const othersBefore = Math.min(now, newest === null || newest === undefined ? -Infinity : Number(newest));
        const removed = this.statement(REMOVE_OLD).run({
          $session: session,
          $own: now - retentionMs,
          $others: Number.isFinite(othersBefore) ? othersBefore - retentionMs : Number.MIN_SAFE_INTEGER,
        });
        this.statement(REMOVE_OLD_STATUSES).run({ $before: Math.min(now, othersBefore) - retentionMs });
        return Number(removed.changes);
      }),
    );
  }

  async close(): Promise<void> {
    await this.writing;
    try {
      this.db.close();
    } catch {
      // closed already
    }
  }

  private statement(sql: string): StatementSync {
    let found = this.statements.get(sql);
    if (!found) {
      found = this.run(() => this.db.prepare(sql));
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
    let pause = 1;
    for (;;) {
      try {
        return this.run(op, true);
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() >= deadline)
          throw new LedgerUnavailable(
            `Not sent, and nothing billed: the ledger of billed calls (${this.where}) is held by another server process that has not let go for ${Math.round(this.options.waitMs / 1000)} s (stopped, or stuck). Try again shortly; if it stays busy, end the stuck gateway-tools-mcp process.`,
          );
        await sleep(pause + Math.random() * pause);
        pause = Math.min(pause * 2, 25);
      }
    }
  }

  /** Runs `op`, saying SQLite's failures as LedgerUnavailable (a busy one left as it is when asked). */
  private run<T>(op: () => T, keepBusy = false): T {
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
export function sqliteError(file: string, error: unknown): Error {
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

// ---- SQL ----

/** The schema's version, in SQLite's user_version: a ledger of another version is not written to. */
const SCHEMA_VERSION = 1;

function sqliteSchema(): string {
  return `
    CREATE TABLE IF NOT EXISTS calls (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      began_at INTEGER NOT NULL,
      session TEXT NOT NULL,
      pid INTEGER NOT NULL,
      host TEXT NOT NULL,
      kind TEXT NOT NULL,
      tool TEXT NOT NULL,
      model TEXT NOT NULL,
      hash TEXT NOT NULL,
      words TEXT NOT NULL,
      key TEXT,
      expected REAL,
      outcome TEXT,
      ended_at INTEGER,
      job TEXT,
      amount REAL,
      reason TEXT,
      status TEXT,
      file TEXT
    );
    CREATE INDEX IF NOT EXISTS calls_began_at ON calls (began_at);
    CREATE INDEX IF NOT EXISTS calls_hash ON calls (hash, began_at);
    CREATE INDEX IF NOT EXISTS calls_kind ON calls (kind, began_at);
    CREATE INDEX IF NOT EXISTS calls_session ON calls (session, began_at);
    CREATE TABLE IF NOT EXISTS job_status (
      job TEXT PRIMARY KEY,
      status TEXT NOT NULL,
      at INTEGER NOT NULL
    );`;
}

const CALL_COLUMNS =
  'id, began_at, session, pid, host, kind, tool, model, hash, words, key, expected, outcome, ended_at, job, amount, reason, status, file';
const NEW_CALL = '$id, $began_at, $session, $pid, $host, $kind, $tool, $model, $hash, $words, $key, $expected';

const INSERT = `INSERT INTO calls (id, began_at, session, pid, host, kind, tool, model, hash, words, key, expected) VALUES (${NEW_CALL})`;
const INSERT_ENDED = `INSERT INTO calls (${CALL_COLUMNS}) VALUES (${NEW_CALL}, $outcome, $ended_at, $job, $amount, $reason, $status, $file)`;
const END =
  'UPDATE calls SET outcome = $outcome, ended_at = $ended_at, job = $job, amount = $amount, reason = $reason, status = $status, file = $file WHERE id = $id';
const NOTE_STATUS =
  'INSERT INTO job_status (job, status, at) VALUES ($job, $status, $at) ON CONFLICT (job) DO UPDATE SET status = excluded.status, at = excluded.at';
const JOB_STATUS = 'SELECT status, at FROM job_status WHERE job = $job';
const DUPLICATE = `SELECT ${CALL_COLUMNS} FROM calls WHERE hash = $hash AND began_at > $since AND ${COUNTED}
  AND ($except IS NULL OR key IS NULL OR key <> $except) ORDER BY began_at DESC, seq DESC LIMIT 1`;
const RECENT_VIDEO = `SELECT ${CALL_COLUMNS} FROM calls WHERE kind = 'video' AND ${COUNTED} ORDER BY began_at DESC, seq DESC LIMIT $limit`;
const LATEST = `SELECT ${CALL_COLUMNS} FROM calls ORDER BY began_at DESC, seq DESC LIMIT $limit`;
const OPEN_CALLS = `SELECT ${CALL_COLUMNS} FROM calls WHERE outcome IS NULL AND began_at > $since ORDER BY began_at DESC, seq DESC LIMIT $limit`;
const USAGE = `SELECT kind, model, outcome, began_at > $hour AS in_hour, began_at > $day AS in_day, session = $session AS in_session,
  count(*) AS calls, coalesce(sum(${MEASURED}), 0) AS amount, count(*) - count(${MEASURED}) AS unmeasured
  FROM calls WHERE began_at > $day OR session = $session
  GROUP BY kind, model, outcome, in_hour, in_day, in_session`;
const EXPORT_PAGE = `SELECT seq, ${CALL_COLUMNS} FROM calls WHERE began_at >= $since AND seq > $after ORDER BY seq LIMIT 1000`;
const NEWEST_OTHER = 'SELECT max(began_at) AS newest FROM calls WHERE session <> $session';
const REMOVE_OLD =
  'DELETE FROM calls WHERE began_at < $others OR (session = $session AND began_at < $own)';
const REMOVE_OLD_STATUSES = 'DELETE FROM job_status WHERE at < $before';

function windowWhere(window: Window): string {
  return [
    COUNTED,
    window.since !== undefined ? 'began_at > $since' : '',
    window.session !== undefined ? 'session = $session' : '',
    window.kind !== undefined ? 'kind = $kind' : '',
  ]
    .filter(Boolean)
    .join(' AND ');
}

function windowParams(window: Window): Record<string, string | number> {
  return {
    ...(window.since !== undefined ? { $since: window.since } : {}),
    ...(window.session !== undefined ? { $session: window.session } : {}),
    ...(window.kind !== undefined ? { $kind: window.kind } : {}),
  };
}

function tallySql(window: Window): string {
  return `SELECT kind, model, count(*) AS calls, coalesce(sum(${MEASURED}), 0) AS amount,
    count(*) - count(${MEASURED}) AS unmeasured FROM calls WHERE ${windowWhere(window)} GROUP BY kind, model`;
}

function countedSql(window: Window): string {
  return `SELECT began_at, kind, model, ${MEASURED} AS amount FROM calls WHERE ${windowWhere(window)} ORDER BY began_at, seq`;
}

type Row = Record<string, unknown>;

function callParams(call: NewCall): Record<string, string | number | null> {
  return {
    $id: call.id,
    $session: call.session,
    $pid: call.pid,
    $host: call.host,
    $kind: call.kind,
    $tool: call.tool,
    $model: call.model,
    $hash: call.hash,
    $words: call.words,
    $key: call.key,
    $expected: call.expected,
  };
}

function endParams(end: CallEndRow): Record<string, string | number | null> {
  return {
    $outcome: end.outcome,
    $job: end.job,
    $amount: end.amount,
    $reason: end.reason,
    $status: end.status,
    $file: end.file,
  };
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const number = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function callRow(row: Row): CallRow {
  return {
    id: String(row.id),
    beganAt: Number(row.began_at),
    session: String(row.session),
    pid: Number(row.pid),
    host: String(row.host),
    kind: row.kind as CallRow['kind'],
    tool: String(row.tool),
    model: String(row.model),
    hash: String(row.hash),
    words: String(row.words),
    key: text(row.key),
    expected: number(row.expected),
    outcome: text(row.outcome) as CallRow['outcome'],
    endedAt: number(row.ended_at),
    job: text(row.job),
    amount: number(row.amount),
    reason: text(row.reason),
    status: text(row.status),
    file: text(row.file),
  };
}

function tallyRow(row: Row): TallyRow {
  return {
    kind: row.kind as TallyRow['kind'],
    model: String(row.model),
    calls: Number(row.calls),
    amount: Number(row.amount),
    unmeasured: Number(row.unmeasured),
  };
}

function countedCall(row: Row): CountedCall {
  return {
    beganAt: Number(row.began_at),
    kind: row.kind as CountedCall['kind'],
    model: String(row.model),
    amount: number(row.amount),
  };
}

function usageRow(row: Row): UsageRow {
  return {
    kind: row.kind as UsageRow['kind'],
    model: String(row.model),
    outcome: text(row.outcome) as UsageRow['outcome'],
    inHour: Number(row.in_hour) === 1,
    inDay: Number(row.in_day) === 1,
    inSession: Number(row.in_session) === 1,
    calls: Number(row.calls),
    amount: Number(row.amount),
    unmeasured: Number(row.unmeasured),
  };
}
