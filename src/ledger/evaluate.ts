// What the calls in the ledger mean for the next one: whether a call counts against the limits,
// whether a new call fits every limit — and if not, when it would. Decided once, for every database.

import { type BilledKind, PERIOD_MS, periodSpan } from '../config/billed-kinds.js';
import type { Limit } from '../config/limits.js';
import type { Price } from '../config/prices.js';
import { costOf, groupCost, priceFor } from './costs.js';
import type { Statements } from './database.js';
import { countedCalls, type Outcome, type TallyRow, tallies, type Window } from './sql.js';

/** A call's state: its outcome, or `pending` while its process may still be sending it. */
export type CallState = Outcome | 'pending';

/** Calls that may have been billed count against the limits: all but the refused and declined. */
export function counts(state: CallState): boolean {
  return state === 'accepted' || state === 'unknown' || state === 'pending';
}

/** What evaluating needs besides the calls. */
export interface View {
  db: Statements;
  sessionId: string;
  /** Whose calls a per-person limit counts. */
  person: string;
  prices: readonly Price[];
  now: number;
}

/**
 * A call about to be sent, as the limits see it: the amount expected (video seconds,
 * characters…) when known before sending, and the argument that gives it (`duration`) for a call
 * whose amount the gateway does not report on acceptance: without it, its cost cannot be known,
 * and a cost limit does not let it through as free.
 */
export interface Proposed {
  kind: BilledKind;
  model: string;
  expected?: number;
  amountArgument?: string;
}

/**
 * A limit and how far it is used: calls, or for `cost` the estimated cost, within its period; the
 * calls counted whose cost is unknown; whether no further call fits (for `cost`: not even one of
 * unknown cost); and when a used-up limit lets the next call through (ISO), as the oldest counted
 * calls leave the window (null while it has room, or when it never frees up).
 */
export interface LimitUse {
  limit: Limit;
  used: number;
  left: number;
  unpriced: number;
  usedUp: boolean;
  nextAt: string | null;
}

/**
 * Why a call is not sent: everything the sentence that says so needs. `used` leaves this call
 * out; `thisCost` is its estimated cost under a `cost` limit (0 when unknown); `needs` names the
 * argument without which its cost cannot be known before sending; `nextAt` is when a call like it
 * fits again (null for a session limit, or never). Nothing of it was sent, nor billed.
 */
export interface LimitRefusal {
  setting: Setting;
  limit: Limit;
  used: number;
  thisCost?: number;
  needs?: { argument: string; price: string };
  nextAt: string | null;
  sent: false;
}

/** The setting a limit is written in: everyone's together, or each person's. */
export type Setting = 'GATEWAY_LIMITS' | 'GATEWAY_LIMITS_PER_USER';
export const settingOf = (limit: Limit): Setting =>
  limit.perUser ? 'GATEWAY_LIMITS_PER_USER' : 'GATEWAY_LIMITS';

const EPSILON = 1e-9;
/** The shares of a limit (in %) whose crossing a call's result and the budget webhook tell of. */
const SHARES = [80, 100] as const;

/**
 * A limit a call takes past 80 % or 100 % of what it allows: its use and what is left after the
 * call, and when more is possible (ISO: a rolling window's oldest call leaving it, a calendar
 * window's end; null for a session's limit, at the server's restart).
 */
export interface Crossing {
  limit: Limit;
  setting: Setting;
  share: (typeof SHARES)[number];
  used: number;
  left: number;
  until: string | null;
}

/**
 * The calls a limit's period holds: the last hour or day (after its start), this calendar week
 * or month (from its start), or this session; the person's alone for a per-person limit.
 */
function windowOf(view: View, limit: Limit): Window {
  const span = periodSpan(limit.period, view.now);
  const rolling = limit.period === 'hour' || limit.period === 'day';
  const within: Window = span
    ? { since: rolling ? span.start : span.start - 1 }
    : { session: view.sessionId };
  if (limit.perUser) within.person = view.person;
  return limit.subject === 'cost' ? within : { ...within, kind: limit.subject };
}

/** When a counted call begun at `at` leaves the limit's window: rolling, a period later; else at its end. */
function leaves(view: View, limit: Limit, at: number): string {
  const { period } = limit;
  const rolling = period === 'hour' || period === 'day';
  return new Date(rolling ? at + PERIOD_MS[period] : (periodSpan(period, view.now)?.end ?? at)).toISOString();
}

