// GATEWAY_LIMITS through the ledger's API: calls counted per kind and per hour, day or session,
// estimated costs (GATEWAY_PRICES), what counts (not refused or declined calls), the refusal's
// sentence and when the next call is possible — on SQLite and, when installed, PostgreSQL. On
// SQLite alone, with its clock moved: limits freeing up at the time they said, and retention
// (old calls removed after a begin, at most hourly, never those another process still counts).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock as clockText } from '../../src/ledger/evaluate.js';
import type { BillableCall } from '../../src/ledger/ledger.js';
import {
  afterSweep,
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
  video,
} from './ledger-fixture.js';

const stores = useStores();

const VIDEO_PRICE = 'xai/grok-imagine-video=0.05/second';

/** A video submit without `duration` (its amount would come from it), unless `more` says. */
function videoWithoutDuration(text: string, more: Partial<BillableCall> = {}): BillableCall {
  const { expected: _, ...call } = video(text, { options: {}, amountArgument: 'duration' });
  return { ...call, ...more };
}

describe.each(stores)('limits on $name', (store) => {
  it('refuse the call past a limit of its kind, say when the next is possible, and record it as declined', async () => {
    const { ledger, open, later } = await setup(store, { limits: 'chat=2/hour' });
    await go(ledger, chat('one'));
    await later(10 * 60_000);
    await go(open(), chat('two, from another process'));
    await later(5 * 60_000);
    expect((await ledger.usage()).limits[0]).toMatchObject({ used: 2, left: 0, usedUp: true });

    const refused = await ledger.begin(chat('three'));
    const [first] = await exported(ledger);
    const nextAt = new Date(Date.parse(first?.at ?? '') + HOUR).toISOString();
    expect(refused).toEqual({
      status: 'limited',
      refusal: {
        setting: 'GATEWAY_LIMITS',
        limit: { subject: 'chat', max: 2, period: 'hour', text: 'chat=2/hour' },
        used: 2,
        nextAt,
        sent: false,
      },
      sentence: expect.any(String),
    });
    if (refused.status !== 'limited') return;
    const [before, after] = refused.sentence.split(/\(in [\d h]+min\)/);
    expect(before).toBe(
      'Not sent, and nothing billed: the shared limit chat=2/hour (GATEWAY_LIMITS) is reached, with 2 chat calls in the last hour, by everyone sharing the ledger. ' +
        `The next is possible at ${clockText(nextAt)} `,
    );
    expect(after).toBe('; to allow more, raise it in GATEWAY_LIMITS and restart the server.');

    // Recorded as declined, counted as nothing: a second refusal still says 2.
    expect((await exported(ledger)).map((c) => [c.words, c.state, c.reason])).toEqual([
      ['one', 'pending', null],
      ['two, from another process', 'pending', null],
      ['three', 'declined', 'limit chat=2/hour'],
    ]);
    expect(await ledger.begin(chat('three'))).toMatchObject({ status: 'limited', refusal: { used: 2 } });
    expect((await ledger.usage()).periods.day).toMatchObject({ kinds: { chat: { calls: 2 } }, notBilled: 2 });
    // Other kinds are not held back by it; check() recorded nothing.
    expect((await ledger.begin(speech('hello'))).status).toBe('go');
    expect(await exported(ledger)).toHaveLength(5);
  });

  it('count what may have been billed: not calls the gateway refused or the user declined', async () => {
    const { ledger } = await setup(store, { limits: 'speech=2/day' });
    await ledger.end(await go(ledger, speech('a')), { outcome: 'refused', reason: 'HTTP 400' });
    await ledger.end(await go(ledger, speech('b')), { outcome: 'declined', reason: 'the user declined' });
    await ledger.end(await go(ledger, speech('c')), { outcome: 'unknown' });
    await go(ledger, speech('d')); // pending: being sent
    expect(await ledger.begin(speech('e'))).toMatchObject({ status: 'limited', refusal: { used: 2 } });
  });

  it('keep a session limit to its own process, until it restarts', async () => {
    const { ledger, open } = await setup(store, { limits: 'video=1/session' });
    const other = open();
    await go(ledger, video('mine'));
    await go(other, video('theirs'));
    const refused = await ledger.begin(video('mine again'));
    expect(refused).toMatchObject({ status: 'limited', refusal: { used: 1, nextAt: null } });
    expect(refused.status === 'limited' && refused.sentence).toContain(
      'with 1 video call in this server process since it started. No more are possible until the server restarts;',
    );
    expect((await other.begin(video('theirs again'))).status).toBe('limited');
    expect((await open().begin(video('after a restart'))).status).toBe('go');
  });

  it('hold a limit of 0 shut', async () => {
    const { ledger } = await setup(store, { limits: 'video=0/day' });
    const refused = await ledger.begin(video());
    expect(refused).toMatchObject({ status: 'limited', refusal: { used: 0, nextAt: null } });
    expect(refused.status === 'limited' && refused.sentence).toContain('The limit allows no video calls;');
  });

  it('limit the estimated cost, with amounts as reported, else as expected', async () => {
    const { ledger, later } = await setup(store, { limits: 'cost=1/day', prices: VIDEO_PRICE });
    await ledger.end(await go(ledger, video('one', { expected: 6 })), {
      outcome: 'accepted',
      jobId: 'vj_1',
      amount: 10, // 0.50
    });
    await later(HOUR);
    await go(ledger, video('two', { expected: 8 })); // pending: counted as expected, 0.40
    await later(HOUR);
    const refused = await ledger.begin(video('three', { expected: 4 }));
    const [first] = await exported(ledger);
    // It fits once the first call's 0.50 leaves the day.
    const nextAt = new Date(Date.parse(first?.at ?? '') + DAY).toISOString();
    expect(refused).toMatchObject({
      status: 'limited',
      refusal: { used: expect.closeTo(0.9), thisCost: expect.closeTo(0.2), nextAt },
    });
    if (refused.status !== 'limited') return;
    expect(refused.sentence).toContain('with an estimated 0.9 spent in the last 24 hours');
    expect(refused.sentence).toContain(
      `and this call would cost about 0.2. The next is possible at ${clockText(nextAt)} (in `,
    );
    expect((await ledger.begin(video('small', { expected: 2 }))).status).toBe('go');
    // Used up: not even a call of unknown cost goes.
    expect((await ledger.usage()).limits[0]).toMatchObject({ used: expect.closeTo(1), usedUp: true });
    expect((await ledger.usage()).limits[0]).toMatchObject({
      used: expect.closeTo(1),
      left: 0,
      usedUp: true,
    });
  });

  it('refuse a video whose duration is not given under a cost limit, saying to pass it', async () => {
    const { ledger } = await setup(store, { limits: 'cost=1.00/day', prices: VIDEO_PRICE });
    const refused = await ledger.begin(videoWithoutDuration('a slow pan over a harbour'));
    expect(refused).toEqual({
      status: 'limited',
      refusal: {
        setting: 'GATEWAY_LIMITS',
        limit: { subject: 'cost', max: 1, period: 'day', text: 'cost=1.00/day' },
        used: 0,
        needs: { argument: 'duration', price: VIDEO_PRICE },
        nextAt: null,
        sent: false,
      },
      sentence:
        "Not sent, and nothing billed: the shared limit cost=1.00/day (GATEWAY_LIMITS) needs this call's estimated cost, " +
        `and without duration it cannot be known before sending (${VIDEO_PRICE} in GATEWAY_PRICES). ` +
        'Pass duration to have it checked against the limit.',
    });
    expect((await exported(ledger)).map((c) => [c.state, c.reason])).toEqual([
      ['declined', 'limit cost=1.00/day'],
    ]);
    // With the duration it is checked, and fits.
    expect(
      (await ledger.begin(videoWithoutDuration('a slow pan over a harbour', { expected: 6 }))).status,
    ).toBe('go');
    // A model no price applies to has no cost to wait for.
    const unpriced = videoWithoutDuration('a slow pan, elsewhere', { model: 'other/video-model' });
    expect((await ledger.begin(unpriced)).status).toBe('go');
  });

  it('let a video without duration go when no cost limit is set', async () => {
    const { ledger } = await setup(store, { limits: 'video=5/day', prices: VIDEO_PRICE });
    expect((await ledger.begin(videoWithoutDuration('a slow pan over a harbour'))).status).toBe('go');
    expect(await exported(ledger)).toMatchObject([{ state: 'pending', amount: null, cost: null }]);
  });
  it('count each window exactly, whatever became of its calls and whichever were removed', async () => {
    const { open, later, now, debug } = await setup(store, {
      limits: 'chat=1000/hour,cost=1000000/day',
      prices: `${VIDEO_PRICE},chat:*=2/1m-tokens`,
    });
    const ledger = open();
    let seed = 7;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    /** The limits' use against the calls themselves, counted one by one. */
    const expectWindowsAsCounted = async () => {
      const counted = (await exported(ledger)).filter((c) =>
        ['accepted', 'unknown', 'pending'].includes(c.state),
      );
      const within = (ms: number) => counted.filter((c) => Date.parse(c.at) > now() - ms);
      const [chatLimit, costLimit] = (await ledger.usage()).limits;
      expect(chatLimit?.used).toBe(within(HOUR).filter((c) => c.kind === 'chat').length);
      expect(costLimit?.used).toBeGreaterThan(0);
      expect(costLimit?.used).toBeCloseTo(
        within(DAY).reduce((sum, c) => sum + (c.cost ?? 0), 0),
        9,
      );
    };
    // About 25 hours of calls on SQLite's clock, minutes apart; on PostgreSQL, milliseconds.
    for (let i = 0; i < 300; i++) {
      await later(Math.floor(random() * 10 * 60_000));
      const id = await go(
        ledger,
        random() < 0.3 ? video(`video ${i}`, { expected: 1 + Math.floor(random() * 10) }) : chat(`chat ${i}`),
      );
      const end = random();
      if (end < 0.5) await ledger.end(id, { outcome: 'accepted', amount: Math.floor(random() * 5_000) });
      else if (end < 0.65) await ledger.end(id, { outcome: 'refused' });
      else if (end < 0.75) await ledger.end(id, { outcome: 'unknown' });
      // The rest are not ended: still being sent, as far as the ledger knows.
      if (i % 30 === 29) await expectWindowsAsCounted();
      if (i === 200) {
        // Another process removes all but the last 100 calls, whatever their times.
        const sweeper = open({ retentionDays: 0, keptCalls: 100 });
        await go(sweeper, chat('a sweeping process'));
        await afterSweep();
        await sweeper.close();
        expect(debug).toEqual([
          expect.stringMatching(/^ledger: removed 10\d calls older than the retention$/),
        ]);
        await expectWindowsAsCounted();
      }
    }
  });
});

