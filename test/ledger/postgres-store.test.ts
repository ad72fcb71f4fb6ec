// The PostgreSQL ledger store against a real PostgreSQL server (test/harness/postgres.ts starts
// one for this file; each test has a database of its own): begins of two pools, as of two hosts,
// take turns under a limit; every time is the database's clock; a lock another session holds makes
// a begin give up within its wait bound while the event loop runs on, and a transaction left idle
// (its process stopped) is ended by the database; a wrong password is said without the password;
// old calls are removed; an export comes in pages; a report on a ledger not made yet makes nothing.

import { type AddressInfo, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseLimits } from '../../src/config/limits.js';
import { type Database, LedgerUnavailable, type Statements } from '../../src/ledger/database.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { LEDGER_LOCK_KEY, lockKey, openPostgres } from '../../src/ledger/postgres.js';
import {
  type CallRow,
  endCall,
  exportPages,
  insertCall,
  jobStatuses,
  latestCalls,
  type NewCall,
  noteStatus,
  removeOld,
  tallies,
  usageRows,
} from '../../src/ledger/sql.js';
import type { Logger } from '../../src/lib/log.js';
import { HAS_POSTGRES, POSTGRES_MISSING, startPostgres } from '../harness/postgres.js';

const DAY = 86_400_000;
const WAIT_MS = 1_000;
/** What a wait bound may be overrun by on a loaded machine. */
const MARGIN_MS = 1_500;

type Server = Awaited<ReturnType<typeof startPostgres>>;

