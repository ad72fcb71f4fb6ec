// The ledger as plain data for people and agents: the recent video jobs of every process (so a
// lost job_id is found again), and what has been used, against which limits, at what estimated
// cost. Shaping only: reading and deciding states happen elsewhere.

import type { CallState, LimitUse } from './evaluate.js';
import { counts } from './evaluate.js';
import {
  BILLED_KINDS,
  type BilledKind,
  MEASURE,
  type Measure,
  PERIOD_MS,
  PERIODS,
  type Period,
} from './kinds.js';
import { costOf, type Price } from './prices.js';
import type { CallEntry, StatusRecord } from './records.js';

/** One billed call, as reports show it. */
export interface LedgerCall {
  id: string;
  /** When it was begun (ISO). */
  at: string;
  kind: BilledKind;
  tool: string;
  model: string;
  /** The prompt's or text's first words. */
  words: string;
  hash: string;
  state: CallState;
  jobId: string | null;
  idempotencyKey: string | null;
  /** The amount the gateway reported (else the amount expected), in `unit`. */
  amount: number | null;
  unit: Measure;
  /** Estimated from GATEWAY_PRICES; null without a price or an amount. */
  cost: number | null;
  /** A saved file (speech), when the call made one. */
  file: string | null;
  /** Why it was declined or refused, when it says. */
  reason: string | null;
  endedAt: string | null;
  pid: number;
  /** Begun by this server process. */
  thisSession: boolean;
}

export interface ReportContext {
  stateOf(entry: CallEntry): CallState;
  prices: readonly Price[];
  sessionId: string;
}

export function callOf(entry: CallEntry, ctx: ReportContext): LedgerCall | null {
  const { begin, end } = entry;
  if (!begin) return null;
  const amount = MEASURE[begin.kind] === 'calls' ? 1 : (end?.amount ?? begin.expected ?? null);
  return {
    id: entry.id,
    at: begin.at,
    kind: begin.kind,
    tool: begin.tool,
    model: begin.model,
    words: begin.words,
    hash: begin.hash,
    state: ctx.stateOf(entry),
    jobId: end?.job ?? null,
    idempotencyKey: begin.key ?? null,
    amount,
    unit: MEASURE[begin.kind],
    cost: costOf(ctx.prices, begin.kind, begin.model, amount ?? undefined),
    file: end?.file ?? null,
    reason: end?.reason ?? null,
    endedAt: end?.at ?? null,
    pid: begin.pid,
    thisSession: begin.session === ctx.sessionId,
  };
}

/** A video submit, as `video_status` without a job_id lists it. */
export interface RecentJob {
  /** Null while the submit is pending or when its outcome is unknown. */
  jobId: string | null;
  words: string;
  model: string;
  tool: string;
  at: string;
  state: CallState;
  /** The job's last known status (queued, in_progress, completed, failed…), and when it was seen. */
  status: string | null;
  statusAt: string | null;
  /** For a pending or unknown submit: the key a retry must reuse, so the gateway can recognise it. */
  idempotencyKey: string | null;
  thisSession: boolean;
}

/** Video submits that made (or may have made) a job, newest first. */
export function recentJobsOf(
  entries: Iterable<CallEntry>,
  statuses: ReadonlyMap<string, StatusRecord>,
  ctx: ReportContext,
  limit: number,
): RecentJob[] {
  const jobs: RecentJob[] = [];
  for (const entry of entries) {
    if (entry.begin?.kind !== 'video') continue;
    const call = callOf(entry, ctx);
    if (!call || !counts(call.state)) continue;
    const status = call.jobId ? statuses.get(call.jobId) : undefined;
    const endStatus = entry.end?.status;
    jobs.push({
      jobId: call.jobId,
      words: call.words,
      model: call.model,
      tool: call.tool,
      at: call.at,
      state: call.state,
      status: status?.status ?? endStatus ?? null,
      statusAt: status?.at ?? (endStatus ? (entry.end?.at ?? null) : null),
      idempotencyKey: call.state === 'accepted' ? null : call.idempotencyKey,
      thisSession: call.thisSession,
    });
  }
  return newestFirst(jobs).slice(0, limit);
}

