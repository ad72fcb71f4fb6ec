// The ledger in a PostgreSQL database (GATEWAY_LEDGER_URL), shared by every server process on
// every host that names it: a team's one set of limits, one budget and one duplicate guard.
//
// Transactions take turns through a transaction-scoped advisory lock, the same on every host: the
// ledger's, or a scope's (a call no limit counts takes its hash's, so that such calls from many
// replicas do not queue behind each other). It is waited for as a query like any other (the event
// loop serves everything else), bounded by lock_timeout. A process stopped (SIGSTOP) or cut off
// while holding it keeps it only until the database ends its idle transaction. Every time, retention's too, is the database server's clock,
// so hosts whose clocks differ agree on the hour and day.
//
// pg is imported when the ledger is opened, without its native binding. The password appears in
// no message: `where` masks it, every text from pg is scrubbed of it, and pg's errors (which carry
// the client) are not kept as causes.

import { createHash } from 'node:crypto';
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
import { SCHEMA_VERSION, schemaSql } from './sql.js';

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
const META = 'gateway_ledger_meta';
const MADE = `SELECT to_regclass('${META}') IS NOT NULL AS made`;
/** The database's clock in ms: what `$now` reads. */
const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
type Query = (statement: { text: string; values?: unknown[]; name?: string }) => Promise<{
  rows: Row[];
  rowCount: number | null;
  command: string;
}>;
type Scrub = (text: string) => string;

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const scrub = scrubber(options.url);
  const where = withoutCredentials(options.url);
  const fail = (error: unknown) => failure(error, where, options.waitMs, scrub);
  const pool = await newPool(options, where, scrub);
  const db = new Postgres(pool, where, options.waitMs, fail);
  try {
    const [made] = await db.query(MADE);
    const [row] = made?.made ? await db.query(`SELECT value FROM ${META} WHERE name = 'schema_version'`) : [];
    const version = made?.made ? String(row?.value ?? 'none') : undefined;
    if (version === undefined && options.readOnly)
      return Object.assign(db, { query: async () => [], run: async () => 0 });
    if (version === undefined)
      await db.transaction(async (tx) => {
        if ((await tx.query(MADE))[0]?.made) return; // made by the process before this one in the lock
        const schema = [
          `CREATE TABLE ${META} (name text PRIMARY KEY, value text NOT NULL)`,
          ...schemaSql('postgres'),
        ];
        await tx.run(
          `${schema.join(';\n')}; INSERT INTO ${META} VALUES ('schema_version', '${SCHEMA_VERSION}')`,
        );
      });
    else if (version !== String(SCHEMA_VERSION))
      throw new LedgerUnavailable(
        `The ledger of billed calls (${where}) was made by another version of gateway-tools-mcp (ledger version ${version}, this one reads ${SCHEMA_VERSION}): run the same version on every host that shares it, or name another database in GATEWAY_LEDGER_URL.`,
      );
    return db;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw fail(error);
  }
}

/** Takes the password (the URL's, PGPASSWORD) and the URL's credentials out of a text. */
function scrubber(url: string): Scrub {
  const passwords = [process.env.PGPASSWORD ?? ''];
  try {
    const { password } = new URL(url);
    passwords.push(password, decodeURIComponent(password));
  } catch {
    // not a URL pg can read either: the message says so
  }
  const secrets = [...new Set(passwords.filter(Boolean))].sort((a, b) => b.length - a.length);
  return (text) => secrets.reduce((out, secret) => out.split(secret).join('***'), withoutCredentials(text));
}

/** A failure of pg or of the database, in one sentence that says where and what to check. */
function failure(error: unknown, where: string, waitMs: number, scrub: Scrub): LedgerUnavailable {
  if (error instanceof LedgerUnavailable) return error;
  const { code, message } = plainError(error);
  const said = scrub(message);
  const waited = waitText(waitMs);
  const text =
    code === '55P03'
      ? `is busy: other server processes held it for all of ${waited} (many calls at once, or one process stuck). Try again shortly; if it stays busy, look for a stuck gateway-tools-mcp session in pg_stat_activity.`
      : code === '53300' || /timeout exceeded when trying to connect|connection timeout/i.test(said)
        ? `is busy or not answering: no connection to the database within ${waited} (${said}). Try again shortly; if it goes on, check the PostgreSQL server at the host and port in GATEWAY_LEDGER_URL.`
        : code === '28P01' || code === '28000' || /password/i.test(said)
          ? `refused the password or the user (${said}): check the user and password in GATEWAY_LEDGER_URL, and the server's pg_hba.conf.`
          : code === '3D000'
            ? `cannot be opened (${said}): create the database (createdb), or name an existing one in GATEWAY_LEDGER_URL.`
            : code === '42501'
              ? `was refused (${said}): the user in GATEWAY_LEDGER_URL must be allowed to create the ledger's tables on first use, and to read and write them.`
              : code === '25P03'
                ? `ended this process's transaction, which stood idle too long (${said}; was the process stopped?): nothing of it was recorded. Try again.`
                : code === '53100'
                  ? `is on a full disk (${said}): free space on the database server's disk; until then no billed call is sent.`
                  : typeof code === 'string' && /^(08|57P|E[A-Z]+$)/.test(code)
                    ? `cannot be reached (${said}): check that the PostgreSQL server is running, and the host and port in GATEWAY_LEDGER_URL.`
                    : `failed (${said}): check the database GATEWAY_LEDGER_URL names.`;
  return new LedgerUnavailable(`The ledger of billed calls (${where}) ${text}`);
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

async function newPool({ url, waitMs, log }: PostgresOptions, where: string, scrub: Scrub): Promise<Pool> {
  // NODE_PG_FORCE_NATIVE would make pg require pg-native as it loads.
  const forced = process.env.NODE_PG_FORCE_NATIVE;
  delete process.env.NODE_PG_FORCE_NATIVE;
  const pg = await import('pg').finally(() => {
    if (forced !== undefined) process.env.NODE_PG_FORCE_NATIVE = forced;
  });
  // bigint columns (times, counts) as numbers, for this pool only; ms times stay far below 2^53.
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, Number);
  const statementMs = Math.max(30_000, waitMs + 5_000);
  const pool = new pg.Pool({
    connectionString: url,
    types,
    max: 4,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: Math.max(1, waitMs),
    allowExitOnIdle: true,
    // Statements sent without waiting for the one before (a transaction's, Postgres.locked).
    pipeline: true,
    keepAlive: true,
    application_name: 'gateway-tools-mcp',
    // How long a stopped process holding the lock blocks the others: a healthy begin is never idle this long.
    idle_in_transaction_session_timeout: 5_000,
    statement_timeout: statementMs,
    query_timeout: statementMs + 5_000,
  });
  // A connection that breaks while idle is dropped and replaced; unhandled, this would end the process.
  pool.on('error', (error) =>
    log.warn(
      `ledger: a connection to ${where} failed while idle (${scrub(error.message)}); the next query opens another`,
    ),
  );
  return pool;
}