/** Calls, or for a cost limit their estimated cost, and the calls whose cost is unknown. */
function used(view: View, limit: Limit, rows: readonly TallyRow[]): { used: number; unpriced: number } {
  const groups = rows.map((row) =>
    limit.subject === 'cost' ? groupCost(view.prices, row) : { cost: row.calls, unpriced: 0 },
  );
  return groups.reduce((sum, g) => ({ used: sum.used + g.cost, unpriced: sum.unpriced + g.unpriced }), {
    used: 0,
    unpriced: 0,
  });
}

export async function limitUse(view: View, limit: Limit): Promise<LimitUse> {
  const [rows = []] = await tallies(view.db, [windowOf(view, limit)]);
  const tally = used(view, limit, rows);
  // The next call as the limit sees it: one more call, or for a cost limit one of unknown cost.
  const held =
    limit.subject === 'cost'
      ? await costRefusal(view, limit, tally.used, 0)
      : await countRefusal(view, limit, tally.used);
  return {
    limit,
    used: tally.used,
    left: held ? 0 : Math.max(0, limit.max - tally.used),
    unpriced: tally.unpriced,
    usedUp: held !== null,
    nextAt: held?.nextAt ?? null,
  };
}

/**
 * Whether the call fits every limit: else the refusal of the limit that holds it back longest;
 * if it fits, the limits it takes past 80 % or 100 % of what they allow.
 */
export async function judge(
  view: View,
  limits: readonly Limit[],
  call: Proposed,
): Promise<{ refusal: LimitRefusal | null; crossed: Crossing[] }> {
  let worst: LimitRefusal | null = null;
  const crossing: { limit: Limit; after: number; share: Crossing['share'] }[] = [];
  let worstAt = -Infinity;
  const applying = limits.filter((limit) => limit.subject === 'cost' || limit.subject === call.kind);
  const rows = await tallies(
    view.db,
    applying.map((limit) => windowOf(view, limit)),
  );
  const thisCost = costOf(view.prices, call.kind, call.model, call.expected) ?? 0;
  for (const [i, limit] of applying.entries()) {
    const tally = used(view, limit, rows[i] ?? []);
    let found: LimitRefusal | null;
    if (limit.subject === 'cost') {
      const unknown = unknownCost(view.prices, call);
      found = unknown
        ? { setting: settingOf(limit), limit, used: tally.used, needs: unknown, nextAt: null, sent: false }
        : await costRefusal(view, limit, tally.used, thisCost);
    } else found = await countRefusal(view, limit, tally.used);
    const after = tally.used + (limit.subject === 'cost' ? thisCost : 1);
    for (const share of found ? [] : SHARES) {
      const mark = (share / 100) * limit.max - EPSILON;
      if (tally.used < mark && after >= mark) crossing.push({ limit, after, share });
    }
    if (!found) continue;
    const at = found.nextAt === null ? Infinity : Date.parse(found.nextAt);
    if (at > worstAt) [worst, worstAt] = [found, at];
  }
  if (worst) return { refusal: worst, crossed: [] };
  // One statement at a time: a transaction's statements share one connection.
  const crossed: Crossing[] = [];
  for (const { limit, after, share } of crossing) {
    const [oldest] = limit.period === 'session' ? [] : await countedCalls(view.db, windowOf(view, limit));
    const until = limit.period === 'session' ? null : leaves(view, limit, oldest?.beganAt ?? view.now);
    crossed.push({
      limit,
      setting: settingOf(limit),
      share,
      used: after,
      left: Math.max(0, limit.max - after),
      until,
    });
  }
  return { refusal: null, crossed };
}

/** A crossing as a call's result says it, in one line. */
export function crossingSentence(c: Crossing): string {
  const { limit } = c;
  const more = c.until === null ? 'more when the server restarts' : `more from ${clock(c.until)}`;
  const left = limit.subject === 'cost' ? money(c.left) : c.left;
  const share = Math.floor((c.used / limit.max) * 100 + EPSILON);
  return `Budget: ${share} % of ${whose(limit)} limit ${limit.text} (${c.setting}) used, ${left} left; ${more}.`;
}

const whose = (limit: Limit) => (limit.perUser ? 'your' : 'the shared');