export interface KindUsage {
  /** Calls that were (or may have been) billed: accepted, unknown or pending. */
  calls: number;
  /** Their amounts as reported (else as expected), in `unit`. */
  amount: number;
  unit: Measure;
}

export interface PeriodUsage {
  kinds: Record<BilledKind, KindUsage>;
  /** Of `calls`, how many have an unknown outcome. */
  unknown: number;
  /** Calls refused by the gateway or declined (by the user or a limit): nothing billed. */
  notBilled: number;
  /** Estimated cost of the priced calls; null when GATEWAY_PRICES is not set. */
  cost: number | null;
  /** Billed calls no price applies to (or whose amount is unknown), left out of `cost`. */
  unpriced: number;
}

export interface UsageReport {
  /** Where the ledger is. */
  dir: string;
  at: string;
  session: { id: string; startedAt: string };
  periods: Record<Period, PeriodUsage>;
  /** Each limit of GATEWAY_LIMITS, how much of it is used and what is left. */
  limits: {
    limit: string;
    subject: BilledKind | 'cost';
    period: Period;
    max: number;
    used: number;
    left: number;
    unpriced: number;
    /** No further call fits. */
    usedUp: boolean;
    /** When a used-up limit lets the next call through (ISO); null while it has room, or never. */
    nextAt: string | null;
  }[];
  /** The latest calls of every process, newest first. */
  latest: LedgerCall[];
}

export function usageOf(
  entries: Iterable<CallEntry>,
  ctx: ReportContext & { now: number; dir: string; sessionStartedAt: number; pricesSet: boolean },
  limits: readonly LimitUse[],
  latestCount: number,
): UsageReport {
  const periods = Object.fromEntries(PERIODS.map((p) => [p, emptyPeriod(ctx.pricesSet)])) as Record<
    Period,
    PeriodUsage
  >;
  const calls: LedgerCall[] = [];
  for (const entry of entries) {
    const call = callOf(entry, ctx);
    if (!call) continue;
    calls.push(call);
    const at = Date.parse(call.at);
    for (const period of PERIODS) {
      const within = period === 'session' ? call.thisSession : at > ctx.now - PERIOD_MS[period];
      if (within) addTo(periods[period], call);
    }
  }
  const latest = newestFirst(calls).slice(0, latestCount);
  return {
    dir: ctx.dir,
    at: new Date(ctx.now).toISOString(),
    session: { id: ctx.sessionId, startedAt: new Date(ctx.sessionStartedAt).toISOString() },
    periods,
    limits: limits.map((use) => ({
      limit: use.limit.text,
      subject: use.limit.subject,
      period: use.limit.period,
      max: use.limit.max,
      used: use.used,
      left: use.left,
      unpriced: use.unpriced,
      usedUp: use.usedUp,
      nextAt: use.nextAt,
    })),
    latest,
  };
}

/** Newest first; calls begun in the same millisecond, the one read last first. */
function newestFirst<T extends { at: string }>(items: T[]): T[] {
  return items
    .map((item, order) => ({ item, order }))
    .sort((a, b) => (a.item.at < b.item.at ? 1 : a.item.at > b.item.at ? -1 : b.order - a.order))
    .map(({ item }) => item);
}

function emptyPeriod(pricesSet: boolean): PeriodUsage {
  const kinds = Object.fromEntries(
    BILLED_KINDS.map((kind) => [kind, { calls: 0, amount: 0, unit: MEASURE[kind] }]),
  ) as Record<BilledKind, KindUsage>;
  return { kinds, unknown: 0, notBilled: 0, cost: pricesSet ? 0 : null, unpriced: 0 };
}

function addTo(period: PeriodUsage, call: LedgerCall): void {
  if (!counts(call.state)) {
    period.notBilled++;
    return;
  }
  const kind = period.kinds[call.kind];
  kind.calls++;
  kind.amount += call.amount ?? 0;
  if (call.state === 'unknown') period.unknown++;
  if (period.cost === null) return;
  if (call.cost === null) period.unpriced++;
  else period.cost += call.cost;
}
