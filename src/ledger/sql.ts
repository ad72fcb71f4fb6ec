// The ledger's schema and SQL, written once for SQLite and PostgreSQL, and its rows. Every time
// is the database's clock (`$now`, database.ts), in ms since the epoch.

import type { BilledKind } from '../config/billed-kinds.js';
import { NOT_SYNCED, type Params, type Row, type SqlValue, type Statements } from './database.js';

export const CALLS = 'gateway_ledger_calls';
export const STATUSES = 'gateway_ledger_job_status';
/** The schema's version: a ledger of another version is not written to (SQLite, PostgreSQL). */
export const SCHEMA_VERSION = 4;
/**
 * The counted calls of each quarter hour and of each day (UTC), by person, kind and model, and
 * again for everyone together (person ''), kept by the database itself (triggers on the calls): a
 * limit's window is its whole days and whole quarters from here and the calls of the one quarter
 * it begins in, so a begin reads a few hundred rows however many calls a month holds, and however
 * many people share the ledger.
 */
const TALLIES = 'gateway_ledger_tallies';
const QUARTER_MS = 900_000;
const DAY_MS = 86_400_000;

export type Outcome = 'accepted' | 'refused' | 'unknown' | 'declined';

/**
 * A billed call as the ledger keeps it: its begin, and its end once recorded (else nulls). The
 * person is who called (an OAuth token's subject, or `local:<user>`) and the client what they
 * called through; the session is the server process's (pids are reused); the hash is callHash() of the purchase, how a
 * duplicate is recognised; the words are the prompt's or text's first; the key is a video
 * submit's Idempotency-Key; the amount is as the gateway reported it; the status is the job's
 * when accepted; the file is the one the call saved (speech).
 */
export interface CallRow {
  id: string;
  beganAt: number;
  session: string;
  pid: number;
  host: string;
  person: string;
  client: string | null;
  kind: BilledKind;
  tool: string;
  model: string;
  hash: string;
  words: string;
  key: string | null;
  expected: number | null;
  outcome: Outcome | null;
  endedAt: number | null;
  job: string | null;
  amount: number | null;
  reason: string | null;
  status: string | null;
  file: string | null;
}

export type CallEndRow = Pick<CallRow, 'job' | 'amount' | 'reason' | 'status' | 'file'> & {
  outcome: Outcome;
};
export type NewCall = Omit<CallRow, 'beganAt' | 'endedAt' | keyof CallEndRow>;

/**
 * Which calls a tally takes: those begun after `since`, or this session's; of one kind, or all; of
 * one person, or everyone's.
 */
export interface Window {
  since?: number;
  session?: string;
  kind?: BilledKind;
  person?: string;
}

/** Counted calls of one kind and model, and the sum of their amounts (reported, else expected). */
export interface TallyRow {
  kind: BilledKind;
  model: string;
  calls: number;
  amount: number;
  /** Calls with neither an amount reported nor one expected. */
  unmeasured: number;
}

/** A counted call's time and amount: for when a used-up limit frees up. */
export type CountedCall = Pick<CallRow, 'beganAt' | 'kind' | 'model' | 'amount'>;

/** Calls grouped for a usage report: by kind, model, outcome (null: not ended) and period. */
export interface UsageRow extends TallyRow {
  outcome: Outcome | null;
  inHour: boolean;
  inDay: boolean;
  inSession: boolean;
  /** The calls of the person the report is for. */
  mine: boolean;
}

/** A person's counted calls of a kind and model, in the last day and in this calendar month. */
export interface PersonRow extends TallyRow {
  person: string;
  inDay: boolean;
  inMonth: boolean;
}

