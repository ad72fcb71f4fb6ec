// The ledger through its API, on real files in a temporary directory, with a clock the tests move:
// what a line holds, limits and when they free up, costs, the duplicate guard, damaged lines,
// retention, the size cap, and the reports.

import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callHash } from '../../src/ledger/fingerprint.js';
import { type BillableCall, Ledger, type LedgerOptions, LedgerUnavailable } from '../../src/ledger/ledger.js';
import { parseLimits } from '../../src/ledger/limits.js';
import { parsePrices } from '../../src/ledger/prices.js';
import type { Logger } from '../../src/lib/log.js';
import { tempDir } from '../harness/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A ledger on a fresh directory (or `dir`), with a clock that starts at `start` and moves on demand. */
function setup(
  options: { limits?: string; prices?: string; dir?: string; start?: number } & Omit<
    Partial<LedgerOptions>,
    'limits' | 'prices'
  > = {},
) {
  const { limits = '', prices = '', start = Date.parse('2026-11-24T10:00:00.000Z'), ...rest } = options;
  const clock = { now: start };
  const warnings: string[] = [];
  const log: Logger = {
    level: 'debug',
    error: (m) => warnings.push(m),
    warn: (m) => warnings.push(m),
    info() {},
    debug() {},
  };
  const dir = options.dir ?? tempDir('gtm-ledger-');
  const parsedLimits = parseLimits(limits);
  const parsedPrices = parsePrices(prices);
  if (!parsedLimits.ok || !parsedPrices.ok) throw new Error('bad test setting');
  const open = (more: Partial<LedgerOptions> = {}) =>
    Ledger.open({
      dir,
      log,
      limits: parsedLimits.value,
      prices: parsedPrices.value,
      now: () => clock.now,
      ...rest,
      ...more,
    });
  return { dir, clock, warnings, ledger: open(), open };
}

const video = (
  text = 'a red fox running through snow at dawn',
  more: Partial<BillableCall> = {},
): BillableCall => ({
  kind: 'video',
  tool: 'video_generate',
  model: 'xai/grok-imagine-video',
  text,
  options: { duration: 6 },
  expected: 6,
  ...more,
});
const chat = (text: string): BillableCall => ({
  kind: 'chat',
  tool: 'ask_model',
  model: 'openai/gpt-4o-mini',
  text,
});

