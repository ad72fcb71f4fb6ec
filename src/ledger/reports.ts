// The ledger as plain data for people and agents: the recent video jobs of every process (so a
// lost job_id is found again), and what has been used, against which limits, at what estimated
// cost. Shaping only: reading and deciding states happen elsewhere.

import {
  BILLED_KINDS,
  type BilledKind,
  MEASURE,
  type Measure,
  type Period,
  REPORT_PERIODS,
  type ReportPeriod,
} from '../config/billed-kinds.js';
import type { Price } from '../config/prices.js';
import { costOf, groupCost } from './costs.js';
import type { CallState, LimitUse } from './evaluate.js';
import { counts } from './evaluate.js';
import type { CallRow, PersonRow, TallyRow, UsageRow } from './sql.js';

/**
 * One billed call, as reports show it: when it was begun (ISO), the prompt's or text's first
 * words, the amount the gateway reported (else the amount expected) in `unit`, its cost estimated
 * from GATEWAY_PRICES (null without a price or an amount), the file it saved (speech), why it was
 * declined or refused, and whether this server process began it; who called, through which client.
 */
export interface LedgerCall {
  id: string;
  at: string;
  person: string;
  client: string | null;
  kind: BilledKind;
  tool: string;
  model: string;
  words: string;
  hash: string;
  state: CallState;
  jobId: string | null;
  idempotencyKey: string | null;
  amount: number | null;
  unit: Measure;
  cost: number | null;
  file: string | null;
  reason: string | null;
  endedAt: string | null;
  pid: number;
  thisSession: boolean;
}

export interface ReportContext {
  stateOf(call: CallRow): CallState;
  prices: readonly Price[];
  sessionId: string;
}

