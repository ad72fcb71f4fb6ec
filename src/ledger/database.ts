// The one interface the ledger asks of a database, and its words for what goes wrong. Each
// database has one adapter (sqlite.ts, postgres.ts) that opens it and runs the ledger's SQL
// (sql.ts): statements name their parameters (`$since`), and `$now` is the database's clock in ms.

export type SqlValue = string | number | null;
export type Params = Record<string, SqlValue>;
export type Row = Record<string, unknown>;

export interface Database {
  /** Where the ledger is, as messages say it: a file, or a URL without its password. */
  readonly where: string;
  query(sql: string, params?: Params): Promise<Row[]>;
  /**
   * Returns the number of rows changed. `durable: false`: a write whose loss in a crash of the
   * machine (not of the process) costs nothing, such as an end, which then reads as unknown and
   * still counts, or a cached page; its commit does not wait for the disk (SQLite: the next synced
   * commit takes it there).
   */
  run(sql: string, params?: Params, options?: RunOptions): Promise<number>;
  /** The ledger's clock, ms since the epoch: the same for every process that shares the ledger. */
  now(): Promise<number>;
  /**
   * Runs `work` in a transaction no other process's transaction interleaves with, committed (and
   * on disk) when it returns; another's is waited for without blocking the event loop, up to the
   * wait bound, then LedgerUnavailable. The work must be short and must send nothing. Its
   * statements may be left unawaited (a PostgreSQL connection then sends the commit behind them
   * at once); the transaction commits only if every one of them succeeded.
   *
   * `scope`: the one thing the work decides about (a call no limit counts decides only whether it
   * repeats an earlier one: its hash). Transactions of different scopes may then run at once where
   * the database allows it (PostgreSQL; SQLite has one writer); one without a scope runs apart
   * from every other without one.
   */
  transaction<T>(work: (tx: Statements) => Promise<T>, scope?: string): Promise<T>;
  /** Waits for the statements under way, and closes. */
  close(): Promise<void>;
}

export interface RunOptions {
  durable?: boolean;
}

/** A write whose loss with the machine costs nothing (see Database.run). */
export const NOT_SYNCED: RunOptions = { durable: false };

/** What a transaction's work may do. */
export type Statements = Pick<Database, 'query' | 'run' | 'now'>;

/** The ledger cannot record a billed call, so the call is not sent: the message says why. */
export class LedgerUnavailable extends Error {
  override name = 'LedgerUnavailable';
}

/** An error's code (errno, SQLite or PostgreSQL), else its message. */
export function codeOf(error: unknown): string {
  const e = error as { code?: unknown; errstr?: unknown };
  if (typeof e.errstr === 'string' && e.errstr) return e.errstr;
  if (typeof e.code === 'string' && e.code && e.code !== 'ERR_SQLITE_ERROR') return e.code;
  return error instanceof Error ? error.message : String(error);
}

/** How long a begin waited for the lock, as the busy sentences say it: `800 ms`, `5 s`. */
export function waitText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
