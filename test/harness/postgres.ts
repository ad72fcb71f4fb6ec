// A PostgreSQL server of its own for a test file: a fresh cluster (initdb) in a temporary folder,
// listening on 127.0.0.1 only, on a free port, with its unix socket inside that folder, and a
// database owned by a user with a password, so a test connects with a URL as a user would.
// Built for speed, not durability: fsync, full-page writes and synchronous commit are off.
// The server programs are Debian's (`postgresql`, in /usr/lib/postgresql/<major>/bin, the newest
// major). PostgreSQL refuses to run as root: as root (CI) initdb and the server run as the
// `postgres` system user the package creates, and the folder is theirs.
// A server is stopped by stop(), else after the test file (cleanup.ts), else, if the test process
// dies first (killed too), by the kernel: it starts with SIGQUIT (immediate shutdown) as its
// parent-death signal, and its own processes end when it does (test/harness/lifetime.ts).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../nine-router/process.js';
import { stopAtFileEnd } from './lifetime.js';
import { missingMessage, postgresBinDir, postgresUser, SETPRIV, systemHas } from './requires.js';
import { scaled } from './time.js';

const run = promisify(execFile);

export interface RunningPostgres {
  /** postgres://USER:PASSWORD@127.0.0.1:PORT/DATABASE */
  url: string;
  user: string;
  password: string;
  database: string;
  host: '127.0.0.1';
  port: number;
  /** The postmaster's process id. */
  pid: number;
  /** The temporary folder: the cluster (`data/`), the socket (`socket/`) and the server's log. */
  dir: string;
  /**
   * Runs SQL as the superuser `postgres` over the unix socket (psql, stopping at the first error)
   * and returns what psql prints: rows unaligned, fields split by `|`, no header. Throws with
   * psql's message when a statement fails.
   */
  psql(sql: string, database?: string): Promise<string>;
  /** The server's log so far (its stderr). */
  log(): string;
  /** Fast shutdown (SIGINT), then the folder is removed. Safe to call twice. */
  stop(): Promise<void>;
}

const BIN = postgresBinDir();
const AS_ROOT = process.getuid?.() === 0;
const SYSTEM_USER = AS_ROOT ? postgresUser() : null;

/** What a test file that needs PostgreSQL prints once when it is skipped. */
export const POSTGRES_MISSING = missingMessage('postgresql', 'the tests against a real PostgreSQL server');

/**
 * Whether servers can be started here. In a test run, through systemHas(): missing, a developer's
 * run skips the files that need it and says how to install it, and CI=true fails them.
 */
export const HAS_POSTGRES = process.env.VITEST
  ? systemHas('postgresql', 'the tests against a real PostgreSQL server')
  : BIN !== null && (!AS_ROOT || (SYSTEM_USER !== null && SETPRIV !== undefined));

/** Speed over durability: a test's server never outlives its test file. */
const SETTINGS = {
  listen_addresses: '127.0.0.1',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  wal_level: 'minimal',
  max_wal_senders: '0',
  autovacuum: 'off',
  jit: 'off',
  shared_buffers: '32MB',
  max_connections: '50',
};

/**
 * The command line for a PostgreSQL program: as `postgres` when this process is root, and with
 * SIGQUIT as its parent-death signal if asked (without setpriv, as a non-root user: none).
 */
function asServerUser(program: string, args: string[], pdeathsig = false): [string, string[]] {
  const path = join(BIN!, program);
  if (!SETPRIV) return [path, args];
  const privileges = SYSTEM_USER
    ? [`--reuid=${SYSTEM_USER.uid}`, `--regid=${SYSTEM_USER.gid}`, '--init-groups']
    : [];
  const death = pdeathsig ? ['--pdeathsig=SIGQUIT'] : [];
  return [SETPRIV, [...privileges, ...death, '--', path, ...args]];
}

/** The environment of the PostgreSQL programs: none of the caller's PG* settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')));
}

/**
 * Runs `sql` with psql, connecting as `target` says (connection options, or a URL alone), and
 * returns what it prints (see RunningPostgres.psql). None of the caller's PG* settings apply.
 */
