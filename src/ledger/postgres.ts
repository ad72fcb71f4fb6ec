// The ledger in a PostgreSQL database (GATEWAY_LEDGER_URL), shared by every server process on
// every host that names it: a team's one set of limits, one budget and one duplicate guard.
//
// Transactions take turns through one transaction-scoped advisory lock, the same on every host.
// Waiting for it is a query like any other (the event loop serves everything else), bounded by
// lock_timeout. A process stopped (SIGSTOP) or cut off while holding it keeps it only until the
// database ends its idle transaction (idle_in_transaction_session_timeout). Every time, retention's
// too, is the database server's clock, so hosts whose clocks differ agree on the hour and day.
//
// pg is imported when the ledger is opened (a server without GATEWAY_LEDGER_URL never loads it),
// without its native binding. The password appears in no message: `where` masks it, and every
// text from pg is scrubbed of it; pg's errors are not kept as causes (they carry the client).

import type { Pool, PoolClient } from 'pg';
import type { Logger } from '../lib/log.js';
import { withoutCredentials } from '../lib/urls.js';
import {
  type Database,
  LedgerUnavailable,
  type Params,
  type Row,
  type Statements,
  waitText,
} from './database.js';
import { schemaSql } from './sql.js';

export interface PostgresOptions {
  url: string;
  /** How long a transaction waits for another's (or for a connection) before the call is refused. */
  waitMs: number;
  log: Logger;
  /** Opened only to report: nothing is made, and a ledger not made yet reads as empty. */
  readOnly?: boolean;
}

/** The advisory lock every transaction (and the making of the tables) takes, on every host. */
export const LEDGER_LOCK_KEY = '7455546890867139954';
const SCHEMA_VERSION = '3';
const META = 'gateway_ledger_meta';
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${META} (name text PRIMARY KEY, value text NOT NULL)`,
  ...schemaSql('postgres'),
  `INSERT INTO ${META} (name, value) VALUES ('schema_version', '${SCHEMA_VERSION}') ON CONFLICT (name) DO NOTHING`,
].join(';\n');
const MADE = `SELECT to_regclass('${META}') IS NOT NULL AS made`;
/** How long a stopped process holding the lock blocks the others: a healthy begin is never idle this long. */
const IDLE_IN_TRANSACTION_MS = 5_000;
/** The database's clock in ms: what `$now` reads. */
const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

type Query = (statement: { text: string; values?: unknown[]; name?: string }) => Promise<{
  rows: Row[];
  rowCount: number | null;
}>;

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const place = placeOf(options);
  const pool = await newPool(options, place);
  const database = new Postgres(pool, place);
  try {
    const [made] = await database.query(MADE);
    const [row] = made?.made
      ? await database.query(`SELECT value FROM ${META} WHERE name = 'schema_version'`)
      : [];
    const version = made?.made ? String(row?.value ?? 'none') : undefined;
    if (version === undefined && options.readOnly)
      return Object.assign(database, { query: async () => [], run: async () => 0 });
    if (version === undefined)
      await database.transaction(async (tx) => {
        const [again] = await tx.query(MADE);
        if (!again?.made) await tx.run(SCHEMA);
      });
    else if (version !== SCHEMA_VERSION)
      throw new LedgerUnavailable(
        `The ledger of billed calls (${place.where}) was made by another version of gateway-tools-mcp (ledger version ${version}, this one reads ${SCHEMA_VERSION}): run the same version on every host that shares it, or name another database in GATEWAY_LEDGER_URL.`,
      );
    return database;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw failure(error, place);
  }
}

/** Where the ledger is (password masked), the wait bound, and the scrub of the password. */
interface Place {
  where: string;
  waitMs: number;
  scrub(text: string): string;
}

function placeOf({ url, waitMs }: PostgresOptions): Place {
  const passwords = [process.env.PGPASSWORD ?? ''];
  try {
    const { password } = new URL(url);
    passwords.push(password, decodeURIComponent(password));
  } catch {
    // not a URL pg can read either: the message says so
  }
  const secrets = [...new Set(passwords.filter(Boolean))].sort((a, b) => b.length - a.length);
  return {
    where: withoutCredentials(url),
    waitMs,
    scrub: (text) => secrets.reduce((out, secret) => out.split(secret).join('***'), withoutCredentials(text)),
  };
}

/** A failure of pg or of the database, in one sentence that says where and what to check. */
function failure(error: unknown, place: Place): LedgerUnavailable {
  if (error instanceof LedgerUnavailable) return error;
  const { code, message } = plainError(error);
  const said = place.scrub(message);
  const waited = waitText(place.waitMs);
  const text = (() => {
    if (code === '55P03')
      return `is busy: other server processes held it for all of ${waited} (many calls at once, or one process stuck). Try again shortly; if it stays busy, look for a stuck gateway-tools-mcp session in pg_stat_activity.`;
    if (code === '53300' || /timeout exceeded when trying to connect|connection timeout/i.test(said))
      return `is busy or not answering: no connection to the database within ${waited} (${said}). Try again shortly; if it goes on, check the PostgreSQL server at the host and port in GATEWAY_LEDGER_URL.`;
    if (code === '28P01' || code === '28000' || /password/i.test(said))
      return `refused the password or the user (${said}): check the user and password in GATEWAY_LEDGER_URL, and the server's pg_hba.conf.`;
    if (code === '3D000')
      return `cannot be opened (${said}): create the database (createdb), or name an existing one in GATEWAY_LEDGER_URL.`;
    if (code === '42501')
      return `was refused (${said}): the user in GATEWAY_LEDGER_URL must be allowed to create the ledger's tables on first use, and to read and write them.`;
    if (code === '25P03')
      return `ended this process's transaction, which stood idle too long (${said}; was the process stopped?): nothing of it was recorded. Try again.`;
    if (code === '53100')
      return `is on a full disk (${said}): free space on the database server's disk; until then no billed call is sent.`;
    if (typeof code === 'string' && /^(08|57P|E[A-Z]+$)/.test(code))
      return `cannot be reached (${said}): check that the PostgreSQL server is running, and the host and port in GATEWAY_LEDGER_URL.`;
    return `failed (${said}): check the database GATEWAY_LEDGER_URL names.`;
  })();
  return new LedgerUnavailable(`The ledger of billed calls (${place.where}) ${text}`);
}