/** A call priced per unit whose amount is neither given nor reported: what would make it known. */
function unknownCost(prices: readonly Price[], call: Proposed): LimitRefusal['needs'] | undefined {
  if (call.expected !== undefined || call.amountArgument === undefined) return undefined;
  const price = priceFor(prices, call.kind, call.model);
  if (!price || price.measure === 'calls') return undefined;
  return { argument: call.amountArgument, price: price.text };
}

async function countRefusal(view: View, limit: Limit, used: number): Promise<LimitRefusal | null> {
  if (used + 1 <= limit.max) return null;
  // The call fits once enough of the oldest counted calls have left the window.
  let nextAt: string | null = null;
  if (limit.period !== 'session' && limit.max > 0) {
    const calls = await countedCalls(view.db, windowOf(view, limit));
    const leaving = calls[used - limit.max];
    if (leaving) nextAt = leaves(view, limit, leaving.beganAt);
  }
  return { setting: settingOf(limit), limit, used, nextAt, sent: false };
}

/** `thisCost`: the estimated cost of the call proposed (0 when unknown). */
async function costRefusal(
  view: View,
  limit: Limit,
  used: number,
  thisCost: number,
): Promise<LimitRefusal | null> {
  const fits = (spent: number) => spent < limit.max - EPSILON && spent + thisCost <= limit.max + EPSILON;
  if (fits(used)) return null;
  let nextAt: string | null = null;
  if (limit.period !== 'session' && thisCost <= limit.max + EPSILON) {
    let spent = used;
    for (const call of await countedCalls(view.db, windowOf(view, limit))) {
      spent -= costOf(view.prices, call.kind, call.model, call.amount ?? undefined) ?? 0;
      if (fits(spent)) {
        nextAt = leaves(view, limit, call.beganAt);
        break;
      }
    }
  }
  return { setting: settingOf(limit), limit, used, thisCost, nextAt, sent: false };
}

/** The refusal in words: the limit, its use, when the next call is possible, how to raise it. */
export function refusalSentence(r: LimitRefusal, now: number): string {
  const { limit, setting } = r;
  const named = `${whose(limit)} limit ${limit.text} (${setting})`;
  if (r.needs) {
    return (
      `Not sent, and nothing billed: ${named} needs this call's estimated cost, ` +
      `and without ${r.needs.argument} it cannot be known before sending (${r.needs.price} in GATEWAY_PRICES). ` +
      `Pass ${r.needs.argument} to have it checked against the limit.`
    );
  }
  const span = `${limit.perUser ? 'of yours ' : ''}${SPAN[limit.period]}${limit.perUser || limit.period === 'session' ? '' : ', by everyone sharing the ledger'}`;
  const use =
    limit.subject === 'cost'
      ? `an estimated ${money(r.used)} spent ${span}${r.thisCost ? `, and this call would cost about ${money(r.thisCost)}` : ''}`
      : `${r.used} ${limit.subject} ${r.used === 1 ? 'call' : 'calls'} ${span}`;
  const when =
    r.nextAt !== null
      ? `The next is possible at ${clock(r.nextAt)} (in ${duration(Date.parse(r.nextAt) - now)})`
      : limit.period === 'session'
        ? 'No more are possible until the server restarts'
        : limit.subject === 'cost'
          ? 'This call alone is estimated above the limit'
          : `The limit allows no ${limit.subject} calls`;
  return (
    `Not sent, and nothing billed: ${named} is reached, with ${use}. ` +
    `${when}; to allow more, raise it in ${setting} and restart the server.`
  );
}

const SPAN: Record<Limit['period'], string> = {
  hour: 'in the last hour',
  day: 'in the last 24 hours',
  week: 'this week (since Monday 00:00 UTC)',
  month: 'this month (since the 1st, 00:00 UTC)',
  session: 'in this server process since it started',
};

/** A cost, rounded as an estimate should be. */
export function money(amount: number): string {
  return amount >= 1
    ? amount.toFixed(2)
    : amount
        .toPrecision(2)
        .replace(/(\.\d*?)0+$/, '$1')
        .replace(/\.$/, '');
}

/** A time as refusals and reports say it: `2026-11-24 14:05 UTC`. */
export function clock(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A span as refusals and reports say it: `40 s`, `12 min`, `3 h 5 min`. */
export function duration(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.ceil(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
