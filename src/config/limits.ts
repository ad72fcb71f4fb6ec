// GATEWAY_LIMITS (everyone sharing the ledger together) and GATEWAY_LIMITS_PER_USER (each person
// alone): how many billed calls of a kind, or how much estimated cost, a period allows.
//
//   limits  := entry ("," entry)*
//   entry   := kind "=" count "/" period  |  "cost" "=" amount "/" period
//   kind    := video | speech | transcription | chat | search | fetch
//   period  := hour | day        (rolling: the last 60 minutes, the last 24 hours)
//            | week | month      (calendar, UTC: since Monday 00:00, since the 1st 00:00)
//            | session           (this server process, since it started)
//
// e.g. `video=5/day,speech=100/day,chat=300/hour,cost=2.50/day`. A count is a whole number (0
// stops the kind altogether); a cost is in the currency GATEWAY_PRICES is written in.

import { BILLED_KINDS, type BilledKind, isBilledKind, PERIODS, type Period } from './billed-kinds.js';

export interface Limit {
  /** A kind of call (counted in calls) or `cost` (the estimated cost of every kind together). */
  subject: BilledKind | 'cost';
  max: number;
  period: Period;
  /** As the user would write it, e.g. `video=5/day`. */
  text: string;
  /** From GATEWAY_LIMITS_PER_USER: each person's calls are counted apart. */
  perUser?: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const ENTRY = /^([a-z]+)\s*=\s*([0-9]*\.?[0-9]+)\s*\/\s*([a-z]+)$/;
const SHAPE = 'each limit is kind=count/period, e.g. video=5/day';

export function parseLimits(text: string): Parsed<Limit[]> {
  const limits: Limit[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    const match = ENTRY.exec(entry);
    if (!match) return { ok: false, error: `"${raw.trim()}" is not a limit: ${SHAPE}` };
    const [, subject = '', amount = '', period = ''] = match;
    if (subject !== 'cost' && !isBilledKind(subject))
      return {
        ok: false,
        error: `"${entry}": unknown kind ${subject}; kinds are ${BILLED_KINDS.join(', ')} and cost`,
      };
    if (!(PERIODS as readonly string[]).includes(period))
      return { ok: false, error: `"${entry}": the period must be hour, day, week, month or session` };
    const max = Number(amount);
    if (subject !== 'cost' && !Number.isInteger(max))
      return { ok: false, error: `"${entry}": the count must be a whole number of calls` };
    const limit: Limit = { subject, max, period: period as Period, text: `${subject}=${amount}/${period}` };
    if (limits.some((l) => l.subject === limit.subject && l.period === limit.period))
      return { ok: false, error: `"${entry}": ${subject} per ${period} is limited twice` };
    limits.push(limit);
  }
  return { ok: true, value: limits };
}
