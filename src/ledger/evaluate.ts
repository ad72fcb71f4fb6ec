// What the calls read from the files mean: each call's state, whether it counts against the
// limits, and whether a new call fits every limit — and if not, when it would.

import { type BilledKind, PERIOD_MS, type Period } from './kinds.js';
import type { Limit } from './limits.js';
import { costOf, type Price } from './prices.js';
import type { CallEntry, Outcome } from './records.js';

/** A call's state: its outcome, or `pending` while its process may still be sending it. */
export type CallState = Outcome | 'pending';

/** Calls that may have been billed count against the limits: all but the refused and declined. */
export function counts(state: CallState): boolean {
  return state === 'accepted' || state === 'unknown' || state === 'pending';
}

/** Calls that count (and their estimated cost) within a period ending now: a running tally. */
export interface QuickTally {
  of(subject: BilledKind | 'cost', period: Period, now: number): { calls: number; cost: number };
}

/** What evaluating needs besides the calls. */
export interface View {
  entries: ReadonlyMap<string, CallEntry>;
  /** Lets a call that clearly fits through without going over every call. */
  quick?: QuickTally;
  stateOf(entry: CallEntry): CallState;
  sessionId: string;
  prices: readonly Price[];
  now: number;
}

/** A call about to be sent, as the limits see it. */
export interface Proposed {
  kind: BilledKind;
  model: string;
  /** The amount expected (video seconds, characters…), when known before sending. */
  expected?: number;
}

/** A limit and how far it is used. */
export interface LimitUse {
  limit: Limit;
  /** Calls, or for `cost` the estimated cost, within the limit's period. */
  used: number;
  left: number;
  /** Calls counted whose cost is unknown (no price applies, or no amount); for `cost` limits. */
  unpriced: number;
  /** No further call fits (for a `cost` limit: not even one of unknown cost). */
  usedUp: boolean;
  /**
   * When a used-up limit lets the next call through (ISO): the oldest counted calls leaving the
   * window. Null while it has room, and for one that never frees up (a session limit, a limit of 0).
   */
  nextAt: string | null;
}

/** Why a call is not sent: everything the sentence that says so needs. */
export interface LimitRefusal {
  setting: 'GATEWAY_LIMITS';
  limit: Limit;
  /** Calls, or for `cost` the estimated cost, within the limit's period (this call not included). */
  used: number;
  /** This call's estimated cost, for a `cost` limit (0 when unknown). */
  thisCost?: number;
  /**
   * When a call like this one fits again (ISO time): the oldest counted calls leaving the window.
   * Null for a session limit (not before the server restarts) or when it never will.
   */
  nextAt: string | null;
  /** Nothing of this call was sent, so nothing of it was billed. */
  sent: false;
}

const EPSILON = 1e-9;
/** How far a running cost may drift from the sum of the calls' costs, relative to the limit. */
const QUICK_COST_MARGIN = 1e-6;

/**
 * Tallies the counted calls within a limit's period: calls, or for `cost` their estimated cost.
 * `each` receives every counted call (for working out when the limit frees up). A plain loop:
 * this runs under the lock, over every call of the last day.
 */
function tally(
  view: View,
  limit: Limit,
  each?: (at: number, cost: number | null) => void,
): { used: number; unpriced: number } {
  const since = limit.period === 'session' ? -Infinity : view.now - PERIOD_MS[limit.period];
  const isCost = limit.subject === 'cost';
  let used = 0;
  let unpriced = 0;
  for (const entry of view.entries.values()) {
    const begin = entry.begin;
    if (!begin || (!isCost && begin.kind !== limit.subject)) continue;
    if (limit.period === 'session' ? begin.session !== view.sessionId : !(entry.beganAt > since)) continue;
    if (!counts(view.stateOf(entry))) continue;
    let cost: number | null = null;
    if (isCost) {
      cost = costOf(view.prices, begin.kind, begin.model, entry.end?.amount ?? begin.expected);
      if (cost === null) unpriced++;
      else used += cost;
    } else used++;
    each?.(entry.beganAt, cost);
  }
  return { used, unpriced };
}