export async function runPsql(target: string[], sql: string): Promise<string> {
  if (!BIN) throw new Error(POSTGRES_MISSING);
  try {
    const { stdout } = await run(
      join(BIN, 'psql'),
      [
        ...target,
        '--no-psqlrc',
        '--quiet',
        '--tuples-only',
        '--no-align',
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        sql,
      ],
      {
        env: { ...cleanEnv(), PGCONNECT_TIMEOUT: '10' },
        timeout: scaled(30_000),
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return stdout.trimEnd();
  } catch (error) {
    const e = error as { stderr?: string; message?: string };
    throw new Error(`psql: ${(e.stderr || e.message || String(error)).trim()}`);
  }
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

export interface PostgresOptions {
  /** The user the URL names: not a superuser; owns the database and may create more. Default `ledger`. */
  user?: string;
  /** Its password. Default: random. */
  password?: string;
  /** The database the URL names. Default `ledger`. */
  database?: string;
}

/**
 * Starts a fresh server and returns once it accepts connections and the user and database exist.
 * Throws with the server's last log lines when it cannot start.
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<RunningPostgres> {
  if (!HAS_POSTGRES) throw new Error(POSTGRES_MISSING);
  const user = options.user ?? 'ledger';
  const password = options.password ?? `pw-${randomBytes(12).toString('hex')}`;
  const database = options.database ?? 'ledger';
  const dir = mkdtempSync(join(tmpdir(), 'gtm-postgres-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const logFile = join(dir, 'server.log');
  mkdirSync(socketDir, { mode: 0o700 });
  if (SYSTEM_USER) {
    for (const path of [dir, socketDir]) chownSync(path, SYSTEM_USER.uid, SYSTEM_USER.gid);
  }
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const logTail = () => log().trim().split('\n').slice(-5).join(' | ') || '(no log)';

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        // SIGINT is a fast shutdown: sessions are ended, no wait for clients to leave.
        for (const [signal, wait] of [
          ['SIGINT', scaled(10_000)],
          ['SIGQUIT', scaled(5_000)],
          ['SIGKILL', scaled(5_000)],
        ] as const) {
          child.kill(signal);
          const done = await Promise.race([exited.then(() => true), sleep(wait).then(() => false)]);
          if (done) break;
        }
      }
      rmSync(dir, { recursive: true, force: true });
      forget();
    })();
    return stopping;
  };
  const forget = stopAtFileEnd(stop);
  let port = 0;
  const psql = (sql: string, db = 'postgres') =>
    runPsql(['--host', socketDir, '--port', String(port), '--username', 'postgres', '--dbname', db], sql);
  try {
    const [initdb, initdbArgs] = asServerUser('initdb', [
      '--pgdata',
      data,
      '--username',
      'postgres',
      '--auth-local',
      'trust',
      '--auth-host',
      'scram-sha-256',
      '--encoding',
      'UTF8',
      '--locale',
      'C',
      '--no-sync',
      '--no-instructions',
    ]);
    try {
      await run(initdb, initdbArgs, { cwd: dir, env: cleanEnv(), timeout: scaled(60_000) });
    } catch (error) {
      const e = error as { stderr?: string; message?: string };
      throw new Error(`initdb failed: ${(e.stderr || e.message || String(error)).trim()}`);
    }
    // A port free a moment ago may be taken by the time the server binds it: then another one.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const settings = { ...SETTINGS, port: String(port), unix_socket_directories: socketDir };
      const [postgres, args] = asServerUser(
        'postgres',
        ['-D', data, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])],
        true,
      );
      const out = openSync(logFile, 'a');
      try {
        child = spawn(postgres, args, { cwd: dir, env: cleanEnv(), stdio: ['ignore', out, out] });
      } finally {
        closeSync(out);
      }
      const started = child;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      started.on('error', () => undefined);
      const ready = await untilReady(data, started);
      if (ready) break;
      if (attempt < 3 && /could not bind|Address already in use/.test(log())) continue;
      throw new Error(`PostgreSQL did not start: ${logTail()}`);
    }
    await psql(`CREATE ROLE ${quoteIdent(user)} LOGIN CREATEDB PASSWORD ${quoteLiteral(password)}`);
    await psql(`CREATE DATABASE ${quoteIdent(database)} OWNER ${quoteIdent(user)}`);
    const credentials = `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
    return {
      url: `postgres://${credentials}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
      user,
      password,
      database,
      host: '127.0.0.1',
      port,
      pid: child!.pid!,
      dir,
      psql,
      log,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits until the server accepts connections: postmaster.pid's status line says `ready` (as
 * pg_ctl reads it). False when the server exits first; throws after 30 s.
 */
async function untilReady(data: string, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + scaled(30_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    try {
      const lines = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n');
      if (lines[0] === String(child.pid) && lines[7]?.trim() === 'ready') return true;
    } catch {
      // Not written yet.
    }
    await sleep(20);
  }
  throw new Error('PostgreSQL did not accept connections within 30 s');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
