// GATEWAY_LIMITS and GATEWAY_PRICES as a user writes them: what they mean, and what an invalid one
// says (the server does not start: exit status 2, one line naming the setting).

import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/config/config.js';
import { parseLimits } from '../../src/config/limits.js';
import { parsePrices } from '../../src/config/prices.js';
import { costOf, priceFor } from '../../src/ledger/costs.js';
import { runCli } from '../harness/harness.js';

const limits = (text: string) => {
  const parsed = parseLimits(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};
const prices = (text: string) => {
  const parsed = parsePrices(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};
const limitError = (text: string) => {
  const parsed = parseLimits(text);
  return parsed.ok ? null : parsed.error;
};
const priceError = (text: string) => {
  const parsed = parsePrices(text);
  return parsed.ok ? null : parsed.error;
};

describe('GATEWAY_LIMITS', () => {
  it('reads kinds, counts and periods, spaces and case aside', () => {
    expect(limits(' video=5/day, Speech = 100 / DAY ,chat=300/hour,search=0/session,cost=2.50/day,')).toEqual(
      [
        { subject: 'video', max: 5, period: 'day', text: 'video=5/day' },
        { subject: 'speech', max: 100, period: 'day', text: 'speech=100/day' },
        { subject: 'chat', max: 300, period: 'hour', text: 'chat=300/hour' },
        { subject: 'search', max: 0, period: 'session', text: 'search=0/session' },
        { subject: 'cost', max: 2.5, period: 'day', text: 'cost=2.50/day' },
      ],
    );
    expect(limits('')).toEqual([]);
    expect(limits('video=1/hour,video=3/day')).toHaveLength(2);
    expect(limits('video=3/week,cost=20/month').map((l) => [l.period, l.perUser])).toEqual([
      ['week', undefined],
      ['month', undefined],
    ]);
  });

  it('says what is wrong with a limit', () => {
    expect(limitError('video=5/fortnight')).toBe(
      '"video=5/fortnight": the period must be hour, day, week, month or session',
    );
    expect(limitError('vidoe=5/day')).toBe(
      '"vidoe=5/day": unknown kind vidoe; kinds are video, speech, transcription, chat, search, fetch and cost',
    );
    expect(limitError('video=2.5/day')).toBe('"video=2.5/day": the count must be a whole number of calls');
    expect(limitError('video5/day')).toBe(
      '"video5/day" is not a limit: each limit is kind=count/period, e.g. video=5/day',
    );
    expect(limitError('video=-1/day')).toMatch(/is not a limit/);
    expect(limitError('video=1/day,video=2/day')).toBe('"video=2/day": video per day is limited twice');
  });

  it('stops start-up with exit status 2 and one line naming GATEWAY_LIMITS', async () => {
    expect(() => parseCommandLine([], { GATEWAY_LIMITS: 'video=5/fortnight' }, '/work/project')).toThrow(
      'invalid GATEWAY_LIMITS (--limits): "video=5/fortnight": the period must be hour, day, week, month or session (got "video=5/fortnight")',
    );
    expect(() =>
      parseCommandLine([], { GATEWAY_LIMITS_PER_USER: 'video=5/fortnight' }, '/work/project'),
    ).toThrow('invalid GATEWAY_LIMITS_PER_USER (--limits-per-user): "video=5/fortnight"');
    const run = await runCli([], { GATEWAY_LIMITS: 'video=five/day' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'gateway-tools-mcp: invalid GATEWAY_LIMITS (--limits): "video=five/day" is not a limit: each limit is kind=count/period, e.g. video=5/day (got "video=five/day")',
    );
    const flag = await runCli(['--prices', 'openai/tts-1=0.015/word']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      'invalid --prices (GATEWAY_PRICES): "openai/tts-1=0.015/word": unknown unit word',
    );
  });

  it('is parsed into the configuration, none by default', () => {
    expect(parseCommandLine([], {}, '/work/project').config.limits).toEqual([]);
    expect(parseCommandLine(['--limits', 'chat=3/hour'], {}, '/work/project').config.limits).toEqual(
      limits('chat=3/hour'),
    );
  });
});

describe('GATEWAY_PRICES', () => {
  const list = prices(
    'xai/grok-imagine-video=0.05/second,openai/tts-1=0.015/1k-chars,chat:*=0.50/1m-tokens,' +
      'openai/*=2/1m-tokens,search:*=0.008/call,transcription:*=0.006/minute',
  );

  it('prices a call by its kind, model and amount', () => {
    expect(costOf(list, 'video', 'xai/grok-imagine-video', 6)).toBeCloseTo(0.3);
    expect(costOf(list, 'speech', 'openai/tts-1', 2_000)).toBeCloseTo(0.03);
    expect(costOf(list, 'chat', 'anthropic/claude-haiku', 1_000_000)).toBeCloseTo(0.5);
    expect(costOf(list, 'search', 'tavily', undefined)).toBeCloseTo(0.008);
    expect(costOf(list, 'transcription', 'openai/whisper-1', 90)).toBeCloseTo(0.009);
  });

  it('takes the price naming the model most exactly', () => {
    expect(priceFor(list, 'chat', 'openai/gpt-4o-mini')?.text).toBe('openai/*=2/1m-tokens');
    expect(priceFor(list, 'chat', 'xai/grok-4')?.text).toBe('chat:*=0.50/1m-tokens');
    // A per-second price is not a speech price, so openai/tts-1's own price is the only one.
    expect(priceFor(list, 'speech', 'openai/tts-1')?.text).toBe('openai/tts-1=0.015/1k-chars');
  });

  it('has no cost without a price, or without the amount a unit price needs', () => {
    expect(costOf(list, 'fetch', 'jina-reader', undefined)).toBeNull();
    expect(costOf(list, 'video', 'xai/grok-imagine-video', undefined)).toBeNull();
    expect(costOf([], 'video', 'xai/grok-imagine-video', 6)).toBeNull();
  });

  it('says what is wrong with a price', () => {
    expect(priceError('openai/tts-1=0.015/word')).toBe(
      '"openai/tts-1=0.015/word": unknown unit word; units are call, second, minute, char, 1k-chars, 1m-chars, token, 1k-tokens, 1m-tokens',
    );
    expect(priceError('video:xai/grok-imagine-video=0.05/1k-chars')).toBe(
      '"video:xai/grok-imagine-video=0.05/1k-chars": video is not billed per 1k-chars',
    );
    expect(priceError('movie:*=1/call')).toBe(
      '"movie:*=1/call": unknown kind movie; kinds are video, speech, transcription, chat, search, fetch',
    );
    expect(priceError('openai/tts-1')).toBe(
      '"openai/tts-1" is not a price: each price is [kind:]model=price/unit, e.g. openai/tts-1=0.015/1k-chars',
    );
    expect(priceError('seconds-model=1/seconds')).toBeNull();
  });
});