export function limitUse(view: View, limit: Limit): LimitUse {
  const { used, unpriced } = tally(view, limit);
  // The next call as the limit sees it: one more call, or for a cost limit one of unknown cost.
  const held = limit.subject === 'cost' ? costRefusal(view, limit, 0) : countRefusal(view, limit);
  return {
    limit,
    used,
    left: held ? 0 : Math.max(0, limit.max - used),
    unpriced,
    usedUp: held !== null,
    nextAt: held?.nextAt ?? null,
  };
}

/** Null when the call fits every limit; else the refusal of the limit that holds it back longest. */
export function refusal(view: View, limits: readonly Limit[], call: Proposed): LimitRefusal | null {
  let worst: LimitRefusal | null = null;
  let worstAt = -Infinity;
  for (const limit of limits) {
    if (limit.subject !== 'cost' && limit.subject !== call.kind) continue;
    const found =
      limit.subject === 'cost'
        ? costRefusal(view, limit, costOf(view.prices, call.kind, call.model, call.expected) ?? 0)
        : countRefusal(view, limit);
    if (!found) continue;
    const at = found.nextAt === null ? Infinity : Date.parse(found.nextAt);
    if (at > worstAt) [worst, worstAt] = [found, at];
  }
  return worst;
}

function countRefusal(view: View, limit: Limit): LimitRefusal | null {
  const quick = view.quick?.of(limit.subject, limit.period, view.now);
  if (quick && quick.calls + 1 <= limit.max) return null;
  const { used } = tally(view, limit);
  if (used + 1 <= limit.max) return null;
  // The call fits once enough of the oldest counted calls have left the window.
  const times: number[] = [];
  tally(view, limit, (at) => times.push(at));
  times.sort((a, b) => a - b);
  const leaving = times[used - limit.max];
  const nextAt =
    limit.period === 'session' || limit.max === 0 || leaving === undefined
      ? null
      : new Date(leaving + PERIOD_MS[limit.period]).toISOString();
  return { setting: 'GATEWAY_LIMITS', limit, used, nextAt, sent: false };
}

/** `thisCost`: the estimated cost of the call proposed (0 when unknown). */
function costRefusal(view: View, limit: Limit, thisCost: number): LimitRefusal | null {
  const fits = (spent: number) => spent < limit.max - EPSILON && spent + thisCost <= limit.max + EPSILON;
  // A running sum of costs drifts by rounding: only one that fits by a margin decides alone.
  const quick = view.quick?.of('cost', limit.period, view.now);
  if (quick && fits(quick.cost + QUICK_COST_MARGIN * Math.max(1, limit.max))) return null;
  const { used } = tally(view, limit);
  if (fits(used)) return null;
  let nextAt: string | null = null;
  if (limit.period !== 'session' && thisCost <= limit.max + EPSILON) {
    const calls: { at: number; cost: number | null }[] = [];
    tally(view, limit, (at, cost) => calls.push({ at, cost }));
    calls.sort((a, b) => a.at - b.at);
    let spent = used;
    for (const c of calls) {
      spent -= c.cost ?? 0;
      if (fits(spent)) {
        nextAt = new Date(c.at + PERIOD_MS[limit.period]).toISOString();
        break;
      }
    }
  }
  return { setting: 'GATEWAY_LIMITS', limit, used, thisCost, nextAt, sent: false };
}

/** The refusal in words: the limit, its use, when the next call is possible, how to raise it. */
export function refusalSentence(r: LimitRefusal, now: number): string {
  const { limit } = r;
  const span =
    limit.period === 'session'
      ? 'in this server process since it started'
      : `in the last ${limit.period === 'hour' ? 'hour' : '24 hours'}, across all of this user's server processes`;
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
    `Not sent, and nothing billed: the limit ${limit.text} (GATEWAY_LIMITS) is reached, with ${use}. ` +
    `${when}; to allow more, raise it in GATEWAY_LIMITS and restart the server.`
  );
}

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
