import { sleep, withDeadline } from '../../gateway/deadline.js';
import { ServiceError } from '../../gateway/errors.js';
import type { Progress } from '../define.js';

/**
 * Waiting for a long job inside one tool call, so an agent does not have to poll turn by turn:
 * poll with backoff until the job finishes, the wait runs out, or the client cancels. Polls are
 * free, so a transient poll failure (rate limit, 5xx, reset) does not end the wait; Retry-After
 * is honoured. The wait never outlives its deadline by more than one in-flight poll's grace.
 */

/** One call never waits longer than this: MCP clients commonly time a request out at 60 s. */
export const MAX_WAIT_SECONDS = 50;
export const FIRST_POLL_DELAY_MS = 1_000;
export const MAX_POLL_DELAY_MS = 5_000;
const DELAY_GROWTH = 1.5;
/** A poll started before the deadline may finish this long after it, never longer. */
const POLL_GRACE_MS = 5_000;
/** The first status read of a call gets at least this long, even with wait_seconds 0. */
const FIRST_POLL_MIN_MS = 15_000;
/** Even `Retry-After: 0` must not turn the loop into a busy loop. */
const MIN_POLL_DELAY_MS = 250;
const MAX_POLLS = 500;

export interface WaitOptions<S> {
  /** Reads the job's state once; `signal` aborts the read in flight. */
  poll(signal: AbortSignal): Promise<S>;
  isFinished(state: S): boolean;
  /** Called after every state read (progress notifications go here). */
  onState?(state: S): Promise<void> | void;
  /** Epoch ms when the wait ends. A deadline in the past still allows the first poll. */
  deadline: number;
  /** The call's signal: aborted when the client cancels. */
  signal: AbortSignal;
  /** Poll at once (status checks), or first wait FIRST_POLL_DELAY_MS (just after a submit). */
  pollFirst: boolean;
}

export type WaitOutcome<S> =
  | { kind: 'finished'; state: S }
  /** The wait ran out first. `error` is set when the last status check failed. */
  | { kind: 'timeout'; state: S | null; error?: unknown }
  | { kind: 'cancelled'; state: S | null }
  /** A status check failed in a way more waiting cannot fix (unknown job, bad key, ...). */
  | { kind: 'error'; state: S | null; error: unknown };

export async function waitForJob<S>(options: WaitOptions<S>): Promise<WaitOutcome<S>> {
  const { signal, deadline } = options;
  let state: S | null = null;
  let lastError: unknown;
  let delay = FIRST_POLL_DELAY_MS;
  let pause = options.pollFirst ? 0 : delay;
  for (let n = 0; n < MAX_POLLS; n++) {
    if (pause > 0) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { kind: 'timeout', state, ...errorField(lastError) };
      // A Retry-After beyond the deadline cannot be honoured within this call: stop now.
      if (lastError !== undefined && pause > remaining) return { kind: 'timeout', state, error: lastError };
      try {
        await sleep(Math.min(pause, remaining), signal);
      } catch {
        return { kind: 'cancelled', state };
      }
    }
    if (signal.aborted) return { kind: 'cancelled', state };
    const budget = Math.max(
      msUntil(deadline) + POLL_GRACE_MS,
      n === 0 && options.pollFirst ? FIRST_POLL_MIN_MS : 0,
    );
    const pollDeadline = withDeadline(signal, budget);
    const pollSignal = pollDeadline.signal;
    try {
      state = await options.poll(pollSignal);
      lastError = undefined;
      await options.onState?.(state);
      if (options.isFinished(state)) return { kind: 'finished', state };
      pause = delay;
    } catch (error) {
      if (signal.aborted) return { kind: 'cancelled', state };
      if (pollSignal.aborted) return { kind: 'timeout', state, error: lastError ?? unanswered(budget) };
      if (!isTransientPollFailure(error)) return { kind: 'error', state, error };
      lastError = error;
      const retryAfter = error instanceof ServiceError ? error.retryAfterSeconds : undefined;
      pause = Math.max(MIN_POLL_DELAY_MS, retryAfter !== undefined ? retryAfter * 1000 : delay);
    } finally {
      pollDeadline.clear();
    }
    delay = Math.min(MAX_POLL_DELAY_MS, delay * DELAY_GROWTH);
    if (Date.now() >= deadline) return { kind: 'timeout', state, ...errorField(lastError) };
  }
  return { kind: 'timeout', state, ...errorField(lastError) };
}

/** Failures a later poll may not see: rate limits, gateway hiccups, dropped connections. */
export function isTransientPollFailure(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  if (error.kind === 'network' || error.kind === 'timeout' || error.kind === 'malformed') return true;
  const status = error.status ?? 0;
  return error.kind === 'http' && (status === 408 || status === 429 || status >= 500);
}

/** Epoch ms for "wait `seconds` from `start`", capped at MAX_WAIT_SECONDS. */
export function waitDeadline(start: number, seconds: number): number {
  return start + Math.min(Math.max(0, seconds), MAX_WAIT_SECONDS) * 1000;
}

/**
 * Progress notifications must increase strictly within one request; a service's progress may
 * repeat or even step back between polls. This keeps the values rising (by a hair when the
 * service's number did not) while the message carries the service's own figure.
 */
export function risingProgress(send: (update: Progress) => Promise<void>) {
  let last = Number.NEGATIVE_INFINITY;
  return (value: number, total: number | undefined, message: string): Promise<void> => {
    const progress = value > last ? value : Math.round((last + 0.01) * 100) / 100;
    last = progress;
    return send({ progress, ...(total !== undefined ? { total } : {}), message });
  };
}

function msUntil(epochMs: number): number {
  return Math.max(0, epochMs - Date.now());
}

function unanswered(budgetMs: number): ServiceError {
  return new ServiceError({
    kind: 'timeout',
    message: `The service did not answer the status check within ${Math.round(budgetMs / 1000)} s`,
    maybeDelivered: true,
  });
}

function errorField(error: unknown): { error?: unknown } {
  return error === undefined ? {} : { error };
}
