// Running tallies of the calls that count against the limits, kept up as records are read, so a
// limit check under the lock costs the same with ten calls in the last day as with ten thousand.
//
// A call counts from its begin until an end says it was refused or declined (pending, unknown
// and accepted calls may have been billed), so whether a call counts depends on its records
// only, never on the clock. The clock moves the rolling windows: per kind, the calls are kept in
// the order they began, and each window (the last hour, the last day) keeps where it starts and
// the tally from there on, moved along as the clock moves. The session's tally has no window.
//
// The evaluation (evaluate.ts) decides every refusal, and anything near a cost limit, from the
// calls themselves: these tallies only let a call that clearly fits through without a scan.

import { counts } from './evaluate.js';
import { BILLED_KINDS, type BilledKind, PERIOD_MS } from './kinds.js';
import { costOf, type Price } from './prices.js';
import type { CallEntry } from './records.js';

/** Calls that count, and their estimated cost (`unpriced`: those without one). */
export interface Tally {
  calls: number;
  cost: number;
  unpriced: number;
}

type Window = keyof typeof PERIOD_MS;
const WINDOWS = Object.keys(PERIOD_MS) as Window[];

/** What one call adds to a tally, as it was added (taken back exactly so). */
interface Share {
  kind: BilledKind;
  beganAt: number;
  counts: boolean;
  cost: number | null;
  ownSession: boolean;
}

interface WindowTally extends Tally {
  /** The window's start as of the last move: it holds the calls begun after this. */
  since: number;
  /** The index in the kind's calls of the window's first call. */
  first: number;
}

class KindTallies {
  /** This kind's calls, in the order they began. */
  readonly calls: CallEntry[] = [];
  readonly windows: Record<Window, WindowTally> = {
    hour: { calls: 0, cost: 0, unpriced: 0, since: Number.NEGATIVE_INFINITY, first: 0 },
    day: { calls: 0, cost: 0, unpriced: 0, since: Number.NEGATIVE_INFINITY, first: 0 },
  };
  readonly session: Tally = { calls: 0, cost: 0, unpriced: 0 };
}

export class Tallies {
  private readonly kinds = new Map<BilledKind, KindTallies>(
    BILLED_KINDS.map((kind) => [kind, new KindTallies()]),
  );
  private readonly shares = new Map<CallEntry, Share>();

  constructor(
    private readonly prices: readonly Price[],
    private readonly sessionId: string,
  ) {}

  /** Takes a call's share out before its records change; `changed` puts it back after. */
  changing(entry: CallEntry): void {
    const share = this.shares.get(entry);
    if (share) this.apply(share, -1);
  }

  /** Puts a call's share in, as its records now say (a call without a begin has none yet). */
  changed(entry: CallEntry): void {
    const begin = entry.begin;
    const old = this.shares.get(entry);
    if (!begin) {
      if (old) this.unlist(entry, old);
      return;
    }
    if (old && (old.kind !== begin.kind || old.beganAt !== entry.beganAt)) this.unlist(entry, old);
    const share: Share = {
      kind: begin.kind,
      beganAt: entry.beganAt,
      // Without an end a call is pending or unknown: both count.
      counts: counts(entry.end?.outcome ?? 'pending'),
      cost: costOf(this.prices, begin.kind, begin.model, entry.end?.amount ?? begin.expected),
      ownSession: begin.session === this.sessionId,
    };
    if (!this.shares.has(entry)) this.list(entry, share);
    this.shares.set(entry, share);
    this.apply(share, 1);
  }

  /** Forgets every call and tallies these again (after calls of a day no longer followed are dropped). */
  rebuild(entries: Iterable<CallEntry>): void {
    for (const kind of this.kinds.values()) {
      kind.calls.length = 0;
      kind.session.calls = kind.session.cost = kind.session.unpriced = 0;
      for (const window of WINDOWS) {
        Object.assign(kind.windows[window], {
          calls: 0,
          cost: 0,
          unpriced: 0,
          since: Number.NEGATIVE_INFINITY,
          first: 0,
        });
      }
    }
    this.shares.clear();
    for (const entry of entries) this.changed(entry);
  }

  /** The tally of one kind, or of every kind (`cost`), over a window ending now or this session. */
  of(subject: BilledKind | 'cost', period: Window | 'session', now: number): Tally {
    const total: Tally = { calls: 0, cost: 0, unpriced: 0 };
    for (const [kind, tallies] of this.kinds) {
      if (subject !== 'cost' && subject !== kind) continue;
      const tally = period === 'session' ? tallies.session : this.moved(tallies, period, now);
      total.calls += tally.calls;
      total.cost += tally.cost;
      total.unpriced += tally.unpriced;
    }
    return total;
  }

  /** A window's tally with its start moved to `now` minus its length, either way. */
  private moved(tallies: KindTallies, window: Window, now: number): Tally {
    const tally = tallies.windows[window];
    const since = now - PERIOD_MS[window];
    const { calls } = tallies;
    while (tally.first < calls.length && (calls[tally.first] as CallEntry).beganAt <= since) {
      add(tally, this.shares.get(calls[tally.first] as CallEntry), -1);
      tally.first++;
    }
    while (tally.first > 0 && (calls[tally.first - 1] as CallEntry).beganAt > since) {
      tally.first--;
      add(tally, this.shares.get(calls[tally.first] as CallEntry), 1);
    }
    tally.since = since;
    return tally;
  }

  /** Adds (sign 1) or takes back (-1) a share in its session's tally and the windows holding it. */
  private apply(share: Share, sign: 1 | -1): void {
    const tallies = this.kinds.get(share.kind) as KindTallies;
    if (share.ownSession) add(tallies.session, share, sign);
    for (const window of WINDOWS) {
      const tally = tallies.windows[window];
      if (share.beganAt > tally.since) add(tally, share, sign);
    }
  }

  /** Places a call among its kind's, in the order they began; windows starting after it move up. */
  private list(entry: CallEntry, share: Share): void {
    const { calls, windows } = this.kinds.get(share.kind) as KindTallies;
    let at = calls.length;
    while (at > 0 && (calls[at - 1] as CallEntry).beganAt > share.beganAt) at--;
    calls.splice(at, 0, entry);
    for (const window of WINDOWS) if (share.beganAt <= windows[window].since) windows[window].first++;
  }

  private unlist(entry: CallEntry, share: Share): void {
    const { calls, windows } = this.kinds.get(share.kind) as KindTallies;
    const at = calls.lastIndexOf(entry);
    if (at >= 0) {
      calls.splice(at, 1);
      for (const window of WINDOWS) if (at < windows[window].first) windows[window].first--;
    }
    this.shares.delete(entry);
  }
}

function add(tally: Tally, share: Share | undefined, sign: 1 | -1): void {
  if (!share?.counts) return;
  tally.calls += sign;
  if (share.cost === null) tally.unpriced += sign;
  else tally.cost += sign * share.cost;
}