/** The schema in the database's own words: its column types, and how a trigger is written. */
export function schemaSql(dialect: 'sqlite' | 'postgres'): string[] {
  const [serial, integer, real] =
    dialect === 'sqlite' ? ['INTEGER', 'INTEGER', 'REAL'] : ['bigserial', 'bigint', 'double precision'];
  const columns = `seq ${serial} PRIMARY KEY, id TEXT NOT NULL, began_at ${integer} NOT NULL,
    session TEXT NOT NULL, pid ${integer} NOT NULL, host TEXT NOT NULL, person TEXT NOT NULL, client TEXT, kind TEXT NOT NULL, tool TEXT NOT NULL,
    model TEXT NOT NULL, hash TEXT NOT NULL, words TEXT NOT NULL, key TEXT, expected ${real}, outcome TEXT,
    ended_at ${integer}, job TEXT, amount ${real}, reason TEXT, status TEXT, file TEXT`;
  const change = (row: 'NEW' | 'OLD', sign: '+' | '-') => tallyChange(row, sign);
  return [
    `CREATE TABLE IF NOT EXISTS ${CALLS} (${columns})`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_began_at ON ${CALLS} (began_at)`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_hash ON ${CALLS} (hash, began_at)`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_session ON ${CALLS} (session, began_at)`,
    `CREATE INDEX IF NOT EXISTS ${CALLS}_person ON ${CALLS} (person, began_at)`,
    `CREATE TABLE IF NOT EXISTS ${STATUSES} (job TEXT PRIMARY KEY, status TEXT NOT NULL, at ${integer} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${TALLIES} (person TEXT NOT NULL, span ${integer} NOT NULL, bucket ${integer} NOT NULL,
      kind TEXT NOT NULL, model TEXT NOT NULL, calls ${integer} NOT NULL, amount ${real} NOT NULL,
      unmeasured ${integer} NOT NULL, PRIMARY KEY (person, span, bucket, kind, model))${dialect === 'sqlite' ? ' WITHOUT ROWID' : ''}`,
    ...(dialect === 'sqlite'
      ? [
          ['INSERT', change('NEW', '+')],
          ['UPDATE', `${change('OLD', '-')}; ${change('NEW', '+')}`],
          ['DELETE', change('OLD', '-')],
        ].map(
          ([event, body]) =>
            `CREATE TRIGGER IF NOT EXISTS ${TALLIES}_${event?.toLowerCase()} AFTER ${event} ON ${CALLS} BEGIN ${body}; END`,
        )
      : [
          `CREATE OR REPLACE FUNCTION ${TALLIES}_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            IF TG_OP <> 'INSERT' THEN ${change('OLD', '-')}; END IF;
            IF TG_OP <> 'DELETE' THEN ${change('NEW', '+')}; END IF;
            RETURN NULL; END $$`,
          `CREATE TRIGGER ${TALLIES}_change AFTER INSERT OR UPDATE OR DELETE ON ${CALLS}
            FOR EACH ROW EXECUTE FUNCTION ${TALLIES}_change()`,
        ]),
  ];
}

/**
 * A call's part in the tallies of its quarter and day (its person's, everyone's), added (+) or
 * taken away (-) when it counts.
 */
function tallyChange(row: 'NEW' | 'OLD', sign: '+' | '-'): string {
  const measured = `coalesce(${row}.amount, ${row}.expected)`;
  const add = (column: string) => `${column} = ${TALLIES}.${column} + excluded.${column}`;
  return `INSERT INTO ${TALLIES} (person, span, bucket, kind, model, calls, amount, unmeasured)
    SELECT who.person, spans.span, CAST(${row}.began_at / spans.span AS BIGINT), ${row}.kind, ${row}.model, ${sign}1,
      ${sign}coalesce(${measured}, 0), ${sign}${flag(`${measured} IS NULL`)}
    FROM (SELECT ${row}.person AS person UNION ALL SELECT '') AS who,
      (SELECT ${QUARTER_MS} AS span UNION ALL SELECT ${DAY_MS}) AS spans
    WHERE ${counted(`${row}.outcome`)}
    ON CONFLICT (person, span, bucket, kind, model) DO UPDATE SET ${add('calls')}, ${add('amount')}, ${add('unmeasured')}`;
}

/** The calls that count against the limits: not ended, accepted, or unknown. */
const counted = (outcome = 'outcome') => `(${outcome} IS NULL OR ${outcome} IN ('accepted', 'unknown'))`;
/** A condition as 1 or 0: SQLite and PostgreSQL answer a comparison differently (0/1, true/false). */
const flag = (condition: string) => `CASE WHEN ${condition} THEN 1 ELSE 0 END`;
const MEASURED = 'coalesce(amount, expected)';
const BEGIN_COLUMNS = 'id, session, pid, host, person, client, kind, tool, model, hash, words, key, expected';
const END_COLUMNS = 'outcome, job, amount, reason, status, file';
/** A call's columns as CallRow names them (both drivers give numbers and nulls). */
const CALL = `began_at AS "beganAt", ended_at AS "endedAt", ${BEGIN_COLUMNS}, ${END_COLUMNS}`;
const values = (columns: string) => columns.replace(/(\w+)/g, '$$$1');
const ORDER = 'ORDER BY began_at DESC, seq DESC';

/** Records a call's begin, and its end when given (refused by a limit, declined): its row's number. */
export async function insertCall(db: Statements, call: NewCall, end?: CallEndRow): Promise<number> {
  const [columns, given] = end
    ? [`${BEGIN_COLUMNS}, ${END_COLUMNS}, began_at, ended_at`, { ...call, ...end }]
    : [`${BEGIN_COLUMNS}, began_at`, call];
  const sql = `INSERT INTO ${CALLS} (${columns}) VALUES (${values(columns.replace(/began_at|ended_at/g, 'now'))}) RETURNING seq`;
  const [row] = await db.query(sql, named(given));
  return Number(row?.seq);
}

/** An end, unlike a begin, is not synced on its own: lost with the machine, the call reads as unknown and counts. */
export async function endCall(db: Statements, seq: number, end: CallEndRow): Promise<void> {
  const set = END_COLUMNS.split(', ').map((column) => `${column} = $${column}`);
  await db.run(
    `UPDATE ${CALLS} SET ${set.join(', ')}, ended_at = $now WHERE seq = $seq`,
    named({ ...end, seq }),
    NOT_SYNCED,
  );
}

/**
 * The person, as the duplicate look-up compares it: an expression, so that no database reads that
 * look-up by the person's index (every call of a developer who is alone in the ledger, within the
 * window) rather than the hash's. SQLite, which has no statistics on a young ledger, did.
 */
const BY_HASH_ONLY = 'coalesce(person, person)';

/**
 * The person's newest counted call with this hash begun in the last `windowMs`, except one sent
 * with `exceptKey`. Another person's identical call is not theirs to be answered with. It needs
 * no time from the caller, so a transaction may send it before its clock is read.
 */
export async function duplicateOf(
  db: Statements,
  hash: string,
  windowMs: number,
  exceptKey: string | null,
  person: string,
): Promise<CallRow | null> {
  const [row] = await db.query(
    `SELECT ${CALL} FROM ${CALLS} WHERE hash = $hash AND began_at > $now - $window AND ${counted()} AND ${BY_HASH_ONLY} = $person
      AND (CAST($except AS TEXT) IS NULL OR key IS NULL OR key <> CAST($except AS TEXT)) ${ORDER} LIMIT 1`,
    { $hash: hash, $window: windowMs, $except: exceptKey, $person: person },
  );
  return (row as CallRow | undefined) ?? null;
}

/**
 * Counted calls of each window by kind and model, in one statement. A window since a time: the
 * tallies (its person's, or everyone's) of the days wholly inside it, of the quarters wholly inside
 * it before its first whole day, and the calls of the quarter it begins in. A session's window:
 * its calls.
 */
export async function tallies(db: Statements, windows: readonly Window[]): Promise<TallyRow[][]> {
  if (windows.length === 0) return [];
  const params: Params = {};
  const parts = windows.flatMap((window, i) => {
    const where = (condition: string, name: string, value: SqlValue) => {
      params[`$${name}${i}`] = value;
      return ` AND ${condition} $${name}${i}`;
    };
    const kind = window.kind !== undefined ? where('kind =', 'kind', window.kind) : '';
    const person = window.person !== undefined ? where('person =', 'person', window.person) : '';
    const one = `1 AS calls, coalesce(${MEASURED}, 0) AS amount, ${flag(`${MEASURED} IS NULL`)} AS unmeasured`;
    let calls = `SELECT ${i} AS w, kind, model, ${one} FROM ${CALLS} WHERE ${counted()}${kind}${person}`;
    if (window.since !== undefined) calls += where('began_at >', 'since', window.since);
    if (window.session !== undefined) return [calls + where('session =', 'session', window.session)];
    const quarter = Math.floor((window.since ?? Number.NEGATIVE_INFINITY) / QUARTER_MS) + 1;
    const day = Math.ceil((quarter * QUARTER_MS) / DAY_MS);
    const tally = (span: number) =>
      `SELECT ${i} AS w, kind, model, calls, amount, unmeasured FROM ${TALLIES}
        WHERE person = $who${i} AND span = ${span}${kind}${where('bucket >=', `from${span}`, span === DAY_MS ? day : quarter)}`;
    params[`$who${i}`] = window.person ?? '';
    return [
      tally(DAY_MS),
      tally(QUARTER_MS) + where('bucket <', 'dayQuarter', (day * DAY_MS) / QUARTER_MS),
      calls + where('began_at <', 'edge', quarter * QUARTER_MS),
    ];
  });
  const rows = await db.query(
    `SELECT w, kind, model, CAST(sum(calls) AS BIGINT) AS calls, sum(amount) AS amount,
      CAST(sum(unmeasured) AS BIGINT) AS unmeasured
      FROM (${parts.join(' UNION ALL ')}) AS parts GROUP BY w, kind, model`,
    params,
  );
  return windows.map((_, i) => rows.filter((row) => Number(row.w) === i) as unknown as TallyRow[]);
}

/** Counted calls within the window, oldest first. */
export async function countedCalls(db: Statements, window: Window): Promise<CountedCall[]> {
  const where = [counted()];
  const params: Params = {};
  for (const [name, column, op] of [
    ['since', 'began_at', '>'],
    ['session', 'session', '='],
    ['kind', 'kind', '='],
    ['person', 'person', '='],
  ] as const) {
    if (window[name] === undefined) continue;
    where.push(`${column} ${op} $${name}`);
    params[`$${name}`] = window[name];
  }
  const sql = `SELECT began_at AS "beganAt", kind, model, ${MEASURED} AS amount FROM ${CALLS}
    WHERE ${where.join(' AND ')} ORDER BY began_at, seq`;
  return (await db.query(sql, params)) as unknown as CountedCall[];
}

export async function noteStatus(db: Statements, job: string, status: string): Promise<void> {
  await db.run(
    `INSERT INTO ${STATUSES} (job, status, at) VALUES ($job, $status, $now)
      ON CONFLICT (job) DO UPDATE SET status = excluded.status, at = excluded.at`,
    { $job: job, $status: status },
    NOT_SYNCED,
  );
}

/** The last status noted of each job. */
export async function jobStatuses(db: Statements, jobs: readonly string[]): Promise<Map<string, JobStatus>> {
  if (jobs.length === 0) return new Map();
  const params = Object.fromEntries(jobs.map((job, i) => [`$job${i}`, job]));
  const sql = `SELECT job, status, at FROM ${STATUSES} WHERE job IN (${Object.keys(params).join(', ')})`;
  const rows = await db.query(sql, params);
  return new Map(rows.map((row) => [String(row.job), { status: String(row.status), at: Number(row.at) }]));
}

export interface JobStatus {
  status: string;
  at: number;
}

/** The latest calls (counted video submits only, one person's only), newest first. */
export async function latestCalls(
  db: Statements,
  limit: number,
  only: { videos?: boolean; person?: string | undefined } = {},
): Promise<CallRow[]> {
  const where = [
    ...(only.videos ? [`kind = 'video' AND ${counted()}`] : []),
    ...(only.person !== undefined ? ['person = $person'] : []),
  ];
  const params = { $limit: limit, ...(only.person !== undefined ? { $person: only.person } : {}) };
  const sql = `SELECT ${CALL} FROM ${CALLS} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${ORDER} LIMIT $limit`;
  return (await db.query(sql, params)) as unknown as CallRow[];
}

/** Calls not ended begun after `since`, newest first. */
export async function openCalls(db: Statements, since: number, limit: number): Promise<CallRow[]> {
  const sql = `SELECT ${CALL} FROM ${CALLS} WHERE outcome IS NULL AND began_at > $since ${ORDER} LIMIT $limit`;
  return (await db.query(sql, { $since: since, $limit: limit })) as unknown as CallRow[];
}

/**
 * Calls of the last day and of this session, grouped by kind, model, outcome, period and whether
 * they are `person`'s.
 */
export async function usageRows(
  db: Statements,
  now: number,
  session: string,
  person: string | null,
): Promise<UsageRow[]> {
  const rows = await db.query(
    `SELECT kind, model, outcome, ${flag('began_at > $hour')} AS "inHour", ${flag('began_at > $day')} AS "inDay",
      ${flag('session = $session')} AS "inSession", ${flag('person = $person')} AS mine, count(*) AS calls,
      coalesce(sum(${MEASURED}), 0) AS amount, count(*) - count(${MEASURED}) AS unmeasured
      FROM ${CALLS} WHERE began_at > $day OR session = $session GROUP BY kind, model, outcome, 4, 5, 6, 7`,
    { $hour: now - 3_600_000, $day: now - 86_400_000, $session: session, $person: person },
  );
  return rows.map((row) => ({
    ...row,
    ...flags(row, 'inHour', 'inDay', 'inSession', 'mine'),
  })) as unknown as UsageRow[];
}

/** Counted calls by person, kind and model since `since`, with whether each is in the day and the month. */
export async function personRows(
  db: Statements,
  since: number,
  day: number,
  month: number,
): Promise<PersonRow[]> {
  const rows = await db.query(
    `SELECT person, kind, model, ${flag('began_at > $day')} AS "inDay", ${flag('began_at >= $month')} AS "inMonth",
      count(*) AS calls, coalesce(sum(${MEASURED}), 0) AS amount, count(*) - count(${MEASURED}) AS unmeasured
      FROM ${CALLS} WHERE began_at >= $since AND ${counted()} GROUP BY person, kind, model, 4, 5`,
    { $since: since, $day: day, $month: month },
  );
  return rows.map((row) => ({ ...row, ...flags(row, 'inDay', 'inMonth') })) as unknown as PersonRow[];
}

/** 0/1 columns as booleans. */
const flags = (row: Row, ...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, Number(row[name]) === 1]));

/** Every call (of a person, or everyone's) begun at or after `since`, oldest first, a page at a time. */
export async function exportPages(
  db: Statements,
  since: number,
  person: string | null,
  onPage: (rows: CallRow[]) => Promise<void> | void,
): Promise<void> {
  for (let after = -1; ; ) {
    const sql = `SELECT seq, ${CALL} FROM ${CALLS} WHERE began_at >= $since AND seq > $after
      AND (CAST($person AS TEXT) IS NULL OR person = CAST($person AS TEXT)) ORDER BY seq LIMIT 1000`;
    const rows = await db.query(sql, { $since: since, $after: after, $person: person });
    if (rows.length === 0) return;
    after = Number(rows[rows.length - 1]?.seq);
    await onPage(rows as unknown as CallRow[]);
  }
}

/**
 * Removes calls and job statuses older than the retention by the ledger's clock (`$now`: the
 * database server's, or for SQLite the kernel's, which no process's own clock moves), except the
 * `kept` calls recorded last, whatever their times. A limit's window is at most a month and every
 * process reckons it by that same clock, so what is removed is what no process still counts.
 * Not synced: what a crash of the machine brings back is removed the next time.
 */
export async function removeOld(db: Statements, retentionMs: number, kept: number): Promise<number> {
  const params = { $retention: retentionMs };
  const removed = await db.run(
    `DELETE FROM ${CALLS} WHERE began_at < $now - $retention
      AND seq < (SELECT min(seq) FROM (SELECT seq FROM ${CALLS} ORDER BY seq DESC LIMIT $kept) AS recent)`,
    { ...params, $kept: kept },
    NOT_SYNCED,
  );
  await db.run(`DELETE FROM ${STATUSES} WHERE at < $now - $retention`, params, NOT_SYNCED);
  await db.run(`DELETE FROM ${TALLIES} WHERE calls = 0`, {}, NOT_SYNCED);
  return removed;
}

/** An object's fields as the statements name them: `$id`, `$kind`… */
function named(fields: Record<string, SqlValue>): Params {
  return Object.fromEntries(Object.entries(fields).map(([name, value]) => [`$${name}`, value]));
}
