// The usage report as data: the `usage` tool's structured content and `gateway-tools-mcp usage
// --json`. The text forms (usage-text.ts) are written from this, so every form says the same.

import { BILLED_KINDS, type BilledKind, MEASURE, type ReportPeriod } from '../../config/billed-kinds.js';
import type { PeriodUsage, UsageReport } from '../../ledger/reports.js';

/** How many of the latest calls a report lists. */
export const LATEST_CALLS = 5;

export interface PeriodData {
  /** Calls that were or may have been billed (accepted, unknown, pending), per kind. */
  calls: Record<BilledKind, number>;
  /** Their amounts, named with their unit (`video_seconds`, `chat_tokens`), where not zero. */
  amounts: Record<string, number>;
  /** Estimated from GATEWAY_PRICES; null when no prices are set. */
  cost: number | null;
  /** Billed calls no price applies to, left out of `cost`. */
  unpriced: number;
  /** Of the calls counted, those whose outcome is unknown. */
  unknown: number;
  /** Refused by the gateway, or declined (by the user or a limit): nothing billed. */
  not_billed: number;
}

export interface LimitData {
  /** As written in GATEWAY_LIMITS or GATEWAY_LIMITS_PER_USER: `video=5/day`. */
  limit: string;
  /** `everyone`: GATEWAY_LIMITS, all calls together; `you`: GATEWAY_LIMITS_PER_USER, the caller's calls. */
  scope: 'everyone' | 'you';
  /** Calls (or estimated cost) in the limit's period; null for a session limit seen from outside a server. */
  used: number | null;
  /** 0 when used up. */
  left: number | null;
  /** When a used-up limit lets the next call through (ISO); null while there is room, or never. */
  next_at: string | null;
}

export interface LatestCall {
  at: string;
  tool: string;
  model: string;
  /** accepted, refused, declined, unknown, or pending (being sent). */
  outcome: string;
  /** The prompt's or text's first words. */
  words: string;
}

export interface UsageData {
  /** The ledger's folder. */
  ledger: string;
  /** hour and day (rolling, every process of this user) and, in a server, session (this process). */
  periods: Partial<Record<ReportPeriod, PeriodData>>;
  /** The same periods, of the caller's calls alone (in a server). */
  you?: { person: string; periods: Partial<Record<ReportPeriod, PeriodData>> };
  limits: LimitData[];
  /** Newest first. */
  latest: LatestCall[];
}

/**
 * The report as data. Outside a server (`withSession: false`) there is no session: its period is
 * left out and session limits show no use.
 */
export function usageData(report: UsageReport, withSession: boolean): UsageData {
  const periods: Partial<Record<ReportPeriod, PeriodData>> = {
    hour: periodData(report.periods.hour),
    day: periodData(report.periods.day),
  };
  if (withSession) periods.session = periodData(report.periods.session);
  const { mine } = report;
  return {
    ledger: report.dir,
    periods,
    ...(mine && report.person !== null
      ? {
          you: {
            person: report.person,
            periods: Object.fromEntries(
              Object.keys(periods).map((p) => [p, periodData(mine[p as ReportPeriod])]),
            ),
          },
        }
      : {}),
    limits: report.limits.map((l) => {
      const unseen = !withSession && l.period === 'session';
      return {
        limit: l.limit,
        scope: l.perUser ? ('you' as const) : ('everyone' as const),
        used: unseen ? null : round(l.used),
        left: unseen ? null : round(l.left),
        next_at: unseen ? null : l.nextAt,
      };
    }),
    latest: report.latest.slice(0, LATEST_CALLS).map((c) => ({
      at: c.at,
      tool: c.tool,
      model: c.model,
      outcome: c.state,
      words: c.words,
    })),
  };
}

function periodData(period: PeriodUsage): PeriodData {
  const calls = {} as Record<BilledKind, number>;
  const amounts: Record<string, number> = {};
  for (const kind of BILLED_KINDS) {
    const { calls: count, amount } = period.kinds[kind];
    calls[kind] = count;
    if (MEASURE[kind] !== 'calls' && amount > 0) amounts[`${kind}_${MEASURE[kind]}`] = round(amount);
  }
  return {
    calls,
    amounts,
    cost: period.cost === null ? null : round(period.cost),
    unpriced: period.unpriced,
    unknown: period.unknown,
    not_billed: period.notBilled,
  };
}

/** Sums of prices and seconds, without the float noise of adding them up (0.30000000000000004). */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
