// The ledger's SQL, written once for both databases. A store is this over a `SqlDatabase`: SQLite
// or PostgreSQL, which differ in how a connection runs a statement, how a begin's transaction is
// locked, whose clock `$now` reads and the column types of the schema. Statements name their
// parameters (`$since`); each database binds them its own way.

import type {
  BeginTransaction,
  CallEndRow,
  CallRow,
  CountedCall,
  LedgerReads,
  TallyRow,
  UsageRow,
  Window,
} from './store.js';

export type SqlValue = string | number | null;
export type SqlParams = Record<string, SqlValue>;
export type SqlRow = Record<string, unknown>;

/** Runs statements on one connection. `$now` in a statement is the database's clock, in ms. */
export interface SqlRunner {
  all(sql: string, params?: SqlParams): Promise<SqlRow[]>;
  /** Returns the number of rows changed. */
  run(sql: string, params?: SqlParams): Promise<number>;
  /** The database's clock, ms since the epoch. */
  now(): Promise<number>;
}

export interface SqlDatabase extends SqlRunner {
  readonly where: string;
  /** A begin's transaction: locked against every other begin, released on commit or rollback. */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const CALLS = 'gateway_ledger_calls';
export const STATUSES = 'gateway_ledger_job_status';
/**
 * The counted calls of each quarter hour, by kind and model, kept by the database itself
 * (triggers on the calls): a limit's window is its whole quarters from here and the calls of the
 * one quarter it begins in, so a begin reads a few hundred rows however many calls the day holds.
 */
export const TALLIES = 'gateway_ledger_tallies';
const QUARTER_MS = 900_000;

export type Dialect = 'sqlite' | 'postgres';

/** The schema in the database's own words: its column types, and how a trigger is written. */
export function schemaSql(dialect: Dialect): string[] {
  const { serial, integer, real } =
    dialect === 'sqlite'
      ? { serial: 'INTEGER', integer: 'INTEGER', real: 'REAL' }
      : { serial: 'bigserial', integer: 'bigint', real: 'double precision' };
  return [
    `CREATE TABLE IF NOT EXISTS ${CALLS} (
      seq ${serial} PRIMARY KEY,
      id TEXT NOT NULL,
      began_at ${integer} NOT NULL,
      session TEXT NOT NULL,
      pid ${integer} NOT NULL,
      host TEXT NOT NULL,
      kind TEXT NOT NULL,
      tool TEXT NOT NULL,
      model TEXT NOT NULL,
      hash TEXT NOT NULL,
      words TEXT NOT NULL,
      key TEXT,
      expected ${real},
      outcome TEXT,
      ended_at ${integer},
      job TEXT,
      amount ${real},
      reason TEXT,
      status TEXT,
      file TEXT
    )`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_began_at ON ${CALLS} (began_at)`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_hash ON ${CALLS} (hash, began_at)`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_session ON ${CALLS} (session, began_at)`,
    `CREATE TABLE IF NOT EXISTS ${STATUSES} (job TEXT PRIMARY KEY, status TEXT NOT NULL, at ${integer} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${TALLIES} (
      quarter ${integer} NOT NULL,
      kind TEXT NOT NULL,
      model TEXT NOT NULL,
      calls ${integer} NOT NULL,
      amount ${real} NOT NULL,
      unmeasured ${integer} NOT NULL,
      PRIMARY KEY (quarter, kind, model)
    )${dialect === 'sqlite' ? ' WITHOUT ROWID' : ''}`,
    ...(dialect === 'sqlite' ? sqliteTriggers() : postgresTriggers()),
  ];
}

function sqliteTriggers(): string[] {
  const trigger = (event: string, changes: string[]) =>
    `CREATE TRIGGER IF NOT EXISTS ${TALLIES}_${event.toLowerCase()} AFTER ${event} ON ${CALLS}
    BEGIN ${changes.map((change) => `${change};`).join(' ')} END`;
  return [
    trigger('INSERT', [tallyChange('NEW', '+')]),
    trigger('UPDATE', [tallyChange('OLD', '-'), tallyChange('NEW', '+')]),
    trigger('DELETE', [tallyChange('OLD', '-')]),
  ];
}

function postgresTriggers(): string[] {
  return [
    // The body between $$ (pg's parameters are $ and a letter).
    `CREATE OR REPLACE FUNCTION ${TALLIES}_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN ${tallyChange('OLD', '-')}; END IF;
      IF TG_OP <> 'DELETE' THEN ${tallyChange('NEW', '+')}; END IF;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER ${TALLIES}_change AFTER INSERT OR UPDATE OR DELETE ON ${CALLS}
    FOR EACH ROW EXECUTE FUNCTION ${TALLIES}_change()`,
  ];
}

/**
 * A call's part in its quarter's tally, added (+) or taken away (-) when it counts: a statement
 * for a trigger, on the row `NEW` or `OLD`, the same in SQLite and PostgreSQL.
 */
function tallyChange(row: 'NEW' | 'OLD', sign: '+' | '-'): string {
  const measured = `coalesce(${row}.amount, ${row}.expected)`;
  const add = (column: string) => `${column} = ${TALLIES}.${column} + excluded.${column}`;
  return `INSERT INTO ${TALLIES} (quarter, kind, model, calls, amount, unmeasured)
    SELECT CAST(${row}.began_at / ${QUARTER_MS} AS BIGINT), ${row}.kind, ${row}.model, ${sign}1, ${sign}coalesce(${measured}, 0),
      ${sign}${flag(`${measured} IS NULL`)}
    WHERE ${counted(row)}
    ON CONFLICT (quarter, kind, model) DO UPDATE SET ${add('calls')}, ${add('amount')}, ${add('unmeasured')}`;
}

/** The calls that count against the limits: not ended, accepted, or unknown. */
const counted = (row = '') => {
  const outcome = row ? `${row}.outcome` : 'outcome';
  return `(${outcome} IS NULL OR ${outcome} IN ('accepted', 'unknown'))`;
};
const COUNTED = counted();
const MEASURED = 'coalesce(amount, expected)';
const COLUMNS =
  'id, began_at, session, pid, host, kind, tool, model, hash, words, key, expected, outcome, ended_at, job, amount, reason, status, file';
/** A call's columns as CallRow names them: rows come back as CallRows (both drivers give numbers and nulls). */
const CALL = COLUMNS.replace('began_at', 'began_at AS "beganAt"').replace(
  'ended_at',
  'ended_at AS "endedAt"',
);
const NEW_COLUMNS = 'id, began_at, session, pid, host, kind, tool, model, hash, words, key, expected';
const NEW_VALUES = '$id, $now, $session, $pid, $host, $kind, $tool, $model, $hash, $words, $key, $expected';
const END_VALUES = '$outcome, $now, $job, $amount, $reason, $status, $file';

/** Counted calls and their amounts, as TallyRow names them. */
const TALLY = `count(*) AS calls, coalesce(sum(${MEASURED}), 0) AS amount, count(*) - count(${MEASURED}) AS unmeasured`;

/** A condition as 1 or 0: SQLite and PostgreSQL answer a comparison differently (0/1, true/false). */
const flag = (condition: string) => `CASE WHEN ${condition} THEN 1 ELSE 0 END`;
/** One counted call as a part of a tally (see tallySql). */
const ONE_CALL = `1 AS calls, coalesce(${MEASURED}, 0) AS amount, ${flag(`${MEASURED} IS NULL`)} AS unmeasured`;

const SQL = {
  insert: `INSERT INTO ${CALLS} (${NEW_COLUMNS}) VALUES (${NEW_VALUES}) RETURNING seq`,
  insertEnded: `INSERT INTO ${CALLS} (${COLUMNS}) VALUES (${NEW_VALUES}, ${END_VALUES})`,
  end: `UPDATE ${CALLS} SET outcome = $outcome, ended_at = $now, job = $job, amount = $amount, reason = $reason,
    status = $status, file = $file WHERE seq = $seq`,
  noteStatus: `INSERT INTO ${STATUSES} (job, status, at) VALUES ($job, $status, $now)
    ON CONFLICT (job) DO UPDATE SET status = excluded.status, at = excluded.at`,
  duplicate: `SELECT ${CALL} FROM ${CALLS} WHERE hash = $hash AND began_at > $since AND ${COUNTED}
    AND (CAST($except AS TEXT) IS NULL OR key IS NULL OR key <> CAST($except AS TEXT))
    ORDER BY began_at DESC, seq DESC LIMIT 1`,
  recentVideo: `SELECT ${CALL} FROM ${CALLS} WHERE kind = 'video' AND ${COUNTED} ORDER BY began_at DESC, seq DESC LIMIT $limit`,
  latest: `SELECT ${CALL} FROM ${CALLS} ORDER BY began_at DESC, seq DESC LIMIT $limit`,
  open: `SELECT ${CALL} FROM ${CALLS} WHERE outcome IS NULL AND began_at > $since ORDER BY began_at DESC, seq DESC LIMIT $limit`,
  usage: `SELECT kind, model, outcome, ${flag('began_at > $hour')} AS "inHour", ${flag('began_at > $day')} AS "inDay",
    ${flag('session = $session')} AS "inSession", ${TALLY}
    FROM ${CALLS} WHERE began_at > $day OR session = $session
    GROUP BY kind, model, outcome, 4, 5, 6`,
  exportPage: `SELECT seq, ${CALL} FROM ${CALLS} WHERE began_at >= $since AND seq > $after ORDER BY seq LIMIT 1000`,
  removeOld: `DELETE FROM ${CALLS} WHERE began_at < $before
    AND seq < (SELECT min(seq) FROM (SELECT seq FROM ${CALLS} ORDER BY seq DESC LIMIT $kept) AS recent)`,
  removeOldStatuses: `DELETE FROM ${STATUSES} WHERE at < $before`,
  removeEmptyTallies: `DELETE FROM ${TALLIES} WHERE calls = 0`,
};

/** The ledger's store over a database. */
export class SqlStore {
  constructor(private readonly db: SqlDatabase) {}

  get where(): string {
    return this.db.where;
  }

  /**
   * Runs `work` in one transaction no other begin of any process (or host) interleaves with: the
   * limit check, the duplicate look-up and the insert see the same calls. Another process's
   * transaction is waited for without blocking the event loop, at most the wait bound; then
   * LedgerUnavailable. The work must be short and must send nothing.
   */
  beginTransaction<T>(work: (tx: BeginTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) =>
      work({
        ...readsOver(tx),
        insert: async (call) => {
          const [row] = await tx.all(SQL.insert, named(call));
          return Number(row?.seq);
        },
        insertEnded: async (call, end) => {
          await tx.run(SQL.insertEnded, named({ ...call, ...end }));
        },
      }),
    );
  }

  async end(seq: number, end: CallEndRow): Promise<void> {
    await this.db.run(SQL.end, named({ ...end, seq }));
  }

  async noteJobStatus(job: string, status: string): Promise<void> {
    await this.db.run(SQL.noteStatus, { $job: job, $status: status });
  }

  async jobStatuses(jobs: readonly string[]): Promise<Map<string, { status: string; at: number }>> {
    const found = new Map<string, { status: string; at: number }>();
    if (jobs.length === 0) return found;
    const params = Object.fromEntries(jobs.map((job, i) => [`$job${i}`, job]));
    const rows = await this.db.all(
      `SELECT job, status, at FROM ${STATUSES} WHERE job IN (${Object.keys(params).join(', ')})`,
      params,
    );
    for (const row of rows) found.set(String(row.job), { status: String(row.status), at: Number(row.at) });
    return found;
  }

  reads(): LedgerReads {
    return readsOver(this.db);
  }

  async recentVideoCalls(limit: number): Promise<CallRow[]> {
    return (await this.db.all(SQL.recentVideo, { $limit: limit })) as unknown as CallRow[];
  }

  async latest(limit: number): Promise<CallRow[]> {
    return (await this.db.all(SQL.latest, { $limit: limit })) as unknown as CallRow[];
  }

  async usageRows(now: number, session: string): Promise<UsageRow[]> {
    const rows = await this.db.all(SQL.usage, {
      $hour: now - 3_600_000,
      $day: now - 86_400_000,
      $session: session,
    });
    const flagged = (row: SqlRow) => ({
      ...row,
      inHour: row.inHour === 1,
      inDay: row.inDay === 1,
      inSession: row.inSession === 1,
    });
    return rows.map(flagged) as unknown as UsageRow[];
  }

  async openCalls(since: number, limit: number): Promise<CallRow[]> {
    return (await this.db.all(SQL.open, { $since: since, $limit: limit })) as unknown as CallRow[];
  }

  async exportCalls(since: number, onPage: (rows: CallRow[]) => Promise<void> | void): Promise<void> {
    let after = -1;
    for (;;) {
      const rows = await this.db.all(SQL.exportPage, { $since: since, $after: after });
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1]?.seq);
      await onPage(rows as unknown as CallRow[]);
    }
  }

  /**
   * Removes calls older than the retention, except the `kept` calls recorded last, whatever their
   * times: a clock far ahead (one process's, or its restarts') finds the correct clocks' calls of
   * today among them, and cannot remove what the others still count.
   */
  async removeOld(retentionMs: number, kept: number): Promise<number> {
    const before = (await this.db.now()) - retentionMs;
    const removed = await this.db.run(SQL.removeOld, { $before: before, $kept: kept });
    await this.db.run(SQL.removeOldStatuses, { $before: before });
    await this.db.run(SQL.removeEmptyTallies);
    return removed;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

function readsOver(runner: SqlRunner): LedgerReads {
  return {
    now: () => runner.now(),
    duplicate: async (hash, since, exceptKey) => {
      const [row] = await runner.all(SQL.duplicate, { $hash: hash, $since: since, $except: exceptKey });
      return (row as CallRow | undefined) ?? null;
    },
    tallies: async (windows) => {
      if (windows.length === 0) return [];
      const { sql, params } = talliesSql(windows);
      const rows = (await runner.all(sql, params)) as unknown as (TallyRow & { w: number })[];
      return windows.map((_, i) => rows.filter((row) => Number(row.w) === i));
    },
    counted: async (window) => {
      const sql = `SELECT began_at AS "beganAt", kind, model, ${MEASURED} AS amount FROM ${CALLS}
        WHERE ${windowWhere(window)} ORDER BY began_at, seq`;
      return (await runner.all(sql, windowParams(window))) as unknown as CountedCall[];
    },
  };
}

/**
 * Counted calls of each window by kind and model, in one statement. A window since a time: the
 * tallies of the quarters wholly inside it, and the calls of the quarter it begins in. A
 * session's window: its calls.
 */
function talliesSql(windows: readonly Window[]): { sql: string; params: SqlParams } {
  const params: SqlParams = {};
  const parts = windows.flatMap((window, i) => {
    /** A condition on the window's own parameter (each window's are apart: `$kind0`, `$kind1`…). */
    const where = (condition: string, name: string, value: SqlValue) => {
      params[`$${name}${i}`] = value;
      return ` AND ${condition} $${name}${i}`;
    };
    const kind = window.kind !== undefined ? where('kind =', 'kind', window.kind) : '';
    const since = window.since ?? Number.NEGATIVE_INFINITY;
    let calls = `SELECT ${i} AS w, kind, model, ${ONE_CALL} FROM ${CALLS} WHERE ${COUNTED}${kind}`;
    calls += window.since !== undefined ? where('began_at >', 'since', since) : '';
    if (window.session !== undefined) return [calls + where('session =', 'session', window.session)];
    const edge = Math.floor(since / QUARTER_MS);
    return [
      `SELECT ${i} AS w, kind, model, calls, amount, unmeasured FROM ${TALLIES} WHERE true${kind}${where('quarter >', 'edge', edge)}`,
      calls + where('began_at <', 'edgeEnd', (edge + 1) * QUARTER_MS),
    ];
  });
  return {
    sql: `SELECT w, kind, model, CAST(sum(calls) AS BIGINT) AS calls, sum(amount) AS amount,
      CAST(sum(unmeasured) AS BIGINT) AS unmeasured
      FROM (${parts.join('\n      UNION ALL ')}) AS parts GROUP BY w, kind, model`,
    params,
  };
}

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

function windowParams(window: Window): SqlParams {
  return {
    ...(window.since !== undefined ? { $since: window.since } : {}),
    ...(window.session !== undefined ? { $session: window.session } : {}),
    ...(window.kind !== undefined ? { $kind: window.kind } : {}),
  };
}

/** An object's fields as the statements name them: `$id`, `$kind`… (every field is one word). */
function named(fields: Record<string, SqlValue>): SqlParams {
  return Object.fromEntries(Object.entries(fields).map(([name, value]) => [`$${name}`, value]));
}
