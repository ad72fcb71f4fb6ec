// Each person's budget through the ledger's API, on SQLite and, when installed, PostgreSQL: every
// call records who made it and through which client; GATEWAY_LIMITS_PER_USER counts each
// person's calls apart while GATEWAY_LIMITS counts everyone's, both in the begin's transaction
// (exact under concurrent begins of several people); a refusal names which limit; a call that
// takes a limit past 80 % says so; usage, usage by person and export by person; the duplicate
// guard, the recent video jobs and the latest calls are each person's own. On SQLite alone,
// with its clock moved: the calendar week and month at their edges.

import { describe, expect, it, onTestFinished } from 'vitest';
import { periodSpan } from '../../src/config/billed-kinds.js';
import { type BillableCall, crossingSentence, type Ledger } from '../../src/ledger/ledger.js';
import { afterSweep, chat, exported, go, SQLITE, setup, useStores, video } from './ledger-fixture.js';

const stores = useStores();

const by = (id: string, client?: string) => ({ by: { id, ...(client ? { client } : {}) } });
const videoOf = (person: string, text = `a video of ${person}`): BillableCall => video(text, by(person));

describe.each(stores)('budgets per person on $name', (store) => {
  it('record the person and client of every call: begun, refused by a limit, declined', async () => {
    const { ledger } = await setup(store, { limitsPerUser: 'chat=1/hour' });
    await go(ledger, { ...chat('first'), ...by('ana', 'claude-code') });
    expect((await ledger.begin({ ...chat('second'), ...by('ana', 'claude-code') })).status).toBe('limited');
    expect((await ledger.check({ ...chat('third'), ...by('ana') })).status).toBe('limited');
    await ledger.decline({ ...chat('fourth'), ...by('bob', 'cursor') }, 'declined by the user');
    expect((await exported(ledger)).map((c) => [c.words, c.person, c.client, c.state, c.reason])).toEqual([
      ['first', 'ana', 'claude-code', 'pending', null],
      ['second', 'ana', 'claude-code', 'declined', 'limit chat=1/hour per user'],
      ['third', 'ana', null, 'declined', 'limit chat=1/hour per user'],
      ['fourth', 'bob', 'cursor', 'declined', 'declined by the user'],
    ]);
  });

  it('hold each person to GATEWAY_LIMITS_PER_USER and everyone to GATEWAY_LIMITS, naming which refused', async () => {
    const { ledger, open } = await setup(store, { limits: 'video=3/day', limitsPerUser: 'video=2/day' });
    await go(ledger, videoOf('ana', 'one'));
    await go(open(), videoOf('ana', 'two'));
    const mine = await ledger.begin(videoOf('ana', 'three'));
    expect(mine).toMatchObject({
      status: 'limited',
      refusal: { setting: 'GATEWAY_LIMITS_PER_USER', used: 2, limit: { text: 'video=2/day', perUser: true } },
    });
    if (mine.status !== 'limited') return;
    expect(mine.sentence).toMatch(
      /^Not sent, and nothing billed: your limit video=2\/day \(GATEWAY_LIMITS_PER_USER\) is reached, with 2 video calls of yours in the last 24 hours\. The next is possible at .+ UTC \(in 2[34] h \d+ min\); to allow more, raise it in GATEWAY_LIMITS_PER_USER and restart the server\.$/,
    );
    // Bob has a budget of his own, but only one call is left of everyone's.
    await go(ledger, videoOf('bob'));
    const team = await ledger.begin(videoOf('carl'));
    expect(team).toMatchObject({ status: 'limited', refusal: { setting: 'GATEWAY_LIMITS', used: 3 } });
    if (team.status !== 'limited') return;
    expect(team.sentence).toMatch(
      /^Not sent, and nothing billed: the shared limit video=3\/day \(GATEWAY_LIMITS\) is reached, with 3 video calls in the last 24 hours, by everyone sharing the ledger\. The next is possible at /,
    );
    // A person's cost limit counts only their own spending.
    const costs = await setup(store, {
      limitsPerUser: 'cost=0.60/day',
      prices: 'xai/grok-imagine-video=0.05/second',
    });
    await go(costs.ledger, videoOf('ana'));
    await go(costs.ledger, videoOf('ana', 'again'));
    expect(await costs.ledger.begin(videoOf('ana', 'a third'))).toMatchObject({
      status: 'limited',
      refusal: {
        setting: 'GATEWAY_LIMITS_PER_USER',
        used: expect.closeTo(0.6),
        thisCost: expect.closeTo(0.3),
      },
    });
    expect((await costs.ledger.begin(videoOf('bob'))).status).toBe('go');
  });

  it('are exact under concurrent begins of several people in several processes', async () => {
    const { ledger, open } = await setup(store, { limits: 'video=7/day', limitsPerUser: 'video=3/day' });
    // Each person calls from processes of their own (a ledger each: a connection pool each on
    // PostgreSQL), all at once.
    const people = ['ana', 'bob', 'carl'];
    const processes: Ledger[] = [ledger, ...Array.from({ length: 5 }, () => open())];
    const results = await Promise.all(
      people.flatMap((person) =>
        Array.from({ length: 8 }, async (_, i) => ({
          person,
          status: (await (processes[i % processes.length] as Ledger).begin(videoOf(person, `${person} ${i}`)))
            .status,
        })),
      ),
    );
    const sent = results.filter((r) => r.status === 'go');
    expect(sent).toHaveLength(7);
    for (const person of people)
      expect(sent.filter((r) => r.person === person).length).toBeLessThanOrEqual(3);
    expect(results.filter((r) => r.status === 'limited')).toHaveLength(24 - 7);
    // What the ledger holds agrees with what was answered.
    const calls = await exported(ledger);
    expect(calls.filter((c) => c.state !== 'declined')).toHaveLength(7);
    const usage = await ledger.usageByPerson();
    expect(usage.map((p) => p.day.video).reduce((a, b) => a + b)).toBe(7);
    expect(Math.max(...usage.map((p) => p.day.video))).toBeLessThanOrEqual(3);
  });

  it('give each person exactly their limit when concurrent begins exceed it', async () => {
    const { ledger, open } = await setup(store, { limits: 'video=100/day', limitsPerUser: 'video=3/day' });
    const processes: Ledger[] = [ledger, open(), open(), open()];
    const results = await Promise.all(
      ['ana', 'bob', 'carl'].flatMap((person) =>
        Array.from({ length: 10 }, async (_, i) => ({
          person,
          status: (await (processes[i % 4] as Ledger).begin(videoOf(person, `${person} ${i}`))).status,
        })),
      ),
    );
    const sentBy = (person: string) => results.filter((r) => r.person === person && r.status === 'go').length;
    expect([sentBy('ana'), sentBy('bob'), sentBy('carl')]).toEqual([3, 3, 3]);
  });

  it('find each limit a call takes past 80 % and 100 %, once, whose limit it is and what is left', async () => {
    const { ledger } = await setup(store, { limits: 'chat=10/hour', limitsPerUser: 'chat=5/hour' });
    // A transaction's statements one at a time on its connection (pg warns of overlapping ones).
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.message);
    process.on('warning', warned);
    onTestFinished(() => void process.off('warning', warned));
    const said: string[][] = [];
    for (let i = 0; i < 6; i++) {
      const begun = await ledger.begin({ ...chat(`question ${i}`), ...by('ana') });
      said.push(
        begun.status === 'go'
          ? begun.crossed.map((c) => `${c.share} ${crossingSentence(c)}`)
          : [begun.status],
      );
    }
    const more = 'more from \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\.$';
    expect(said.slice(0, 3)).toEqual([[], [], []]);
    expect(said[3]).toEqual([
      expect.stringMatching(
        new RegExp(
          `^80 Budget: 80 % of your limit chat=5/hour \\(GATEWAY_LIMITS_PER_USER\\) used, 1 left; ${more}`,
        ),
      ),
    ]);
    expect(said[4]).toEqual([
      expect.stringMatching(
        new RegExp(`^100 Budget: 100 % of your limit chat=5/hour .+ used, 0 left; ${more}`),
      ),
    ]);
    expect(said[5]).toEqual(['limited']);
    // Bob's third call is everyone's eighth of ten (his own third of five: 60 %).
    for (let i = 0; i < 2; i++) await go(ledger, { ...chat(`bob ${i}`), ...by('bob') });
    const eighth = await ledger.begin({ ...chat('bob 2'), ...by('bob') });
    expect(eighth).toMatchObject({
      status: 'go',
      crossed: [{ setting: 'GATEWAY_LIMITS', share: 80, used: 8, left: 2, limit: { text: 'chat=10/hour' } }],
    });
    // One call can cross both shares of small limits, each found.
    const small = await setup(store, { limits: 'video=1/day', limitsPerUser: 'video=1/week' });
    const only = await small.ledger.begin(videoOf('ana'));
    expect(only.status === 'go' && only.crossed.map((c) => [c.setting, c.share, c.left])).toEqual([
      ['GATEWAY_LIMITS', 80, 0],
      ['GATEWAY_LIMITS', 100, 0],
      ['GATEWAY_LIMITS_PER_USER', 80, 0],
      ['GATEWAY_LIMITS_PER_USER', 100, 0],
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual([]);
  });

  it("report the caller's own use and limits beside everyone's, each person's, and export one person's calls", async () => {
    const { ledger, read } = await setup(store, {
      limits: 'video=10/day',
      limitsPerUser: 'video=3/day,chat=5/month',
      prices: 'xai/grok-imagine-video=0.05/second',
    });
    await go(ledger, videoOf('ana'));
    await go(ledger, videoOf('ana', 'another'));
    await go(ledger, { ...chat('hello'), ...by('ana') });
    await go(ledger, videoOf('bob'));

    const report = await ledger.usage(10, 'ana');
    expect(report.person).toBe('ana');
    expect(report.periods.day.kinds.video.calls).toBe(3);
    expect(report.mine?.day.kinds.video.calls).toBe(2);
    expect(report.mine?.hour.kinds.chat.calls).toBe(1);
    expect(report.mine?.session.cost).toBeCloseTo(0.6);
    expect(report.limits.map((l) => [l.limit, l.perUser, l.used, l.left])).toEqual([
      ['video=10/day', false, 3, 7],
      ['video=3/day', true, 2, 1],
      ['chat=5/month', true, 1, 4],
    ]);
    // Without a person (the terminal's report), per-person limits are left to --by-user.
    expect((await read().usage(10)).limits.map((l) => l.limit)).toEqual(['video=10/day']);

    const people = await read().usageByPerson();
    expect(people).toEqual([
      {
        person: 'ana',
        day: { video: 2, speech: 0, transcription: 0, chat: 1, search: 0, fetch: 0 },
        month: { video: 2, speech: 0, transcription: 0, chat: 1, search: 0, fetch: 0 },
        dayCost: expect.closeTo(0.6),
        monthCost: expect.closeTo(0.6),
        limits: [
          { limit: 'video=3/day', used: 2, left: 1, nextAt: null },
          { limit: 'chat=5/month', used: 1, left: 4, nextAt: null },
        ],
      },
      expect.objectContaining({
        person: 'bob',
        limits: [expect.objectContaining({ used: 1 }), expect.anything()],
      }),
    ]);

    const bobs: string[] = [];
    await read().exportCalls(
      0,
      (calls) => void bobs.push(...calls.map((c) => `${c.person} ${c.words}`)),
      'bob',
    );
    expect(bobs).toEqual(['bob a video of bob']);
  });
});

describe.each(stores)("each person's own calls on $name", (store) => {
  it("answer a repeat with the same person's earlier call only; another person's is a call of its own", async () => {
    const { ledger } = await setup(store);
    const first = await ledger.begin(videoOf('ana', 'a lighthouse at dusk'));
    if (first.status !== 'go') throw new Error(first.status);
    await ledger.end(first.id, { outcome: 'accepted', jobId: 'vj_ana' });
    const again = await ledger.begin(videoOf('ana', 'a lighthouse at dusk'));
    expect(again.status === 'duplicate' && again.earlier.jobId).toBe('vj_ana');
    expect((await ledger.begin(videoOf('bob', 'a lighthouse at dusk'))).status).toBe('go');
  });

  it("list a person's own video jobs and latest calls, everyone's without a person", async () => {
    const { ledger } = await setup(store);
    for (const [person, job] of [
      ['ana', 'vj_a'],
      ['bob', 'vj_b'],
    ]) {
      const begun = await ledger.begin(videoOf(person as string));
      if (begun.status !== 'go') throw new Error(begun.status);
      await ledger.end(begun.id, { outcome: 'accepted', jobId: job as string });
    }
    expect((await ledger.recentJobs(10, 'ana')).map((j) => j.jobId)).toEqual(['vj_a']);
    expect((await ledger.recentJobs(10)).map((j) => j.jobId)).toEqual(['vj_b', 'vj_a']);
    expect((await ledger.usage(10, 'bob')).latest.map((c) => c.person)).toEqual(['bob']);
    expect((await ledger.usage(10)).latest.map((c) => c.person)).toEqual(['bob', 'ana']);
  });
});

describe('budgets per person on SQLite, as the calendar turns', () => {
  it('count a week from Monday 00:00 UTC and let the next call through then, not a millisecond before', async () => {
    const { ledger, clock } = await setup(SQLITE, { limitsPerUser: 'video=1/week' });
    clock.now = Date.parse('2026-11-29T23:59:59.999Z'); // a Sunday
    await go(ledger, videoOf('ana'));
    const refused = await ledger.begin(videoOf('ana', 'another'));
    expect(refused).toMatchObject({ status: 'limited', refusal: { nextAt: '2026-11-30T00:00:00.000Z' } });
    if (refused.status === 'limited')
      expect(refused.sentence).toContain(
        'with 1 video call of yours this week (since Monday 00:00 UTC). The next is possible at 2026-11-30 00:00 UTC (in 1 s)',
      );
    clock.now = Date.parse('2026-11-30T00:00:00.000Z');
    // A call at the very start of the week is in it.
    await go(ledger, videoOf('ana', 'on Monday at midnight'));
    clock.now += 6 * 86_400_000;
    expect(await ledger.begin(videoOf('ana', 'on Sunday'))).toMatchObject({
      status: 'limited',
      refusal: { nextAt: '2026-12-07T00:00:00.000Z' },
    });
  });

  it('count a month from the 1st 00:00 UTC, across a year and a leap day', async () => {
    for (const [last, first] of [
      ['2026-11-30T23:59:59.999Z', '2026-12-01T00:00:00.000Z'],
      ['2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00.000Z'],
      ['2028-02-29T23:59:59.999Z', '2028-03-01T00:00:00.000Z'],
    ] as const) {
      const { ledger, clock } = await setup(SQLITE, { limits: 'video=1/month' });
      clock.now = Date.parse(last);
      await go(ledger, videoOf('ana', `on ${last}`));
      expect(await ledger.begin(videoOf('bob', `also on ${last}`))).toMatchObject({
        status: 'limited',
        refusal: { setting: 'GATEWAY_LIMITS', nextAt: first },
      });
      clock.now = Date.parse(first) - 1;
      expect((await ledger.begin(videoOf('bob', `a millisecond before ${first}`))).status).toBe('limited');
      clock.now = Date.parse(first);
      expect((await ledger.begin(videoOf('bob', `on ${first}`))).status).toBe('go');
    }
  });

  it('keep calls long enough for the longest month', async () => {
    const { ledger, open, clock } = await setup(SQLITE, { limits: 'video=2/month', keptCalls: 1 });
    clock.now = Date.parse('2026-12-01T00:00:00.000Z');
    await go(ledger, videoOf('ana'));
    // The last moment of a 31-day month, after a sweep (a new process's first begin): the first
    // call still counts.
    clock.now = Date.parse('2026-12-31T23:59:59.000Z');
    await go(open(), videoOf('ana', 'at the end of the month'));
    await afterSweep();
    expect((await exported(ledger)).map((c) => c.words)).toHaveLength(2);
    expect((await ledger.begin(videoOf('ana', 'one more'))).status).toBe('limited');
  });

  it('know the calendar: weeks from Monday, months of every length, in UTC', () => {
    const at = (iso: string) => periodSpan('week', Date.parse(iso));
    const day = (iso: string) => new Date(iso).toISOString();
    expect(at('2026-11-30T00:00:00.000Z')).toEqual({
      start: Date.parse('2026-11-30'),
      end: Date.parse('2026-12-07'),
    });
    expect(at('2026-12-06T23:59:59.999Z')).toEqual({
      start: Date.parse('2026-11-30'),
      end: Date.parse('2026-12-07'),
    });
    expect(at('2027-01-01T12:00:00.000Z')?.start).toBe(Date.parse(day('2026-12-28')));
    const month = (iso: string) => periodSpan('month', Date.parse(iso));
    expect(month('2028-02-29T23:59:59.999Z')).toEqual({
      start: Date.parse('2028-02-01'),
      end: Date.parse('2028-03-01'),
    });
    expect(month('2026-12-31T23:59:59.999Z')).toEqual({
      start: Date.parse('2026-12-01'),
      end: Date.parse('2027-01-01'),
    });
    expect(periodSpan('session', 0)).toBeNull();
  });
});