describe('limits on SQLite, as time passes', () => {
  it('let the call through at the time the refusal said, not a millisecond before', async () => {
    const { ledger, clock } = await setup(SQLITE, { limits: 'chat=2/hour' });
    await go(ledger, chat('one'));
    clock.now += 10 * 60_000;
    await go(ledger, chat('two'));
    clock.now += 5 * 60_000;
    const refused = await ledger.begin(chat('three'));
    expect(refused).toMatchObject({ status: 'limited', refusal: { nextAt: '2026-11-24T11:00:00.000Z' } });
    expect(refused.status === 'limited' && refused.sentence).toBe(
      'Not sent, and nothing billed: the shared limit chat=2/hour (GATEWAY_LIMITS) is reached, with 2 chat calls in the last hour, by everyone sharing the ledger. ' +
        'The next is possible at 2026-11-24 11:00 UTC (in 45 min); to allow more, raise it in GATEWAY_LIMITS and restart the server.',
    );
    clock.now = Date.parse('2026-11-24T10:59:59.999Z');
    expect((await ledger.usage()).limits[0]?.usedUp).toBe(true);
    clock.now = Date.parse('2026-11-24T11:00:00.000Z');
    expect((await ledger.usage()).limits[0]?.usedUp).toBe(false);
    await go(ledger, chat('three'));
    expect(await ledger.begin(chat('four'))).toMatchObject({
      status: 'limited',
      refusal: { nextAt: '2026-11-24T11:10:00.000Z' },
    });
  });

  it('look back across midnight, forget a day later, but remember the session', async () => {
    const { open, clock } = await setup(SQLITE, { limits: 'video=1/day,speech=1/session' });
    clock.now = Date.parse('2026-11-23T23:30:00.000Z');
    const ledger = open();
    await go(ledger, video('before midnight'));
    await go(ledger, speech('mine'));
    clock.now = Date.parse('2026-11-24T00:30:00.000Z');
    const refused = await ledger.begin(video('after midnight'));
    expect(refused).toMatchObject({ status: 'limited', refusal: { nextAt: '2026-11-24T23:30:00.000Z' } });
    expect(refused.status === 'limited' && refused.sentence).toContain('(in 23 h 0 min)');
    clock.now = Date.parse('2026-11-24T23:30:00.001Z');
    await go(ledger, video('a day later'));
    clock.now += 3 * DAY;
    await go(ledger, video('days later'));
    expect((await ledger.begin(speech('again'))).status).toBe('limited');
    expect((await ledger.usage()).periods.session.kinds.video.calls).toBe(3);
  });

  it('free a cost limit when the oldest spending leaves the day', async () => {
    const { ledger, clock } = await setup(SQLITE, { limits: 'cost=1/day', prices: VIDEO_PRICE });
    await ledger.end(await go(ledger, video('one')), { outcome: 'accepted', amount: 10 });
    clock.now += HOUR;
    await go(ledger, video('two', { expected: 8 }));
    clock.now += HOUR;
    const refused = await ledger.begin(video('three', { expected: 4 }));
    expect(refused).toMatchObject({ status: 'limited', refusal: { nextAt: '2026-11-25T10:00:00.000Z' } });
    expect(refused.status === 'limited' && refused.sentence).toContain(
      'The next is possible at 2026-11-25 10:00 UTC (in 22 h 0 min)',
    );
    clock.now = Date.parse('2026-11-25T09:59:59.999Z');
    expect((await ledger.begin(video('three', { expected: 4 }))).status).toBe('limited');
    clock.now = Date.parse('2026-11-25T10:00:00.000Z');
    expect((await ledger.begin(video('three', { expected: 4 }))).status).toBe('go');
  });
});