class Postgres implements Database {
  private readonly statements: Statements;
  /** This process's transactions of a scope one at a time: one connection waits for its lock, the others stay free. */
  private readonly turns = new Map<string, Promise<unknown>>();
  /** Operations under way, which close() lets finish. */
  private readonly underWay = new Set<Promise<unknown>>();

  constructor(
    private readonly pool: Pool,
    readonly where: string,
    private readonly waitMs: number,
    private readonly fail: (error: unknown) => LedgerUnavailable,
  ) {
    this.statements = statementsOver((statement) =>
      pool.query(statement).catch((e) => Promise.reject(fail(e))),
    );
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
  transaction<T>(work: (tx: Statements) => Promise<T>, scope = ''): Promise<T> {
    const deadline = performance.now() + this.waitMs;
    const turn = (this.turns.get(scope) ?? Promise.resolve()).then(() => this.locked(deadline, work, scope));
    const done = turn.catch(() => undefined);
    this.turns.set(scope, done);
    void done.then(() => this.turns.get(scope) === done && this.turns.delete(scope));
    return this.tracked(turn);
  }

  async close(): Promise<void> {
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
    await this.pool.end().catch(() => undefined);
  }

  /**
   * A transaction holding its scope's lock, READ COMMITTED whatever the database's default. The
   * connection pipelines: the work's first statements go out behind the lock (a begin's duplicate
   * look-up costs no round trip of its own), and the commit goes out behind the statements the work
   * did not wait for (a begin's insert), so a begin holds the lock for two round trips, not four.
   */
  private async locked<T>(deadline: number, work: (tx: Statements) => Promise<T>, scope: string): Promise<T> {
    const client: PoolClient = await this.pool.connect().catch((error) => Promise.reject(this.fail(error)));
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    const query: Query = (statement) =>
      client.query(statement).catch((error) => {
        const severity = (error as { severity?: string }).severity;
        if (severity === undefined || severity === 'FATAL') broken ??= error as Error;
        throw this.fail(broken ?? error);
      });
    // What the work sent, waited for before the commit is (one left unawaited is no unhandled rejection).
    const sent = new Set<Promise<unknown>>();
    const sending = <R>(running: Promise<R>) => {
      sent.add(running);
      running.catch(() => undefined);
      return running;
    };
    const statements = statementsOver(query);
    try {
      const left = Math.floor(deadline - performance.now());
      if (left <= 0) throw this.fail({ code: '55P03' });
      // One statement: the transaction, its wait bound, the lock, and the clock once it is held.
      const opened = (
        query({
          text: `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = ${left}; SELECT pg_advisory_xact_lock(${lockKey(scope)}); SELECT ${DB_NOW} AS now`,
        }) as unknown as Promise<{ rows: Row[] }[]>
      ).then((results) => Number(results.at(-1)?.rows[0]?.now));
      opened.catch(() => undefined);
      let result: T;
      try {
        result = await work({
          query: (sql, params) => sending(statements.query(sql, params)),
          run: (sql, params) => sending(statements.run(sql, params)),
          now: () => opened,
        });
      } finally {
        // Not holding the lock is what went wrong first: the work's statements then failed for it.
        await opened;
      }
      const committed = query({ text: 'COMMIT' });
      committed.catch(() => undefined);
      await Promise.all(sent);
      // A statement that failed leaves the transaction aborted, and its COMMIT a rollback.
      if ((await committed).command !== 'COMMIT')
        throw this.fail(new Error('the transaction was rolled back'));
      return result;
    } catch (error) {
      if (!broken) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken ?? false); // a connection given back with an error is closed
    }
  }

  private tracked<T>(running: Promise<T>): Promise<T> {
    this.underWay.add(running);
    const done = () => this.underWay.delete(running);
    running.then(done, done);
    return running;
  }
}

/** The advisory lock of a scope (database.ts): the ledger's own without one, else 64 bits of its digest. */
export function lockKey(scope: string): string {
  return scope ? createHash('sha256').update(scope).digest().readBigInt64BE(0).toString() : LEDGER_LOCK_KEY;
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