function limitsOf(text: string) {
  const parsed = parseLimits(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** Log lines a store wrote, to check that none carries the password. */
const logged: string[] = [];
const log: Logger = {
  level: 'debug',
  error: (m) => logged.push(m),
  warn: (m) => logged.push(m),
  info: (m) => logged.push(m),
  debug: (m) => logged.push(m),
};

describe.skipIf(!HAS_POSTGRES)(
  `the PostgreSQL ledger store${HAS_POSTGRES ? '' : ` (${POSTGRES_MISSING})`}`,
  () => {
    let server: Server;
    let databases = 0;
    const opened: { end(): Promise<void> }[] = [];

    beforeAll(async () => {
      server = await startPostgres();
    }, 120_000);

    afterEach(async () => {
      for (const one of opened.splice(0)) await one.end().catch(() => undefined);
    });

    afterAll(async () => {
      await server?.stop();
    });

    /** The URL of a new, empty database on the server. */
    async function freshDatabase(): Promise<string> {
      const name = `ledger_test_${process.pid}_${++databases}`;
      await withClient(server.url, (client) => client.query(`CREATE DATABASE ${name}`));
      const url = new URL(server.url);
      url.pathname = `/${name}`;
      return url.toString();
    }

    /** A store on `url`, closed after the test. */
    async function open(url: string, waitMs = WAIT_MS, readOnly = false): Promise<Database> {
      const store = await openPostgres({ url, waitMs, log, readOnly });
      opened.push({ end: () => store.close() });
      return store;
    }

    /** A plain connection of the test's own, closed after the test. */
    async function connect(url: string): Promise<pg.Client> {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      await client.connect();
      opened.push({ end: () => client.end() });
      return client;
    }

    let calls = 0;
    function newCall(kind: NewCall['kind'] = 'video', more: Partial<NewCall> = {}): NewCall {
      calls++;
      return {
        id: `call-${process.pid}-${calls}`,
        session: 'session-a',
        pid: process.pid,
        host: 'host-a',
        person: 'ana',
        client: null,
        kind,
        tool: 'video_submit',
        model: 'sora-2',
        hash: `hash-${calls}`,
        words: 'a cat on a skateboard',
        key: null,
        expected: 4,
        ...more,
      };
    }

    /** The rule under test: at most three counted video calls begun within the last day. */
    async function atMostThreeVideosADay(tx: Statements): Promise<boolean> {
      const now = await tx.now();
      const [[video] = []] = await tallies(tx, [{ since: now - DAY, kind: 'video' }]);
      // Long enough for the other store's begin to slip in, were begins not taking turns.
      await sleep(5);
      if ((video?.calls ?? 0) >= 3) return false;
      await insertCall(tx, newCall());
      return true;
    }

    /** The database's clock, read on a connection of the test's own. */
    async function databaseNow(client: pg.Client): Promise<number> {
      const { rows } = await client.query(
        'SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now',
      );
      return Number(rows[0].now);
    }

    it('lets two stores (two hosts) racing ten begins each record exactly three calls under a limit of three', async () => {
      const url = await freshDatabase();
      const [hostA, hostB] = [await open(url, 20_000), await open(url, 20_000)];
      const race = (store: Database) =>
        Array.from({ length: 10 }, () => store.transaction(atMostThreeVideosADay));
      const outcomes = await Promise.all([...race(hostA), ...race(hostB)]);
      expect(outcomes.filter(Boolean)).toHaveLength(3);
      expect(await latestCalls(hostA, 100)).toHaveLength(3);
      const [[tally] = []] = await tallies(hostB, [{ kind: 'video' }]);
      expect(tally).toMatchObject({ kind: 'video', model: 'sora-2', calls: 3, amount: 12, unmeasured: 0 });
    });

    it("times every call by the database's clock, never the process's", async () => {
      const url = await freshDatabase();
      const store = await open(url);
      const client = await connect(url);
      expect(Math.abs((await store.now()) - Date.now())).toBeLessThan(1_000);
      // A process clock far off changes nothing the store records.
      const off = vi.spyOn(Date, 'now').mockReturnValue(1_000);
      try {
        const before = await databaseNow(client);
        const call = newCall();
        const seq = await store.transaction((tx) => insertCall(tx, call));
        await endCall(store, seq, {
          outcome: 'accepted',
          job: 'job-1',
          amount: 4,
          reason: null,
          status: 'queued',
          file: null,
        });
        await noteStatus(store, 'job-1', 'completed');
        const after = await databaseNow(client);
        const [row] = await latestCalls(store, 1);
        expect(row).toMatchObject({ id: call.id, outcome: 'accepted', job: 'job-1', amount: 4 });
        const began = row?.beganAt ?? 0;
        expect(began).toBeGreaterThanOrEqual(before);
        expect(began).toBeLessThanOrEqual(after);
        expect(row?.endedAt).toBeGreaterThanOrEqual(began);
        expect(row?.endedAt).toBeLessThanOrEqual(after);
        const status = (await jobStatuses(store, ['job-1', 'job-unknown'])).get('job-1');
        expect(status?.status).toBe('completed');
        expect(status?.at).toBeGreaterThanOrEqual(began);
        expect(status?.at).toBeLessThanOrEqual(after);
      } finally {
        off.mockRestore();
      }
    });

    it("runs a scope's transactions apart from that scope's alone: another scope, or none, goes on beside it", async () => {
      const url = await freshDatabase();
      const store = await open(url);
      const holder = await connect(url);
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(${lockKey('call a')})`);
      const outcome = (scope?: string) =>
        store
          .transaction((tx) => insertCall(tx, newCall()), scope)
          .then(
            () => 'recorded',
            (error: Error) => error.message,
          );
      try {
        expect(await outcome('call b')).toBe('recorded');
        expect(await outcome()).toBe('recorded');
        expect(await outcome('call a')).toMatch(/^The ledger of billed calls \(postgres:\/\/[^)]*\) is busy/);
      } finally {
        await holder.query('ROLLBACK');
      }
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY})`);
      try {
        expect(await outcome('call a')).toBe('recorded');
        expect(await outcome()).toMatch(/is busy/);
      } finally {
        await holder.query('ROLLBACK');
      }
      expect(await latestCalls(store, 10)).toHaveLength(3);
    });

    it('begins a call no limit counts beside a held limit; one a limit counts waits for it', async () => {
      const url = await freshDatabase();
      const holder = await connect(url);
      const begin = async (limits: string, kind: 'search' | 'video') => {
        const ledger = Ledger.open({
          dir: '/nonexistent',
          url,
          log,
          waitMs: WAIT_MS,
          limits: limitsOf(limits),
        });
        opened.push({ end: () => ledger.close() });
        const call = { kind, by: { id: 'ana' }, tool: kind, model: 'm', text: `${kind} ${++calls}` };
        return ledger.begin(call).then(
          (result) => result.status,
          (error: Error) => error.message,
        );
      };
      expect(await begin('video=3/day', 'search')).toBe('go'); // the tables made before the lock is held
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY})`);
      try {
        expect(await begin('video=3/day', 'search')).toBe('go');
        expect(await begin('video=3/day', 'video')).toMatch(/is busy/);
        expect(await begin('cost=5/day', 'search')).toMatch(/is busy/);
      } finally {
        await holder.query('ROLLBACK');
      }
    });

    it('gives up on a lock another session holds within the wait bound, the event loop running on', async () => {
      const url = await freshDatabase();
      const store = await open(url);
      const holder = await connect(url);
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(${LEDGER_LOCK_KEY})`);
      let ticks = 0;
      const ticking = setInterval(() => ticks++, 10);
      let worked = false;
      const started = performance.now();
      try {
        // The work's statements wait behind the lock: none of them runs, and nothing is recorded.
        const refused = await store
          .transaction(async (tx) => {
            await insertCall(tx, newCall());
            worked = true;
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        const waited = performance.now() - started;
        expect(refused).toBeInstanceOf(LedgerUnavailable);
        expect((refused as Error).message).toMatch(
          /^The ledger of billed calls \(postgres:\/\/[^)]*\) is busy/,
        );
        expect(worked).toBe(false);
        expect(waited).toBeGreaterThanOrEqual(WAIT_MS - 100);
        expect(waited).toBeLessThan(WAIT_MS + MARGIN_MS);
        // A timer every 10 ms ran most of the times it could: nothing waited on the event loop.
        expect(ticks).toBeGreaterThanOrEqual(Math.floor(waited / 10 / 2));
      } finally {
        clearInterval(ticking);
      }
      await holder.query('ROLLBACK');
      await store.transaction((tx) => insertCall(tx, newCall()));
      expect(await latestCalls(store, 10)).toHaveLength(1);
    });

    it('is not blocked for long by a process that stopped while holding the lock: the database ends its transaction', async () => {
      const url = await freshDatabase();
      const [stopped, other] = [await open(url, 20_000), await open(url, 20_000)];
      const stoppedId = newCall().id;
      let holding!: () => void;
      const heldNow = new Promise<void>((resolve) => {
        holding = resolve;
      });
      // The stopped process: it holds the lock and does nothing more for 8 s.
      const stalled = stopped
        .transaction(async (tx) => {
          await tx.now(); // the lock is held
          holding();
          await sleep(8_000);
          await insertCall(tx, { ...newCall(), id: stoppedId });
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      await heldNow;
      const started = performance.now();
      await other.transaction((tx) => insertCall(tx, newCall()));
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThan(3_000);
      expect(waited).toBeLessThan(5_000 + MARGIN_MS);
      const error = await stalled;
      expect(error).toBeInstanceOf(LedgerUnavailable);
      expect((error as Error).message).toMatch(/^The ledger of billed calls .*stood idle too long/);
      expect((await latestCalls(other, 10)).map((row) => row.id)).not.toContain(stoppedId);
      await stopped.transaction((tx) => insertCall(tx, newCall()));
      expect(await latestCalls(stopped, 10)).toHaveLength(2);
    }, 30_000);

    it('says a wrong password without the password, nor the one in the URL', async () => {
      const url = new URL(server.url);
      url.password = 'not-the-password-42';
      const error = await openPostgres({ url: url.toString(), waitMs: WAIT_MS, log }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LedgerUnavailable);
      const message = (error as Error).message;
      expect(message).toContain('refused the password');
      expect(message).toContain('GATEWAY_LEDGER_URL');
      expect(message).toContain('//***@');
      expect(message).not.toContain('not-the-password-42');
      expect(message).not.toContain(server.password);
      expect(logged.join('\n')).not.toContain(server.password);
    });

    it('says a server that is not running, and which URL it tried, without the password', async () => {
      const url = new URL(server.url);
      url.port = '1';
      const error = await openPostgres({ url: url.toString(), waitMs: WAIT_MS, log }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LedgerUnavailable);
      expect((error as Error).message).toMatch(/cannot be reached .*GATEWAY_LEDGER_URL/);
      expect((error as Error).message).toContain(':1/');
      expect((error as Error).message).not.toContain(server.password);
    });

    it('gives up on a server that takes the connection and never answers, within the wait bound', async () => {
      const sockets: Socket[] = [];
      const silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const started = performance.now();
      try {
        const url = new URL(server.url);
        url.host = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
        const error = await openPostgres({ url: url.toString(), waitMs: WAIT_MS, log }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(LedgerUnavailable);
        expect((error as Error).message).toMatch(/is busy or not answering: .*GATEWAY_LEDGER_URL/);
        expect((error as Error).message).not.toContain(server.password);
        expect(performance.now() - started).toBeLessThan(WAIT_MS + MARGIN_MS);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });

    it('outlives a connection the database ends while idle: logged, and the next query opens another', async () => {
      const url = await freshDatabase();
      const store = await open(url);
      await store.transaction((tx) => insertCall(tx, newCall()));
      const admin = await connect(url);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'gateway-tools-mcp' AND datname = current_database()`,
      );
      await sleep(200);
      expect(logged.some((line) => line.includes('failed while idle'))).toBe(true);
      expect(await latestCalls(store, 10)).toHaveLength(1);
    });

    it('removes calls and job statuses older than the retention by the database clock, but not the calls recorded last', async () => {
      const url = await freshDatabase();
      const store = await open(url);
      const ids = [newCall().id, newCall().id, newCall().id];
      for (const id of ids) await store.transaction((tx) => insertCall(tx, { ...newCall(), id }));
      await noteStatus(store, 'job-old', 'completed');
      await noteStatus(store, 'job-new', 'queued');
      const admin = await connect(url);
      await admin.query('UPDATE gateway_ledger_calls SET began_at = began_at - $1 WHERE id = ANY($2)', [
        31 * DAY,
        ids.slice(0, 2),
      ]);
      await admin.query(`UPDATE gateway_ledger_job_status SET at = at - $1 WHERE job = 'job-old'`, [
        31 * DAY,
      ]);
      // The calls recorded last are kept whatever their times.
      expect(await removeOld(store, 30 * DAY, 3)).toBe(0);
      expect(await latestCalls(store, 10)).toHaveLength(3);
      expect(await removeOld(store, 30 * DAY, 1)).toBe(2);
      expect((await latestCalls(store, 10)).map((row) => row.id)).toEqual([ids[2]]);
      expect([...(await jobStatuses(store, ['job-old', 'job-new'])).keys()]).toEqual(['job-new']);
      expect(await removeOld(store, 30 * DAY, 1)).toBe(0);
    });

    it('exports the calls begun at or after a time, oldest first, in pages', async () => {
      const url = await freshDatabase();
      const store = await open(url);
      const admin = await connect(url);
      // 2,500 calls, the first 100 of them two days old.
      await admin.query(
        `INSERT INTO gateway_ledger_calls (id, began_at, session, pid, host, person, kind, tool, model, hash, words)
       SELECT 'bulk-' || n, (extract(epoch from clock_timestamp()) * 1000)::bigint - CASE WHEN n <= 100 THEN $1::bigint ELSE 0 END,
         's', 1, 'h', 'p', 'chat', 'chat', 'm', 'h' || n, 'w' FROM generate_series(1, 2500) AS n`,
        [2 * DAY],
      );
      const now = await store.now();
      const pages: CallRow[][] = [];
      await exportPages(store, Number.NEGATIVE_INFINITY, null, (rows) => {
        pages.push(rows);
      });
      expect(pages.map((rows) => rows.length)).toEqual([1000, 1000, 500]);
      expect(pages.flat().map((row) => row.id)).toEqual(
        Array.from({ length: 2500 }, (_, i) => `bulk-${i + 1}`),
      );
      let sinceADay = 0;
      await exportPages(store, now - DAY, null, (rows) => {
        sinceADay += rows.length;
      });
      expect(sinceADay).toBe(2400);
      // The time given is included.
      const firstRecent = pages.flat()[100] as CallRow;
      const fromIt: string[] = [];
      await exportPages(store, firstRecent.beganAt, null, (rows) => {
        fromIt.push(...rows.map((row) => row.id));
      });
      expect(fromIt[0]).toBe('bulk-101');
      expect(fromIt).toHaveLength(2400);
    });

    it('closes once the operations under way have finished', async () => {
      const store = await openPostgres({ url: await freshDatabase(), waitMs: WAIT_MS, log });
      const begun = store.transaction((tx) => insertCall(tx, newCall()));
      const removed = removeOld(store, DAY, 10_000);
      // One that starts as another ends, as a sweep after a begin does.
      const latest = begun.then(() => latestCalls(store, 10));
      await store.close();
      await begun;
      expect(await removed).toBe(0);
      expect(await latest).toHaveLength(1);
    });

    it('reads a ledger not made yet as empty when only reporting, and makes nothing', async () => {
      const url = await freshDatabase();
      const reader = await open(url, WAIT_MS, true);
      expect(await latestCalls(reader, 10)).toEqual([]);
      expect(await usageRows(reader, await reader.now(), 'session-a', null)).toEqual([]);
      const admin = await connect(url);
      const { rows } = await admin.query(`SELECT to_regclass('gateway_ledger_calls') IS NULL AS missing`);
      expect(rows[0].missing).toBe(true);
    });
  },
);

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