it('warns that a cost limit without prices stops nothing', async () => {
  const { warnings } = await setup(SQLITE, { limits: 'cost=1/day' });
  expect(warnings).toEqual([
    'GATEWAY_LIMITS has a cost limit but GATEWAY_PRICES is empty: no call has a cost, so it never stops one',
  ]);
});

describe('retention, on SQLite', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const wordsIn = (dir: string) => sqliteRows(dir).map((row) => row.words);

  it('is not cut short by a clock 40 days ahead: the calls others count stay, older ones go', async () => {
    const { open, place, debug } = await setup(SQLITE, { limits: 'video=3/day' });
    // A session of long ago, and one of today that has used up its day.
    await go(open({ now: () => START - 45 * DAY }), chat('45 days ago'));
    const today = open();
    for (const n of ['one', 'two', 'three']) await go(today, video(n));
    await afterSweep();
    expect(wordsIn(place.dir)).toEqual(['45 days ago', 'one', 'two', 'three']);

    // A process whose clock is 40 days ahead begins a call; its sweep runs after. It keeps the
    // four calls recorded last (its own and today's three), whatever their times.
    await go(open({ now: () => START + 40 * DAY, keptCalls: 4 }), chat('from a clock 40 days ahead'));
    await afterSweep();
    expect(debug).toEqual(['ledger: removed 1 calls older than the retention']);
    expect(wordsIn(place.dir)).toEqual(['one', 'two', 'three', 'from a clock 40 days ahead']);
    // Today's calls still count, for a process with the right clock.
    expect(await open().begin(video('four'))).toMatchObject({ status: 'limited', refusal: { used: 3 } });
  });

  it('is not cut short when the process with the clock ahead starts again and again', async () => {
    const { open, place } = await setup(SQLITE, { limits: 'video=3/day' });
    const today = open();
    for (const n of ['one', 'two', 'three']) await go(today, video(n));
    for (const restart of ['first', 'second', 'third'])
      await go(open({ now: () => START + 40 * DAY }), chat(`${restart} start, 40 days ahead`));
    await afterSweep();
    expect(wordsIn(place.dir).slice(0, 3)).toEqual(['one', 'two', 'three']);
    expect(await open().begin(video('four'))).toMatchObject({ status: 'limited', refusal: { used: 3 } });
  });

  it('keeps calls for retentionDays', async () => {
    const { open, place } = await setup(SQLITE);
    await go(open({ now: () => START - 2 * DAY }), chat('two days ago'));
    await go(open({ now: () => START - HOUR }), chat('an hour ago'));
    await go(open(), chat('now, with 30 days kept'));
    await afterSweep();
    expect(wordsIn(place.dir)).toHaveLength(3);
    await go(open({ retentionDays: 1, keptCalls: 1 }), chat('now, with 1 day kept'));
    await afterSweep();
    expect(wordsIn(place.dir)).toEqual(['an hour ago', 'now, with 30 days kept', 'now, with 1 day kept']);
  });

  it('removes after a begin, at most once an hour', async () => {
    const { open, place, debug } = await setup(SQLITE);
    await go(open(), chat('another process, today'));
    const sweeper = open({ keptCalls: 1 });
    await go(sweeper, chat('first'));
    await afterSweep();
    await go(open({ now: () => START - 40 * DAY }), chat('40 days ago'));
    await afterSweep();
    await go(sweeper, chat('second, within the hour'));
    await afterSweep();
    expect(wordsIn(place.dir)).toContain('40 days ago');
    expect(debug).toEqual([]);

    const realNow = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => realNow + HOUR + 1);
    await go(sweeper, chat('third, an hour later'));
    await afterSweep();
    expect(wordsIn(place.dir)).not.toContain('40 days ago');
    expect(debug).toEqual(['ledger: removed 1 calls older than the retention']);
  });
});
