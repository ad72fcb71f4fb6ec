// The ledger's rows and reads as the store (sql-store.ts) gives them, on either database: SQLite
// (one file in GATEWAY_LEDGER_DIR, every process of the user on one machine) or PostgreSQL
// (GATEWAY_LEDGER_URL, every process on every host that names it); and the ledger's words for
// what goes wrong. What the rows mean, the limits and the duplicate guard are decided once, above
// them (ledger.ts, evaluate.ts).
//
// Times are milliseconds since the epoch, from the store's clock (`now()`): the process's for
// SQLite, the database server's for PostgreSQL, so hosts whose clocks differ cannot split a day.

import type { BilledKind } from '../config/billed-kinds.js';

/** The ledger cannot record a billed call, so the call is not sent: the message says why. */
export class LedgerUnavailable extends Error {
  override name = 'LedgerUnavailable';
}

/** An error's code (errno, SQLite or PostgreSQL), else its message. */
export function codeOf(error: unknown): string {
  const e = error as { code?: unknown; errstr?: unknown };
  if (typeof e.errstr === 'string' && e.errstr) return e.errstr;
  if (typeof e.code === 'string' && e.code && e.code !== 'ERR_SQLITE_ERROR') return e.code;
  return error instanceof Error ? error.message : String(error);
}

/** How long a begin waited for the lock, as the busy sentences say it: `800 ms`, `5 s`. */
export function waitText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

export type Outcome = 'accepted' | 'refused' | 'unknown' | 'declined';

/** A billed call as the store keeps it: its begin, and its end once recorded. */
export interface CallRow {
  id: string;
  /** When it was begun (store clock, ms). */
  beganAt: number;
  /** The server process's session id (pids are reused). */
  session: string;
  pid: number;
  host: string;
  kind: BilledKind;
  tool: string;
  model: string;
  /** callHash() of the purchase: how a duplicate is recognised. */
  hash: string;
  /** The prompt's or text's first words. */
  words: string;
  /** The Idempotency-Key of a video submit. */
  key: string | null;
  /** The amount expected, when known before sending. */
  expected: number | null;
  /** Null while the call has not ended. */
  outcome: Outcome | null;
  endedAt: number | null;
  job: string | null;
  /** As the gateway reported it. */
  amount: number | null;
  reason: string | null;
  /** The job's status when accepted (running…). */
  status: string | null;
  /** The file the call saved (speech). */
  file: string | null;
}

/** The begin of a call: what is known before it is sent. `beganAt` is the store's to set. */
export type NewCall = Omit<
  CallRow,
  'beganAt' | 'outcome' | 'endedAt' | 'job' | 'amount' | 'reason' | 'status' | 'file'
>;

/** What became of a call. */
export interface CallEndRow {
  outcome: Outcome;
  job: string | null;
  amount: number | null;
  reason: string | null;
  status: string | null;
  file: string | null;
}

/** Which calls a tally or a listing takes: those begun after `since`, or this session's. */
export interface Window {
  /** Begun strictly after this time (store clock, ms); absent: any time. */
  since?: number;
  /** Only this session's calls. */
  session?: string;
  /** Only this kind. */
  kind?: BilledKind;
}

/**
 * Counted calls (accepted, unknown, or not ended yet) of one kind and model within a window, and
 * their amounts: enough to count calls and estimate costs without reading each call.
 */
export interface TallyRow {
  kind: BilledKind;
  model: string;
  calls: number;
  /** Sum of the amounts reported, else expected, of the calls that have one. */
  amount: number;
  /** Calls with neither an amount reported nor one expected. */
  unmeasured: number;
}

/** A counted call's time and what its cost is estimated from: for when a used-up limit frees up. */
export interface CountedCall {
  beganAt: number;
  kind: BilledKind;
  model: string;
  /** Reported, else expected. */
  amount: number | null;
}

/** Calls of a window grouped for a usage report: by kind, model and outcome (null: not ended). */
export interface UsageRow {
  kind: BilledKind;
  model: string;
  outcome: Outcome | null;
  inHour: boolean;
  inDay: boolean;
  inSession: boolean;
  calls: number;
  /** Sum of the amounts reported, else expected. */
  amount: number;
  unmeasured: number;
}

/** The reads a begin decides on, inside its transaction. */
export interface LedgerReads {
  /** The store's clock, ms since the epoch. */
  now(): Promise<number>;
  /**
   * The newest counted call with this hash begun after `since`, except one sent with `exceptKey`
   * (a retry with the same idempotency key is how an unknown outcome is resolved).
   */
  duplicate(hash: string, since: number, exceptKey: string | null): Promise<CallRow | null>;
  /** Counted calls within each window, by kind and model: one read for all. */
  tallies(windows: readonly Window[]): Promise<TallyRow[][]>;
  /** Counted calls within the window, oldest first. */
  counted(window: Window): Promise<CountedCall[]>;
}

/** A begin's transaction: its reads, and the one write it may make. */
export interface BeginTransaction extends LedgerReads {
  /** Records the begin, at the store's clock; returns its row's number, which ends it. */
  insert(call: NewCall): Promise<number>;
  /** Records a call begun and ended at once (refused by a limit: nothing sent). */
  insertEnded(call: NewCall, end: CallEndRow): Promise<void>;
}