export function callOf(row: CallRow, ctx: ReportContext): LedgerCall {
  const amount = MEASURE[row.kind] === 'calls' ? 1 : (row.amount ?? row.expected);
  return {
    id: row.id,
    at: iso(row.beganAt),
    person: row.person,
    client: row.client,
    kind: row.kind,
    tool: row.tool,
    model: row.model,
    words: row.words,
    hash: row.hash,
    state: ctx.stateOf(row),
    jobId: row.job,
    idempotencyKey: row.key,
    amount,
    unit: MEASURE[row.kind],
    cost: costOf(ctx.prices, row.kind, row.model, amount ?? undefined),
    file: row.file,
    reason: row.reason,
    endedAt: row.endedAt === null ? null : iso(row.endedAt),
    pid: row.pid,
    thisSession: row.session === ctx.sessionId,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A video submit, as `video_status` without a job_id lists it: its job id (null while pending or
 * unknown), the job's last known status (queued, in_progress, completed, failed…) and when it was
 * seen, and for a pending or unknown submit the key a retry must reuse.
 */
export interface RecentJob {
  jobId: string | null;
  words: string;
  model: string;
  tool: string;
  at: string;
  state: CallState;
  status: string | null;
  statusAt: string | null;
  idempotencyKey: string | null;
  thisSession: boolean;
}

/** Video submits that made (or may have made) a job, newest first, with their last known status. */
export function recentJobsOf(
  rows: readonly CallRow[],
  statuses: ReadonlyMap<string, { status: string; at: number }>,
  ctx: ReportContext,
): RecentJob[] {
  const jobs: RecentJob[] = [];
  for (const row of rows) {
    const call = callOf(row, ctx);
    if (!counts(call.state)) continue;
    const seen = call.jobId ? statuses.get(call.jobId) : undefined;
    jobs.push({
      jobId: call.jobId,
      words: call.words,
      model: call.model,
      tool: call.tool,
      at: call.at,
      state: call.state,
      status: seen?.status ?? row.status,
      statusAt: seen ? iso(seen.at) : row.status ? call.endedAt : null,
      idempotencyKey: call.state === 'accepted' ? null : call.idempotencyKey,
      thisSession: call.thisSession,
    });
  }
  return jobs;
}

/** Calls that were (or may have been) billed: accepted, unknown or pending; amounts as reported, else expected. */
export interface KindUsage {
  calls: number;
  amount: number;
  unit: Measure;
}

/**
 * A period's use: of its billed calls, how many have an unknown outcome; calls refused by the
 * gateway or declined (nothing billed); the estimated cost of the priced calls (null when
 * GATEWAY_PRICES is not set) and the billed calls left out of it (no price, or no amount).
 */
export interface PeriodUsage {
  kinds: Record<BilledKind, KindUsage>;
  unknown: number;
  notBilled: number;
  cost: number | null;
  unpriced: number;
}

/**
 * Where the ledger is, each period's use (everyone's, and the person's the report is for), each
 * limit's use (as LimitUse; a per-person limit's, the person's), the latest calls of every process.
 */
export interface UsageReport {
  dir: string;
  at: string;
  session: { id: string; startedAt: string };
  periods: Record<ReportPeriod, PeriodUsage>;
  person: string | null;
  mine: Record<ReportPeriod, PeriodUsage> | null;
  limits: (Omit<LimitUse, 'limit'> & {
    limit: string;
    subject: BilledKind | 'cost';
    period: Period;
    max: number;
    perUser: boolean;
  })[];
  latest: LedgerCall[];
}

/**
 * What a usage report is made of: the calls of the last day and of this session, grouped; of the
 * calls not ended, how many are no longer being sent, per period; the latest calls; the limits.
 */
export interface UsageInputs {
  rows: readonly UsageRow[];
  unknownOpen: Record<'all' | 'mine', Record<ReportPeriod, number>>;
  latest: readonly CallRow[];
  limits: readonly LimitUse[];
}

export function usageOf(
  inputs: UsageInputs,
  ctx: ReportContext & {
    now: number;
    dir: string;
    sessionStartedAt: number;
    pricesSet: boolean;
    person: string | null;
  },
): UsageReport {
  const empty = () =>
    Object.fromEntries(REPORT_PERIODS.map((p) => [p, emptyPeriod(ctx.pricesSet)])) as Record<
      ReportPeriod,
      PeriodUsage
    >;
  const [periods, mine] = [empty(), empty()];
  for (const row of inputs.rows) {
    for (const period of REPORT_PERIODS) {
      const within = period === 'hour' ? row.inHour : period === 'day' ? row.inDay : row.inSession;
      if (within) addTo(periods[period], row, ctx.prices);
      if (within && row.mine) addTo(mine[period], row, ctx.prices);
    }
  }
  for (const period of REPORT_PERIODS) {
    periods[period].unknown += inputs.unknownOpen.all[period];
    mine[period].unknown += inputs.unknownOpen.mine[period];
  }
  return {
    dir: ctx.dir,
    at: iso(ctx.now),
    session: { id: ctx.sessionId, startedAt: iso(ctx.sessionStartedAt) },
    periods,
    person: ctx.person,
    mine: ctx.person === null ? null : mine,
    limits: inputs.limits.map(({ limit, ...use }) => ({
      limit: limit.text,
      subject: limit.subject,
      period: limit.period,
      max: limit.max,
      perUser: limit.perUser === true,
      ...use,
    })),
    latest: inputs.latest.map((row) => callOf(row, ctx)),
  };
}

function emptyPeriod(pricesSet: boolean): PeriodUsage {
  const kinds = Object.fromEntries(
    BILLED_KINDS.map((kind) => [kind, { calls: 0, amount: 0, unit: MEASURE[kind] }]),
  ) as Record<BilledKind, KindUsage>;
  return { kinds, unknown: 0, notBilled: 0, cost: pricesSet ? 0 : null, unpriced: 0 };
}

/** Adds a group of calls; calls not ended count as billed (their unknown share is added apart). */
function addTo(period: PeriodUsage, row: UsageRow, prices: readonly Price[]): void {
  if (row.outcome !== null && !counts(row.outcome)) {
    period.notBilled += row.calls;
    return;
  }
  const kind = period.kinds[row.kind];
  kind.calls += row.calls;
  kind.amount += MEASURE[row.kind] === 'calls' ? row.calls : row.amount;
  if (row.outcome === 'unknown') period.unknown += row.calls;
  if (period.cost === null) return;
  const group = groupCost(prices, row);
  period.cost += group.cost;
  period.unpriced += group.unpriced;
}

/**
 * A person's counted calls per kind in the last 24 hours and this calendar month, their estimated
 * cost (null without prices), and their use of each GATEWAY_LIMITS_PER_USER limit.
 */
export interface PersonUsage {
  person: string;
  day: Record<BilledKind, number>;
  month: Record<BilledKind, number>;
  dayCost: number | null;
  monthCost: number | null;
  limits: { limit: string; used: number; left: number; nextAt: string | null }[];
}

export function usageByPersonOf(
  people: readonly string[],
  rows: readonly PersonRow[],
  uses: readonly (readonly LimitUse[])[],
  prices: readonly Price[],
): PersonUsage[] {
  const none = () => Object.fromEntries(BILLED_KINDS.map((kind) => [kind, 0])) as Record<BilledKind, number>;
  const cost = (list: readonly TallyRow[]) =>
    prices.length === 0 ? null : list.reduce((sum, row) => sum + groupCost(prices, row).cost, 0);
  return people.map((person, i) => {
    const own = rows.filter((row) => row.person === person);
    const [day, month] = [none(), none()];
    for (const row of own) {
      if (row.inDay) day[row.kind] += row.calls;
      if (row.inMonth) month[row.kind] += row.calls;
    }
    return {
      person,
      day,
      month,
      dayCost: cost(own.filter((row) => row.inDay)),
      monthCost: cost(own.filter((row) => row.inMonth)),
      limits: (uses[i] ?? []).map((use) => ({
        limit: use.limit.text,
        used: use.used,
        left: use.left,
        nextAt: use.nextAt,
      })),
    };
  });
}
