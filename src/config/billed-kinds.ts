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

/** The rolling periods and the process's own session. */
export const PERIODS = ['hour', 'day', 'session'] as const;
export type Period = (typeof PERIODS)[number];

/** A rolling period's length; the session has none (it runs from the process's start). */
export const PERIOD_MS: Readonly<Record<Exclude<Period, 'session'>, number>> = {
  hour: 3_600_000,
  day: 86_400_000,
};

/** The longest rolling window anything looks back over: limits and the duplicate guard. */
export const LONGEST_WINDOW_MS = PERIOD_MS.day;

/** How long day files are kept, and the duplicate window unless set: the settings show these. */
export const RETENTION_DAYS = 30;
export const DEFAULT_DUPLICATE_WINDOW_SECONDS = 600;
