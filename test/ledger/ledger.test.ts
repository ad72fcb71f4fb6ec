// The ledger of billed calls through its API, on a real store: what a call records (and that the
// prompt is never kept), the duplicate guard, calls of a process that is gone, the reports
// (usage, recent jobs, export) and ending a call, which never throws. Each runs on SQLite and, when
// it is installed, PostgreSQL; what needs a moved clock (a window passing, the pending bound, the
// hour apart from the day) runs on SQLite alone. Limits, costs and retention are in
// ledger-limits.test.ts; the SQLite file's place, damage and locks in ledger-place.test.ts.

import { readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callHash } from '../../src/ledger/fingerprint.js';
import type { LedgerCall } from '../../src/ledger/ledger.js';
import { duplicateOf } from '../../src/ledger/sql.js';
import { processAlive, tempDir } from '../harness/harness.js';
import {
  beginInProcessThatExits,
  chat,
  DAY,
  exported,
  go,
  HOUR,
  SQLITE,
  START,
  setup,
  speech,
  sqliteRows,
  useStores,
  VIDEO_MODEL,
  video,
} from './ledger-fixture.js';

const stores = useStores();

const PROMPT =
  'a red fox running through snow at dawn, then the camera rises above the pines sk-secret-in-prompt';

describe('a call’s hash', () => {
  it('is the same for the same purchase whatever the order of its options, and tells others apart', () => {
    const a = callHash({ tool: 't', model: 'm', text: 'x', options: { voice: 'alloy', format: 'mp3' } });
    expect(callHash({ tool: 't', model: 'm', text: 'x', options: { format: 'mp3', voice: 'alloy' } })).toBe(
      a,
    );
    expect(
      callHash({ tool: 't', model: 'm', text: 'x', options: { format: 'wav', voice: 'alloy' } }),
    ).not.toBe(a);
    expect(
      callHash({ tool: 't', model: 'm2', text: 'x', options: { format: 'mp3', voice: 'alloy' } }),
    ).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe.each(stores)('the ledger on $name', (store) => {
  describe('a call’s record', () => {
    it('is kept before the call goes, with the first words and a hash, never the prompt', async () => {
      const { ledger, open, place, now } = await setup(store);
      const result = await ledger.begin(video(PROMPT, { idempotencyKey: 'gtm-key-1' }));
      const hash = callHash(video(PROMPT));
      expect(result).toEqual({ status: 'go', id: expect.any(String), hash, crossed: [] });
      if (result.status !== 'go') return;

      // Read by another process's ledger: committed, not only in this one's memory.
      const [begun, ...others] = await exported(open());
      expect(others).toEqual([]);
      expect(begun).toEqual({
        id: result.id,
        at: expect.any(String),
        person: 'ana',
        client: 'cli-a',
        kind: 'video',
        tool: 'video_generate',
        model: VIDEO_MODEL,
        words: 'a red fox running through snow at dawn,…',
        hash,
        state: 'pending',
        jobId: null,
        idempotencyKey: 'gtm-key-1',
        amount: 6,
        unit: 'seconds',
        cost: null,
        file: null,
        reason: null,
        endedAt: null,
        pid: process.pid,
        thisSession: false,
      });
      expect(Math.abs(Date.parse(begun?.at ?? '') - now())).toBeLessThan(5_000);
      const kept = await store.contents(place);
      expect(kept).toContain('a red fox running through snow at dawn');
      expect(kept).toContain(hash);
      expect(kept).not.toContain('camera rises');
      expect(kept).not.toContain('sk-secret');
      if (place.url) expect(readdirSync(place.dir)).toEqual([]); // PostgreSQL: nothing in the folder

      await ledger.end(result.id, { outcome: 'accepted', jobId: 'vj_abc', amount: 6, status: 'queued' });
      expect((await exported(ledger))[0]).toMatchObject({
        id: result.id,
        state: 'accepted',
        jobId: 'vj_abc',
        amount: 6,
        endedAt: expect.any(String),
      });
      expect(await store.contents(place)).not.toContain('sk-secret');
    });

    it('keeps what the end says, and leaves out what cannot be kept', async () => {
      const { ledger, open, warnings } = await setup(store);
      const id = await go(ledger, speech('hello there', { expected: 11 }));
      await ledger.end(id, {
        outcome: 'accepted',
        jobId: 'j'.repeat(2049),
        amount: Number.NaN,
        reason: 'r'.repeat(300),
        file: `/out/${'f'.repeat(1100)}.mp3`,
      });
      expect(warnings).toEqual([
        `ledger: job id of call ${id} is too long to record; it is listed without it`,
      ]);
      const [call] = await exported(open());
      expect(call).toMatchObject({
        state: 'accepted',
        jobId: null,
        amount: 11, // none reported that is a number: the amount expected
        reason: 'r'.repeat(200),
        file: null,
        thisSession: false,
      });
      const second = await go(ledger, speech('and again'));
      await ledger.end(second, { outcome: 'accepted', amount: 2000, file: '/out/speech.mp3', jobId: 'sp_1' });
      expect((await exported(ledger))[1]).toMatchObject({
        amount: 2000,
        file: '/out/speech.mp3',
        jobId: 'sp_1',
      });
    });
  });

  describe('the duplicate guard', () => {
    it('answers an identical call with the earlier accepted one; another option or allow_duplicate is a new purchase', async () => {
      const { ledger } = await setup(store, { duplicateWindowSeconds: 600 });
      const first = await go(ledger, video());
      await ledger.end(first, { outcome: 'accepted', jobId: 'vj_first' });
      expect(await ledger.begin(video())).toEqual({
        status: 'duplicate',
        earlier: expect.objectContaining({
          id: first,
          state: 'accepted',
          jobId: 'vj_first',
          words: 'a red fox running through snow at dawn',
        }),
      });
      expect((await ledger.begin(video(undefined, { options: { duration: 8 } }))).status).toBe('go');
      const forced = await ledger.begin(video(undefined, { allowDuplicate: true }));
      expect(forced.status).toBe('go');
      // The newest identical call answers: the forced one, still being sent.
      expect(await ledger.begin(video())).toMatchObject({
        status: 'duplicate',
        earlier: { id: forced.status === 'go' ? forced.id : '', state: 'pending' },
      });
      // A duplicate records nothing.
      expect((await exported(ledger)).map((c) => c.state)).toEqual(['accepted', 'pending', 'pending']);
    });

    it('finds an identical call another process is sending, or whose outcome is unknown, but not one refused', async () => {
      const { ledger, open } = await setup(store);
      const other = open();
      const pending = await go(other, video(undefined, { idempotencyKey: 'gtm-other' }));
      expect(await ledger.begin(video())).toMatchObject({
        status: 'duplicate',
        earlier: { id: pending, state: 'pending', thisSession: false, idempotencyKey: 'gtm-other' },
      });
      await other.end(pending, { outcome: 'unknown' });
      expect(await ledger.begin(video(undefined, { idempotencyKey: 'gtm-mine' }))).toMatchObject({
        status: 'duplicate',
        earlier: { id: pending, state: 'unknown' },
      });
      const refused = await go(other, chat('refused by the gateway'));
      await other.end(refused, { outcome: 'refused', reason: 'HTTP 400' });
      const declined = await go(other, chat('declined by the user'));
      await other.end(declined, { outcome: 'declined' });
      expect((await ledger.begin(chat('refused by the gateway'))).status).toBe('go');
      expect((await ledger.begin(chat('declined by the user'))).status).toBe('go');
    });

    it('lets the retry of an unknown outcome through with its own idempotency key', async () => {
      const { ledger } = await setup(store);
      const id = await go(ledger, video(undefined, { idempotencyKey: 'gtm-1' }));
      await ledger.end(id, { outcome: 'unknown' });
      expect((await ledger.begin(video(undefined, { idempotencyKey: 'gtm-2' }))).status).toBe('duplicate');
      expect((await ledger.begin(video(undefined, { idempotencyKey: 'gtm-1' }))).status).toBe('go');
    });

    it('is off with a window of 0', async () => {
      const { ledger } = await setup(store, { duplicateWindowSeconds: 0 });
      await ledger.end(await go(ledger, video()), { outcome: 'accepted', jobId: 'vj_1' });
      expect((await ledger.begin(video())).status).toBe('go');
    });
  });

  describe('a call whose process is gone', () => {
    it('reads as unknown, still counts, and is listed with the key to retry it with', async () => {
      const s = await setup(store, { limits: 'video=2/day' });
      const { ledger, open } = s;
      const gone = await beginInProcessThatExits(
        s,
        store,
        video('a lighthouse in a storm', { idempotencyKey: 'gtm-gone' }),
      );
      expect(gone).toMatchObject({ status: 'go', id: expect.any(String) });
      expect(processAlive(gone.pid)).toBe(false);
      const live = await go(open(), video('a kite over the hills')); // another process, still sending

      expect((await ledger.recentJobs()).map((j) => [j.words, j.state, j.idempotencyKey])).toEqual([
        ['a kite over the hills', 'pending', null],
        ['a lighthouse in a storm', 'unknown', 'gtm-gone'],
      ]);
      const usage = await ledger.usage();
      expect(usage.periods.day).toMatchObject({ kinds: { video: { calls: 2 } }, unknown: 1 });
      expect(usage.latest.map((c) => [c.id, c.state, c.pid])).toEqual([
        [live, 'pending', process.pid],
        [gone.id, 'unknown', gone.pid],
      ]);
      expect(await ledger.begin(video('a third'))).toMatchObject({ status: 'limited', refusal: { used: 2 } });
    });
  });

  describe('reports', () => {
    it('list the recent video jobs of every process, newest first, with their last status', async () => {
      const { ledger: first, open, later, now } = await setup(store);
      const a = await go(first, video('the first', { idempotencyKey: 'k-a' }));
      await first.end(a, { outcome: 'accepted', jobId: 'vj_a', status: 'queued' });
      await first.end(await go(first, video('refused one')), { outcome: 'refused' });
      await later(3 * DAY);
      await first.noteJobStatus('vj_a', 'completed');
      const notedAt = now();
      const b = await go(first, video('the unknown one', { idempotencyKey: 'k-b' }));
      await first.end(b, { outcome: 'unknown' });
      await later(DAY);
      const second = open();
      const c = await go(second, video('today', { idempotencyKey: 'k-c' }));
      const [cAt, bAt, , aAt] = (await exported(second)).reverse().map((call) => call.at);

      const jobs = await second.recentJobs();
      expect(jobs).toEqual([
        {
          jobId: null,
          words: 'today',
          model: VIDEO_MODEL,
          tool: 'video_generate',
          at: cAt,
          state: 'pending',
          status: null,
          statusAt: null,
          idempotencyKey: 'k-c',
          thisSession: true,
        },
        expect.objectContaining({
          words: 'the unknown one',
          at: bAt,
          state: 'unknown',
          idempotencyKey: 'k-b',
          jobId: null,
          thisSession: false,
        }),
        expect.objectContaining({
          words: 'the first',
          at: aAt,
          state: 'accepted',
          jobId: 'vj_a',
          status: 'completed',
          idempotencyKey: null,
        }),
      ]);
      expect(Math.abs(Date.parse(jobs[2]?.statusAt ?? '') - notedAt)).toBeLessThan(5_000);
      expect(await second.recentJobs(2)).toHaveLength(2);
      await second.end(c, { outcome: 'accepted', jobId: 'vj_c' });
      expect((await second.recentJobs(1))[0]).toMatchObject({ jobId: 'vj_c', state: 'accepted' });
    });

    it('count calls per kind and period, the limits and what is left, estimated costs and the latest calls', async () => {
      const { ledger, open, later, place } = await setup(store, {
        limits: 'video=5/day,speech=3/hour,cost=10/day',
        prices: 'xai/grok-imagine-video=0.05/second,openai/tts-1=0.015/1k-chars',
      });
      const other = open();
      await other.end(await go(other, video('other process')), {
        outcome: 'accepted',
        jobId: 'vj_o',
        amount: 6,
      });
      await later();
      await ledger.end(await go(ledger, video('mine')), { outcome: 'accepted', jobId: 'vj_m', amount: 10 });
      await later();
      await ledger.end(await go(ledger, speech('hello there', { expected: 11 })), {
        outcome: 'accepted',
        amount: 2000,
        file: '/out/speech.mp3',
      });
      await later();
      await ledger.end(await go(ledger, chat('unpriced')), { outcome: 'accepted', amount: 500 });
      await later();
      await ledger.end(await go(ledger, chat('refused')), { outcome: 'refused' });

      const usage = await ledger.usage(3);
      expect(usage.dir).toBe(store.where(place));
      expect(usage.session.id).toBe(ledger.sessionId);
      for (const period of ['hour', 'day'] as const) {
        expect(usage.periods[period].kinds).toMatchObject({
          video: { calls: 2, amount: 16, unit: 'seconds' },
          speech: { calls: 1, amount: 2000, unit: 'chars' },
          chat: { calls: 1, amount: 500, unit: 'tokens' },
          search: { calls: 0, amount: 0, unit: 'calls' },
        });
        expect(usage.periods[period].cost).toBeCloseTo(0.3 + 0.5 + 0.03);
        expect(usage.periods[period]).toMatchObject({ unpriced: 1, notBilled: 1, unknown: 0 });
      }
      expect(usage.periods.session.kinds.video).toEqual({ calls: 1, amount: 10, unit: 'seconds' });
      expect(usage.limits).toEqual([
        {
          limit: 'video=5/day',
          subject: 'video',
          period: 'day',
          max: 5,
          perUser: false,
          used: 2,
          left: 3,
          unpriced: 0,
          usedUp: false,
          nextAt: null,
        },
        {
          limit: 'speech=3/hour',
          subject: 'speech',
          period: 'hour',
          max: 3,
          perUser: false,
          used: 1,
          left: 2,
          unpriced: 0,
          usedUp: false,
          nextAt: null,
        },
        {
          limit: 'cost=10/day',
          subject: 'cost',
          period: 'day',
          max: 10,
          perUser: false,
          used: expect.closeTo(0.83),
          left: expect.closeTo(9.17),
          unpriced: 1,
          usedUp: false,
          nextAt: null,
        },
      ]);
      expect(usage.latest.map((c) => [c.words, c.state])).toEqual([
        ['refused', 'refused'],
        ['unpriced', 'accepted'],
        ['hello there', 'accepted'],
      ]);
      expect(usage.latest[2]).toMatchObject({
        file: '/out/speech.mp3',
        cost: expect.closeTo(0.03),
        thisSession: true,
      });
    });

    it('have no costs without prices', async () => {
      const { ledger } = await setup(store);
      await go(ledger, chat('x'));
      expect((await ledger.usage()).periods.day).toMatchObject({ cost: null, kinds: { chat: { calls: 1 } } });
    });

    it('export every call oldest first with its state, and `since` leaves out those begun before it', async () => {
      const { ledger, open, later } = await setup(store, { limits: 'video=0/day' });
      const other = open();
      const one = await go(ledger, chat('one'));
      await ledger.end(one, { outcome: 'accepted', amount: 5 });
      await later();
      const two = await go(other, chat('two'));
      await later();
      await ledger.end(await go(ledger, chat('three')), { outcome: 'refused', reason: 'HTTP 400' });
      await later();
      expect((await ledger.begin(video('four'))).status).toBe('limited');

      const pages: LedgerCall[][] = [];
      await ledger.exportCalls(0, (page) => {
        pages.push(page);
      });
      const all = pages.flat();
      expect(all.map((c) => [c.words, c.state, c.thisSession])).toEqual([
        ['one', 'accepted', true],
        ['two', 'pending', false],
        ['three', 'refused', true],
        ['four', 'declined', true],
      ]);
      expect(all.slice(0, 2).map((c) => c.id)).toEqual([one, two]);
      expect(all[3]?.reason).toBe('limit video=0/day');
      const times = all.map((c) => Date.parse(c.at));
      expect(times).toEqual([...times].sort((x, y) => x - y));
      // From a time on, that time included.
      expect(await exported(ledger, Date.parse(all[1]?.at ?? ''))).toEqual(all.slice(1));
      expect(await exported(ledger, Date.parse(all[3]?.at ?? ''))).toEqual(all.slice(3));
      expect(await exported(ledger, Date.parse(all[3]?.at ?? '') + 1)).toEqual([]);
    });
  });

  describe('a ledger opened only to report (Ledger.read)', () => {
    it('reads a ledger not made yet as one without calls, and makes nothing', async () => {
      const { read, place } = await setup(store, { limits: 'video=1/day' });
      const reader = read();
      expect((await reader.usage()).periods.day.kinds.video.calls).toBe(0);
      expect((await reader.usage()).limits).toEqual([expect.objectContaining({ used: 0, left: 1 })]);
      expect(await exported(reader)).toEqual([]);
      expect(await store.contents(place)).toBe('');
      expect(readdirSync(place.dir)).toEqual([]);
    });

    it('reads the calls as they stand, and records nothing', async () => {
      const { ledger, read } = await setup(store, { limits: 'video=1/day' });
      await go(ledger, video());
      const reader = read();
      expect((await reader.usage()).periods.day.kinds.video.calls).toBe(1);
      expect((await reader.usage()).limits).toEqual([
        expect.objectContaining({ used: 1, left: 0, usedUp: true }),
      ]);
      expect((await exported(reader)).map((c) => c.state)).toEqual(['pending']);
      expect(await exported(ledger)).toHaveLength(1);
    });
  });

  describe('a transaction of its store', () => {
    it('commits only if every statement succeeded, those its work did not wait for too', async () => {
      const { ledger } = await setup(store);
      const db = await ledger.database();
      const failed = await db
        .transaction(async (tx) => {
          // Neither is awaited: a PostgreSQL connection sends the commit right behind them.
          void tx.run(
            `INSERT INTO gateway_ledger_job_status (job, status, at) VALUES ('vj_kept', 'queued', 1)`,
          );
          void tx.run('INSERT INTO no_such_table VALUES (1)');
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failed).toBeInstanceOf(Error);
      expect(await db.query(`SELECT job FROM gateway_ledger_job_status`)).toEqual([]);
      // The store goes on: the next transaction commits.
      await db.transaction(async (tx) => {
        void tx.run(
          `INSERT INTO gateway_ledger_job_status (job, status, at) VALUES ('vj_next', 'queued', 1)`,
        );
      });
      expect(await db.query(`SELECT job FROM gateway_ledger_job_status`)).toEqual([{ job: 'vj_next' }]);
    });
  });

  describe('ending a call', () => {
    it('never throws: not for a call it does not know, nor once the ledger is closed', async () => {
      const { ledger, open, warnings } = await setup(store, { limits: 'video=1/day' });
      await expect(ledger.end('no-such-call', { outcome: 'accepted' })).resolves.toBeUndefined();
      const id = await go(ledger, video());
      await ledger.close();
      await expect(
        ledger.end(id, { outcome: 'accepted', jobId: 'vj_1', amount: 6 }),
      ).resolves.toBeUndefined();
      await expect(ledger.noteJobStatus('vj_1', 'completed')).resolves.toBeUndefined();
      expect(warnings).toContainEqual(
        expect.stringMatching(
          new RegExp(`^ledger: could not record the end of call ${id} \\(.+\\); it is listed as unknown$`),
        ),
      );
      expect(warnings).toContainEqual(
        expect.stringMatching(/^ledger: could not record the status of job vj_1 \(.+\)$/),
      );
      // Its begin stands, not ended: it may have been billed, so it counts.
      const next = open();
      expect((await exported(next)).map((c) => [c.id, c.endedAt])).toEqual([[id, null]]);
      expect((await next.begin(video('another'))).status).toBe('limited');
    });
  });
});

describe('the ledger on SQLite, as its clock moves', () => {
  it('keeps each call as a row of ledger.sqlite, with its times, process and session', async () => {
    const { ledger, place, clock } = await setup(SQLITE);
    const result = await ledger.begin(video(PROMPT, { idempotencyKey: 'gtm-key-1' }));
    if (result.status !== 'go') throw new Error(result.status);
    const row = {
      seq: 1,
      id: result.id,
      began_at: START,
      session: ledger.sessionId,
      pid: process.pid,
      host: hostname().slice(0, 255),
      person: 'ana',
      client: 'cli-a',
      kind: 'video',
      tool: 'video_generate',
      model: VIDEO_MODEL,
      hash: result.hash,
      words: 'a red fox running through snow at dawn,…',
      key: 'gtm-key-1',
      expected: 6,
      outcome: null,
      ended_at: null,
      job: null,
      amount: null,
      reason: null,
      status: null,
      file: null,
    };
    expect(sqliteRows(place.dir)).toEqual([row]);
    clock.now += 90_000;
    await ledger.end(result.id, { outcome: 'accepted', jobId: 'vj_abc', amount: 6, status: 'queued' });
    expect(sqliteRows(place.dir)).toEqual([
      { ...row, outcome: 'accepted', ended_at: START + 90_000, job: 'vj_abc', amount: 6, status: 'queued' },
    ]);
  });

  it('looks a duplicate up by its hash, not among every call of its person in the window', async () => {
    const { ledger } = await setup(SQLITE);
    await go(ledger, video());
    const db = await ledger.database();
    // The statement's plan, as SQLite chooses it on a young ledger (no statistics yet).
    const explained = {
      ...db,
      query: (sql: string, params?: Record<string, string | number | null>) =>
        db.query(`EXPLAIN QUERY PLAN ${sql}`, params),
    };
    const plan = (await duplicateOf(explained, callHash(video()), 600_000, null, 'ana')) as unknown as {
      detail: string;
    };
    expect(plan.detail).toMatch(/^SEARCH gateway_ledger_calls USING INDEX gateway_ledger_calls_hash \(/);
  });

  it('forgets an identical call once it is older than the duplicate window', async () => {
    const { ledger, clock } = await setup(SQLITE, { duplicateWindowSeconds: 600 });
    await ledger.end(await go(ledger, video()), { outcome: 'accepted', jobId: 'vj_first' });
    clock.now += 300_000;
    expect((await ledger.begin(video())).status).toBe('duplicate');
    const forced = await go(ledger, video(undefined, { allowDuplicate: true }));
    clock.now += 300_001; // the first is out of the window; the forced one, still being sent, is in it
    expect(await ledger.begin(video())).toMatchObject({ status: 'duplicate', earlier: { id: forced } });
    clock.now += 300_000;
    expect((await ledger.begin(video())).status).toBe('go');
  });

  it('reads a call not ended within the pending bound as unknown, though its process lives', async () => {
    const { ledger, open, clock } = await setup(SQLITE, { pendingBoundMs: 2 * HOUR, limits: 'video=1/day' });
    const id = await go(open(), video());
    clock.now += 2 * HOUR;
    expect((await ledger.recentJobs())[0]).toMatchObject({ state: 'pending' });
    expect((await ledger.usage()).periods.day.unknown).toBe(0);
    clock.now += 1;
    expect(await exported(ledger)).toMatchObject([{ id, state: 'unknown' }]);
    expect((await ledger.recentJobs())[0]).toMatchObject({ state: 'unknown', idempotencyKey: null });
    expect((await ledger.usage()).periods.day).toMatchObject({ unknown: 1, kinds: { video: { calls: 1 } } });
    expect(await ledger.begin(video('another'))).toMatchObject({ status: 'limited', refusal: { used: 1 } });
  });

  it('reports the last hour apart from the day, and the session apart from both', async () => {
    const { ledger, open, clock } = await setup(SQLITE, { limits: 'video=5/day,video=1/hour' });
    await go(open(), video('another process, two hours ago'));
    clock.now += 2 * HOUR;
    await go(ledger, video('mine, now'));
    const usage = await ledger.usage();
    expect(usage.periods.hour.kinds.video.calls).toBe(1);
    expect(usage.periods.day.kinds.video.calls).toBe(2);
    expect(usage.periods.session.kinds.video.calls).toBe(1);
    expect(usage.limits.map((l) => [l.limit, l.used, l.left, l.usedUp, l.nextAt])).toEqual([
      ['video=5/day', 2, 3, false, null],
      ['video=1/hour', 1, 0, true, '2026-11-24T13:00:00.000Z'],
    ]);
  });

  it('exports a large ledger in pages, each call once, oldest first', async () => {
    const { ledger, clock } = await setup(SQLITE, { duplicateWindowSeconds: 0 });
    for (let i = 0; i < 1_005; i++) {
      await go(ledger, chat(`call ${i}`));
      clock.now += 1000;
    }
    const pages: number[] = [];
    const words: string[] = [];
    await ledger.exportCalls(0, (page) => {
      pages.push(page.length);
      words.push(...page.map((c) => c.words));
    });
    expect(pages).toEqual([1000, 5]);
    expect(words).toEqual(Array.from({ length: 1_005 }, (_, i) => `call ${i}`));
    expect((await exported(ledger, START + 1_001 * 1_000)).map((c) => c.words)).toEqual([
      'call 1001',
      'call 1002',
      'call 1003',
      'call 1004',
    ]);
  }, 60_000);
});

describe('a ledger opened only to report (Ledger.read), on SQLite', () => {
  it('reads a ledger whose folder is not made yet as one without calls, and makes nothing', async () => {
    const dir = join(tempDir('gtm-ledger-'), 'not-made');
    const { read } = await setup(SQLITE, { place: { dir }, limits: 'video=1/day' });
    const reader = read();
    expect((await reader.usage()).periods.day.kinds.video.calls).toBe(0);
    expect((await reader.usage()).limits).toEqual([expect.objectContaining({ used: 0, left: 1 })]);
    expect(await exported(reader)).toEqual([]);
    expect(() => readdirSync(dir)).toThrow(/ENOENT/);
  });
});