/** A code and message; a refused connection to several addresses comes as an AggregateError without one. */
function plainError(error: unknown): { code: unknown; message: string } {
  const { code, message, errors } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    errors?: unknown[];
  };
  if (typeof message === 'string' && message) return { code, message };
  if (errors?.length) return { ...plainError(errors[0]), ...(code ? { code } : {}) };
  return { code, message: String(error) };
}

async function newPool(options: PostgresOptions, place: Place): Promise<Pool> {
  // NODE_PG_FORCE_NATIVE would make pg require pg-native as it loads.
  const forced = process.env.NODE_PG_FORCE_NATIVE;
  delete process.env.NODE_PG_FORCE_NATIVE;
  const pg = await import('pg').finally(() => {
    if (forced !== undefined) process.env.NODE_PG_FORCE_NATIVE = forced;
  });
  // bigint columns (times, counts) as numbers, for this pool only; ms times stay far below 2^53.
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, Number);
  const statementMs = Math.max(30_000, options.waitMs + 5_000);
  const pool = new pg.Pool({
    connectionString: options.url,
    types,
    max: 4,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: Math.max(1, options.waitMs),
    allowExitOnIdle: true,
    keepAlive: true,
    application_name: 'gateway-tools-mcp',
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    statement_timeout: statementMs,
    query_timeout: statementMs + 5_000,
  });
  // A connection that breaks while idle is dropped and replaced; unhandled, this would end the process.
  pool.on('error', (error) =>
    options.log.warn(
      `ledger: a connection to ${place.where} failed while idle (${place.scrub(error.message)}); the next query opens another`,
    ),
  );
  return pool;
}

class Postgres implements Database {
  readonly where: string;
  private readonly statements: Statements;
  /** This process's transactions one at a time: one connection waits for the lock, the others stay free. */
  private turns: Promise<unknown> = Promise.resolve();
  /** Operations under way, which close() lets finish. */
  private readonly underWay = new Set<Promise<unknown>>();

