// The kinds of billed call the ledger records, and what each one's amount measures. Limits,
// prices and the reports all speak of these.

export const BILLED_KINDS = ['video', 'speech', 'transcription', 'chat', 'search', 'fetch'] as const;
export type BilledKind = (typeof BILLED_KINDS)[number];

/** What a call's amount counts: video seconds, characters of text spoken, audio seconds, tokens, calls. */
export type Measure = 'seconds' | 'chars' | 'tokens' | 'calls';

export const MEASURE: Readonly<Record<BilledKind, Measure>> = {
  video: 'seconds',
  speech: 'chars',
  transcription: 'seconds',
  chat: 'tokens',
  search: 'calls',
  fetch: 'calls',
};

export function isBilledKind(text: string): text is BilledKind {
  return (BILLED_KINDS as readonly string[]).includes(text);
}

/**
 * A limit's periods: hour and day (rolling), week and month (calendar, UTC: a week starts Monday
 * 00:00), and the process's own session.
 */
export const PERIODS = ['hour', 'day', 'week', 'month', 'session'] as const;
export type Period = (typeof PERIODS)[number];
/** The periods a usage report counts calls over. */
export const REPORT_PERIODS = ['hour', 'day', 'session'] as const;
export type ReportPeriod = (typeof REPORT_PERIODS)[number];

/** A rolling period's length. */
export const PERIOD_MS = { hour: 3_600_000, day: 86_400_000 } as const;
const DAY_MS = PERIOD_MS.day;

/**
 * When a period that holds `now` began and when it ends (ms; for a rolling one, when a call begun
 * `now` leaves it). The session has no time span: null.
 */
export function periodSpan(period: Period, now: number): { start: number; end: number } | null {
  if (period === 'session') return null;
  if (period === 'hour' || period === 'day') return { start: now - PERIOD_MS[period], end: now };
  const date = new Date(now);
  if (period === 'month') {
    const [y, m] = [date.getUTCFullYear(), date.getUTCMonth()];
    return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
  }
  const start = Math.floor(now / DAY_MS) * DAY_MS - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  return { start, end: start + 7 * DAY_MS };
}

/**
 * How long calls are kept: longer than the longest window (a calendar month of 31 days), so
 * nothing a limit counts is removed. The duplicate window's default.
 */
export const RETENTION_DAYS = 32;
export const DEFAULT_DUPLICATE_WINDOW_SECONDS = 600;