function lines(dir: string, day = '2026-11-24'): Record<string, unknown>[] {
  return readFileSync(join(dir, `${day}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function go(ledger: Ledger, call: BillableCall): Promise<string> {
  const result = await ledger.begin(call);
  if (result.status !== 'go') throw new Error(`expected go, got ${result.status}`);
  return result.id;
}

describe('a ledger line', () => {
  it('is written before the call goes, in the UTC day file, with the first words and a hash but not the prompt', async () => {
    const { ledger, dir } = setup();
    const prompt =
      'a red fox running through snow at dawn, then the camera rises above the pines sk-secret-in-prompt';
    const result = await ledger.begin(video(prompt, { idempotencyKey: 'gtm-key-1' }));
    expect(result.status).toBe('go');
    const [begin] = lines(dir);
    expect(begin).toEqual({
      type: 'begin',
      id: (result as { id: string }).id,
      at: '2026-11-24T10:00:00.000Z',
      pid: process.pid,
      host: expect.any(String),
      session: ledger.sessionId,
      kind: 'video',
      tool: 'video_generate',
      model: 'xai/grok-imagine-video',
      hash: callHash({ ...video(prompt), text: prompt }),
      words: 'a red fox running through snow at dawn,…',
      key: 'gtm-key-1',
      expected: 6,
      unit: 'seconds',
    });
    expect(readFileSync(join(dir, '2026-11-24.jsonl'), 'utf8')).not.toContain('sk-secret');

    await ledger.end((result as { id: string }).id, {
      outcome: 'accepted',
      jobId: 'vj_abc',
      amount: 6,
      status: 'queued',
    });
    expect(lines(dir)[1]).toEqual({
      type: 'end',
      id: (result as { id: string }).id,
      at: '2026-11-24T10:00:00.000Z',
      outcome: 'accepted',
      job: 'vj_abc',
      amount: 6,
      unit: 'seconds',
      status: 'queued',
    });
  });

  it('hashes the same purchase the same whatever the order of its options, and tells others apart', () => {
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

describe('limits', () => {
  it('refuses the call past a rolling limit, says when the next is possible, and lets it through then', async () => {
    const { ledger, clock } = setup({ limits: 'chat=2/hour' });
    await go(ledger, chat('one'));
    clock.now += 10 * 60_000;
    await go(ledger, chat('two'));
    clock.now += 5 * 60_000;
    const refused = await ledger.begin(chat('three'));
    expect(refused).toEqual({
      status: 'limited',
      refusal: {
        setting: 'GATEWAY_LIMITS',
        limit: { subject: 'chat', max: 2, period: 'hour', text: 'chat=2/hour' },
        used: 2,
        nextAt: '2026-11-24T11:00:00.000Z',
        sent: false,
      },
      sentence:
        "Not sent, and nothing billed: the limit chat=2/hour (GATEWAY_LIMITS) is reached, with 2 chat calls in the last hour, across all of this user's server processes. " +
        'The next is possible at 2026-11-24 11:00 UTC (in 45 min); to allow more, raise it in GATEWAY_LIMITS and restart the server.',
    });
    expect((await ledger.check('chat', 'openai/gpt-4o-mini')).ok).toBe(false);
    clock.now = Date.parse('2026-11-24T11:00:00.001Z');
    expect((await ledger.check('chat', 'openai/gpt-4o-mini')).ok).toBe(true);
    await go(ledger, chat('three'));
  });

  it('records a refused call as not sent, and does not count it', async () => {
    const { ledger, dir } = setup({ limits: 'video=1/day' });
    await go(ledger, video('first'));
    expect((await ledger.begin(video('second'))).status).toBe('limited');
    expect(lines(dir).slice(1)).toEqual([
      expect.objectContaining({ type: 'begin', words: 'second' }),
      expect.objectContaining({ type: 'end', outcome: 'declined', reason: 'limit video=1/day' }),
    ]);
    expect((await ledger.usage()).periods.day).toMatchObject({
      kinds: { video: { calls: 1 } },
      notBilled: 1,
    });
  });

  it('counts what may have been billed: not calls the gateway refused or the user declined', async () => {
    const { ledger } = setup({ limits: 'speech=2/day' });
    const speech = (text: string): BillableCall => ({
      kind: 'speech',
      tool: 'audio_speech',
      model: 'openai/tts-1',
      text,
    });
    await ledger.end(await go(ledger, speech('a')), { outcome: 'refused', reason: 'HTTP 400' });
    await ledger.end(await go(ledger, speech('b')), { outcome: 'declined', reason: 'the user declined' });
    await ledger.end(await go(ledger, speech('c')), { outcome: 'unknown' });
    await go(ledger, speech('d')); // pending: being sent
    expect((await ledger.begin(speech('e'))).status).toBe('limited');
  });

  it('keeps a session limit to its own process, until it restarts', async () => {
    const { ledger, open } = setup({ limits: 'video=1/session' });
    const other = open();
    await go(ledger, video('mine'));
    await go(other, video('theirs'));
    const refused = await ledger.begin(video('mine again'));
    expect(refused.status).toBe('limited');
    expect(refused.status === 'limited' && refused.refusal.nextAt).toBeNull();
    expect(refused.status === 'limited' && refused.sentence).toContain(
      'with 1 video call in this server process since it started. No more are possible until the server restarts;',
    );
  });

  it("looks back across midnight into yesterday's file, and forgets older days but not its session", async () => {
    const { ledger, clock, dir } = setup({
      limits: 'video=1/day,speech=1/session',
      start: Date.parse('2026-11-23T23:30:00.000Z'),
    });
    await go(ledger, video('before midnight'));
    await go(ledger, { kind: 'speech', tool: 'audio_speech', model: 'openai/tts-1', text: 'mine' });
    clock.now = Date.parse('2026-11-24T00:30:00.000Z');
    const refused = await ledger.begin(video('after midnight'));
    expect(refused.status === 'limited' && refused.refusal.nextAt).toBe('2026-11-24T23:30:00.000Z');
    expect(
      readdirSync(dir)
        .filter((n) => n.endsWith('.jsonl'))
        .sort(),
    ).toEqual(['2026-11-23.jsonl', '2026-11-24.jsonl']);
    clock.now = Date.parse('2026-11-24T23:30:00.001Z');
    await go(ledger, video('a day later'));
    // Three days on: the day limit has forgotten, the session has not.
    clock.now += 3 * DAY;
    await go(ledger, video('days later'));
    const speech = await ledger.begin({
      kind: 'speech',
      tool: 'audio_speech',
      model: 'openai/tts-1',
      text: 'again',
    });
    expect(speech.status).toBe('limited');
    expect((await ledger.usage()).periods.session.kinds.video.calls).toBe(3);
  });

  it('holds a limit of 0 shut', async () => {
    const { ledger } = setup({ limits: 'video=0/day' });
    const refused = await ledger.begin(video());
    expect(refused.status === 'limited' && refused.sentence).toContain('The limit allows no video calls;');
  });

  it('limits the estimated cost per day, with amounts as reported', async () => {
    const { ledger, clock } = setup({ limits: 'cost=1/day', prices: 'xai/grok-imagine-video=0.05/second' });
    await ledger.end(await go(ledger, video('one', { expected: 6 })), {
      outcome: 'accepted',
      jobId: 'vj_1',
      amount: 10,
    });
    clock.now += HOUR;
    await go(ledger, video('two', { expected: 8 })); // pending: counted as expected, 0.40
    clock.now += HOUR;
    const refused = await ledger.begin(video('three', { expected: 4 }));
    expect(refused.status).toBe('limited');
    if (refused.status !== 'limited') return;
    expect(refused.refusal).toMatchObject({ used: 0.9, thisCost: 0.2, nextAt: '2026-11-25T10:00:00.000Z' });
    expect(refused.sentence).toContain('with an estimated 0.9 spent in the last 24 hours');
    expect(refused.sentence).toContain(
      'and this call would cost about 0.2. The next is possible at 2026-11-25 10:00 UTC (in 22 h 0 min)',
    );
    expect((await ledger.begin(video('small', { expected: 2 }))).status).toBe('go');
  });

  it('warns that a cost limit without prices stops nothing', () => {
    const { warnings } = setup({ limits: 'cost=1/day' });
    expect(warnings).toEqual([
      'GATEWAY_LIMITS has a cost limit but GATEWAY_PRICES is empty: no call has a cost, so it never stops one',
    ]);
  });
});

describe('the duplicate guard', () => {
  it('answers an identical call with the earlier accepted one, within the window only', async () => {
    const { ledger, clock } = setup({ duplicateWindowSeconds: 600 });
    const first = await go(ledger, video());
    await ledger.end(first, { outcome: 'accepted', jobId: 'vj_first' });
    clock.now += 300_000;
    const again = await ledger.begin(video());
    expect(again).toEqual({
      status: 'duplicate',
      earlier: expect.objectContaining({
        id: first,
        state: 'accepted',
        jobId: 'vj_first',
        words: 'a red fox running through snow at dawn',
      }),
    });
    // Another option, or allow_duplicate, is a new purchase.
    expect((await ledger.begin(video(undefined, { options: { duration: 8 } }))).status).toBe('go');
    const forced = await ledger.begin(video(undefined, { allowDuplicate: true }));
    expect(forced.status).toBe('go');
    // Past the window the first is forgotten; the forced one, still being sent, is within it.
    clock.now += 301_000;
    expect(await ledger.begin(video())).toMatchObject({
      status: 'duplicate',
      earlier: { id: forced.status === 'go' ? forced.id : '', state: 'pending' },
    });
  });

  it('finds the latest accepted one, and an identical call being sent or of unknown outcome', async () => {
    const { ledger, open } = setup();
    const other = open();
    const pending = await go(other, video());
    expect(await ledger.begin(video())).toMatchObject({
      status: 'duplicate',
      earlier: { id: pending, state: 'pending' },
    });
    await other.end(pending, { outcome: 'unknown' });
    const earlier = await ledger.begin(video(undefined, { idempotencyKey: 'gtm-other' }));
    expect(earlier).toMatchObject({ status: 'duplicate', earlier: { state: 'unknown' } });
  });

  it('lets the retry of an unknown outcome through with its own idempotency key', async () => {
    const { ledger } = setup();
    const id = await go(ledger, video(undefined, { idempotencyKey: 'gtm-1' }));
    await ledger.end(id, { outcome: 'unknown' });
    expect((await ledger.begin(video(undefined, { idempotencyKey: 'gtm-1' }))).status).toBe('go');
  });

  it('is off with a window of 0', async () => {
    const { ledger } = setup({ duplicateWindowSeconds: 0 });
    await ledger.end(await go(ledger, video()), { outcome: 'accepted', jobId: 'vj_1' });
    expect((await ledger.begin(video())).status).toBe('go');
  });
});

describe('damaged files', () => {
  it('skips a damaged line with one warning, recovers the record written after a torn one, and never throws', async () => {
    const { dir, clock, warnings, open } = setup({ limits: 'video=2/day' });
    const writer = open({ log: { level: 'error', error() {}, warn() {}, info() {}, debug() {} } });
    await writer.end(await go(writer, video('kept')), { outcome: 'accepted', jobId: 'vj_kept' });
    const file = join(dir, '2026-11-24.jsonl');
    const first = statSync(file).size;
    const cut = '{"type":"begin","id":"x1","at":"2026-11-24T10:00:00.000Z","pid":\n';
    appendFileSync(file, cut);
    appendFileSync(file, 'not json at all\n');
    // A process killed mid-write: its line has no end, and the next record lands right after it.
    const torn = statSync(file).size;
    const tear = '{"type":"end","id":"torn","at":"2026-11';
    appendFileSync(file, tear);

    const reader = open();
    expect((await reader.usage()).periods.day.kinds.video.calls).toBe(1);
    expect(warnings).toEqual([
      `ledger: skipped a damaged line in ${file} at byte ${first} (not a whole record)`,
      `ledger: skipped a damaged line in ${file} at byte ${first + cut.length} (not a whole record)`,
    ]);

    clock.now += 1000;
    await go(writer, video('after the tear'));
    const usage = await reader.usage();
    expect(usage.periods.day.kinds.video.calls).toBe(2);
    expect(usage.latest.map((c) => c.words)).toEqual(['after the tear', 'kept']);
    expect(warnings.slice(2)).toEqual([
      `ledger: skipped a damaged line in ${file} at byte ${torn} (${tear.length} damaged bytes before a whole record)`,
    ]);
    // Read again: nothing new, no new warning; the limit counts the recovered record.
    await reader.usage();
    await reader.recentJobs();
    expect(warnings).toHaveLength(3);
    expect((await reader.begin(video('third'))).status).toBe('limited');
  });

  it('reads a day file replaced under its name again from the start, counting no call twice', async () => {
    const { dir, warnings, ledger, open } = setup();
    await go(ledger, chat('one'));
    expect((await ledger.usage()).periods.day.kinds.chat.calls).toBe(1);
    await go(open(), chat('two, from another process'));
    // Rewritten by an editor that saves to a new file and renames it over the old one.
    const file = join(dir, '2026-11-24.jsonl');
    writeFileSync(`${file}.new`, readFileSync(file));
    renameSync(`${file}.new`, file);
    expect((await ledger.usage()).periods.day.kinds.chat.calls).toBe(2);
    expect(warnings).toEqual([
      `ledger: ${file} was replaced (edited by hand?); it is read again from the start`,
    ]);
  });

  it('reads a day file that shrank again from the start', async () => {
    const { dir, warnings, ledger } = setup();
    await go(ledger, chat('one'));
    await go(ledger, chat('two'));
    expect((await ledger.usage()).periods.day.kinds.chat.calls).toBe(2);
    const file = join(dir, '2026-11-24.jsonl');
    writeFileSync(file, `${readFileSync(file, 'utf8').split('\n')[0]}\n`);
    expect((await ledger.usage()).periods.day.kinds.chat.calls).toBe(2); // what was read stays known
    expect(warnings).toEqual([`ledger: ${file} shrank (edited by hand?); it is read again from the start`]);
  });
});

describe('bounds', () => {
  it('removes day files past the retention, and keeps the rest', async () => {
    const dir = tempDir('gtm-ledger-');
    for (const day of ['2026-10-24', '2026-10-25', '2026-11-23'])
      writeFileSync(join(dir, `${day}.jsonl`), '');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const { ledger } = setup({ dir });
    await go(ledger, chat('today'));
    expect(
      readdirSync(dir)
        .filter((n) => !n.startsWith('.'))
        .sort(),
    ).toEqual(['2026-10-25.jsonl', '2026-11-23.jsonl', '2026-11-24.jsonl', 'notes.txt']);
  });

  it('stops billed calls when the day file is full, and still records the ends of calls under way', async () => {
    const { ledger, dir } = setup({ maxDayFileBytes: 1500 });
    const ids: string[] = [];
    let error: unknown;
    try {
      for (let i = 0; i < 10; i++) ids.push(await go(ledger, chat(`call ${i}`)));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect((error as Error).message).toMatch(
      /^Not sent, and nothing billed: today's ledger of billed calls \(.*2026-11-24\.jsonl\) is full/,
    );
    expect(ids.length).toBeGreaterThan(1);
    for (const id of ids) await ledger.end(id, { outcome: 'accepted', amount: 10 });
    expect(lines(dir).filter((l) => l.type === 'end')).toHaveLength(ids.length);
  });

  it('refuses to send when it cannot write, saying so', async () => {
    const { ledger, dir } = setup();
    mkdirSync(join(dir, '2026-11-24.jsonl')); // in the way of today's file, for root too
    await expect(ledger.begin(chat('x'))).rejects.toThrow(
      /^Not sent, and nothing billed: the ledger of billed calls in .* cannot be written \(EISDIR\); check the disk and the permissions of GATEWAY_LEDGER_DIR\.$/,
    );
  });
});

describe('reports', () => {
  it('lists recent video jobs of every process, newest first, reading older days as needed', async () => {
    const start = Date.parse('2026-11-20T09:00:00.000Z');
    const { ledger: old, clock, open } = setup({ start });
    const a = await go(old, video('four days ago', { idempotencyKey: 'k-a' }));
    await old.end(a, { outcome: 'accepted', jobId: 'vj_a', status: 'queued' });
    await old.end(await go(old, video('refused one')), { outcome: 'refused' });
    clock.now += 3 * DAY;
    await old.noteJobStatus('vj_a', 'completed');
    const b = await go(old, video('yesterday', { idempotencyKey: 'k-b' }));
    await old.end(b, { outcome: 'unknown' });
    clock.now += DAY;
    const now = open();
    const c = await go(now, video('today', { idempotencyKey: 'k-c' }));

    const jobs = await now.recentJobs();
    expect(jobs).toEqual([
      {
        jobId: null,
        words: 'today',
        model: 'xai/grok-imagine-video',
        tool: 'video_generate',
        at: '2026-11-24T09:00:00.000Z',
        state: 'pending',
        status: null,
        statusAt: null,
        idempotencyKey: 'k-c',
        thisSession: true,
      },
      expect.objectContaining({
        words: 'yesterday',
        state: 'unknown',
        idempotencyKey: 'k-b',
        jobId: null,
        thisSession: false,
      }),
      expect.objectContaining({
        words: 'four days ago',
        state: 'accepted',
        jobId: 'vj_a',
        status: 'completed',
        statusAt: '2026-11-23T09:00:00.000Z',
        idempotencyKey: null,
      }),
    ]);
    expect(await now.recentJobs(2)).toHaveLength(2);
    await now.end(c, { outcome: 'accepted', jobId: 'vj_c' });
    expect((await now.recentJobs(1))[0]).toMatchObject({ jobId: 'vj_c', state: 'accepted' });
  });

  it('reports calls per kind and period, limits and what is left, estimated costs and the latest calls', async () => {
    const { ledger, clock, open } = setup({
      limits: 'video=5/day,speech=3/hour,cost=10/day',
      prices: 'xai/grok-imagine-video=0.05/second,openai/tts-1=0.015/1k-chars',
    });
    const other = open();
    await other.end(await go(other, video('other process')), {
      outcome: 'accepted',
      jobId: 'vj_o',
      amount: 6,
    });
    clock.now += 2 * HOUR;
    await ledger.end(await go(ledger, video('mine')), { outcome: 'accepted', jobId: 'vj_m', amount: 10 });
    clock.now += 1000;
    const speech: BillableCall = {
      kind: 'speech',
      tool: 'audio_speech',
      model: 'openai/tts-1',
      text: 'hello there',
      expected: 11,
    };
    await ledger.end(await go(ledger, speech), {
      outcome: 'accepted',
      amount: 2000,
      file: '/out/speech.mp3',
    });
    clock.now += 1000;
    await ledger.end(await go(ledger, chat('unpriced')), { outcome: 'accepted', amount: 500 });
    await ledger.end(await go(ledger, chat('refused')), { outcome: 'refused' });

    const usage = await ledger.usage(3);
    expect(usage.dir).toBe(ledger.dir);
    expect(usage.periods.hour.kinds.video).toEqual({ calls: 1, amount: 10, unit: 'seconds' });
    expect(usage.periods.day.kinds.video).toEqual({ calls: 2, amount: 16, unit: 'seconds' });
    expect(usage.periods.session.kinds.video).toEqual({ calls: 1, amount: 10, unit: 'seconds' });
    expect(usage.periods.day.kinds.speech).toEqual({ calls: 1, amount: 2000, unit: 'chars' });
    expect(usage.periods.day.kinds.chat).toEqual({ calls: 1, amount: 500, unit: 'tokens' });
    expect(usage.periods.day.cost).toBeCloseTo(0.3 + 0.5 + 0.03);
    expect(usage.periods.day).toMatchObject({ unpriced: 1, notBilled: 1, unknown: 0 });
    expect(usage.limits).toMatchObject([
      { limit: 'video=5/day', subject: 'video', period: 'day', max: 5, used: 2, left: 3, unpriced: 0 },
      { limit: 'speech=3/hour', subject: 'speech', period: 'hour', max: 3, used: 1, left: 2, unpriced: 0 },
      {
        limit: 'cost=10/day',
        subject: 'cost',
        period: 'day',
        max: 10,
        used: expect.closeTo(0.83),
        left: expect.closeTo(9.17),
        unpriced: 1,
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

  it('has no costs without prices', async () => {
    const { ledger } = setup();
    await go(ledger, chat('x'));
    expect((await ledger.usage()).periods.day.cost).toBeNull();
  });
});

describe('the directory', () => {
  it('is made for the user alone when missing', async () => {
    const parent = tempDir('gtm-ledger-');
    const { dir, ledger } = setup({ dir: join(parent, 'a', 'ledger') });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    await go(ledger, chat('x'));
    expect(statSync(join(dir, '2026-11-24.jsonl')).mode & 0o777).toBe(0o600);
  });
});