  constructor(
    private readonly pool: Pool,
    private readonly place: Place,
  ) {
    this.where = place.where;
    this.statements = statementsOver(async (statement) => {
      try {
        return (await pool.query(statement)) as Awaited<ReturnType<Query>>;
      } catch (error) {
        throw failure(error, place);
      }
    });
  }

  query(sql: string, params?: Params): Promise<Row[]> {
    return this.tracked(this.statements.query(sql, params));
  }

  run(sql: string, params?: Params): Promise<number> {
    return this.tracked(this.statements.run(sql, params));
  }

  now(): Promise<number> {
    return this.tracked(this.statements.now());
  }

  /** The wait bound counts from the call: a turn behind this process's other transactions is part of it. */
  transaction<T>(work: (tx: Statements) => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.place.waitMs;
    const turn = this.turns.then(() => this.locked(deadline, work));
    this.turns = turn.catch(() => undefined);
    return this.tracked(turn);
  }

  async close(): Promise<void> {
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
    await this.pool.end().catch(() => undefined);
  }

  /**
   * A transaction holding the ledger's lock, READ COMMITTED whatever the database's default (each
   * statement after the lock sees every transaction committed before it).
   */
  private async locked<T>(deadline: number, work: (tx: Statements) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw failure(error, this.place);
    }
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    const query: Query = async (statement) => {
      try {
        return (await client.query(statement)) as Awaited<ReturnType<Query>>;
      } catch (error) {
        const severity = (error as { severity?: string }).severity;
        if (severity === undefined || severity === 'FATAL') broken ??= error as Error;
        throw failure(broken ?? error, this.place);
      }
    };
    try {
      const left = Math.floor(deadline - performance.now());
      if (left <= 0) throw failure({ code: '55P03' }, this.place);
      // One round trip: the transaction, its wait bound, the lock, and the clock once it is held.
      const opened = (await query({
        text: `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = ${left}; SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY}); SELECT ${DB_NOW} AS now`,
      })) as unknown as { rows: Row[] }[];
      const lockedAt = Number(opened.at(-1)?.rows[0]?.now);
      const result = await work({ ...statementsOver(query), now: async () => lockedAt });
      await query({ text: 'COMMIT' });
      return result;
    } catch (error) {
      if (!broken) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw error;
    } finally {
      client.removeListener('error', onError);
      // A connection given back with an error is closed rather than used again.
      client.release(broken ?? false);
    }
  }

  private tracked<T>(running: Promise<T>): Promise<T> {
    this.underWay.add(running);
    const done = () => this.underWay.delete(running);
    running.then(done, done);
    return running;
  }
}

/** The ledger's statements through pg: named parameters as $1…, `$now` as the database's clock. */
function statementsOver(query: Query): Statements {
  return {
    query: async (sql, params) => (await query(positional(sql, params))).rows,
    run: async (sql, params) => (await query(positional(sql, params))).rowCount ?? 0,
    now: async () => Number((await query({ text: `SELECT ${DB_NOW} AS now` })).rows[0]?.now),
  };
}

/** Each statement's text for pg, its parameters' names in order and its name, made once. */
const POSITIONAL = new Map<string, { text: string; names: string[]; name: string }>();

/** A statement as pg takes it: named once it has parameters, so each connection plans it once. */
function positional(sql: string, params: Params = {}): Parameters<Query>[0] {
  let made = POSITIONAL.get(sql);
  if (!made) {
    const names: string[] = [];
    const text = sql.replace(/\$([A-Za-z_]\w*)/g, (_, name: string) => {
      if (name === 'now') return DB_NOW;
      const index = names.includes(name) ? names.indexOf(name) : names.push(name) - 1;
      return `$${index + 1}`;
    });
    made = { text, names, name: `gateway_ledger_${POSITIONAL.size}` };
    POSITIONAL.set(sql, made);
  }
  // A time before or after any (±Infinity, as SQLite compares it) as the farthest a bigint holds.
  const value = (v: Params[string] | undefined) =>
    typeof v === 'number' && !Number.isFinite(v) ? Math.sign(v) * Number.MAX_SAFE_INTEGER : (v ?? null);
  const values = made.names.map((name) => value(params[`$${name}`]));
  // A statement without parameters may be several (the schema): those are not named.
  return values.length > 0 ? { text: made.text, values, name: made.name } : { text: made.text };
}
