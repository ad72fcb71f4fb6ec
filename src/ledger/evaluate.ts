// What the calls in the ledger mean for the next one: whether a call counts against the limits,
// whether a new call fits every limit — and if not, when it would. The store reads the calls;
// the decision is made here, once, for every store.

import { type BilledKind, PERIOD_MS } from '../config/billed-kinds.js';
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
  prices: readonly Price[];
  now: number;
}

/** A call about to be sent, as the limits see it. */
export interface Proposed {
  kind: BilledKind;
  model: string;
  /** The amount expected (video seconds, characters…), when known before sending. */
  expected?: number;
  /**
   * The argument that gives the amount (`duration`), for a call whose amount the gateway does not
   * report on acceptance: without it, its cost cannot be known, and a cost limit does not let it
   * through as free.
   */
  amountArgument?: string;
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
  /** For a `cost` limit: this call's cost cannot be known before sending without this argument. */
  needs?: { argument: string; price: string };
  /**
   * When a call like this one fits again (ISO time): the oldest counted calls leaving the window.
   * Null for a session limit (not before the server restarts) or when it never will.
   */
  nextAt: string | null;
  /** Nothing of this call was sent, so nothing of it was billed. */
  sent: false;
}

const EPSILON = 1e-9;

/** The calls a limit's period holds: the last hour or day, or this session. */
function windowOf(view: View, limit: Limit): Window {
  const within: Window =
    limit.period === 'session' ? { session: view.sessionId } : { since: view.now - PERIOD_MS[limit.period] };
  return limit.subject === 'cost' ? within : { ...within, kind: limit.subject };
}

/** Calls, or for a cost limit their estimated cost, and the calls whose cost is unknown. */
function used(view: View, limit: Limit, rows: readonly TallyRow[]): { used: number; unpriced: number } {
  let total = 0;
  let unpriced = 0;
  for (const row of rows) {
    if (limit.subject !== 'cost') {
      total += row.calls;
      continue;
    }
    const group = groupCost(view.prices, row);
    total += group.cost;
    unpriced += group.unpriced;
  }
  return { used: total, unpriced };
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

/** Null when the call fits every limit; else the refusal of the limit that holds it back longest. */
export async function refusal(
  view: View,
  limits: readonly Limit[],
  call: Proposed,
): Promise<LimitRefusal | null> {
  let worst: LimitRefusal | null = null;
  let worstAt = -Infinity;
  const applying = limits.filter((limit) => limit.subject === 'cost' || limit.subject === call.kind);
  const rows = await tallies(
    view.db,
    applying.map((limit) => windowOf(view, limit)),
  );
  for (const [i, limit] of applying.entries()) {
    const tally = used(view, limit, rows[i] ?? []);
    let found: LimitRefusal | null;
    if (limit.subject === 'cost') {
      const unknown = unknownCost(view.prices, call);
      found = unknown
        ? { setting: 'GATEWAY_LIMITS', limit, used: tally.used, needs: unknown, nextAt: null, sent: false }
        : await costRefusal(
            view,
            limit,
            tally.used,
            costOf(view.prices, call.kind, call.model, call.expected) ?? 0,
          );
    } else found = await countRefusal(view, limit, tally.used);
    if (!found) continue;
    const at = found.nextAt === null ? Infinity : Date.parse(found.nextAt);
    if (at > worstAt) [worst, worstAt] = [found, at];
  }
  return worst;
}

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
    if (leaving) nextAt = new Date(leaving.beganAt + PERIOD_MS[limit.period]).toISOString();
  }
  return { setting: 'GATEWAY_LIMITS', limit, used, nextAt, sent: false };
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
        nextAt = new Date(call.beganAt + PERIOD_MS[limit.period]).toISOString();
        break;
      }
    }
  }
  return { setting: 'GATEWAY_LIMITS', limit, used, thisCost, nextAt, sent: false };
}

/** The refusal in words: the limit, its use, when the next call is possible, how to raise it. */
export function refusalSentence(r: LimitRefusal, now: number): string {
  const { limit } = r;
  if (r.needs) {
    return (
      `Not sent, and nothing billed: the limit ${limit.text} (GATEWAY_LIMITS) needs this call's estimated cost, ` +
      `and without ${r.needs.argument} it cannot be known before sending (${r.needs.price} in GATEWAY_PRICES). ` +
      `Pass ${r.needs.argument} to have it checked against the limit.`
    );
  }
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
