import { cancelledError } from './errors.js';

/**
 * Cancellation and time limits for calls to the service, on the platform's AbortSignal: the one
 * place where a caller's signal is combined with a deadline. Every link to a caller's signal is
 * a listener that is removed when the guarded work ends, because a caller's signal can outlive
 * many attempts (a video wait polls for up to a minute under one request's signal): listeners
 * left behind would pile up on it (Node warns past 10 with MaxListenersExceededWarning).
 */

/** A signal that aborts when its parent does or when its time is up, until `clear()`. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Stops the timer and the link to the parent; call it when the guarded work is over. */
  clear(): void;
}

/**
 * A signal that aborts when `parent` does or `ms` from now, on a timer held here. Not
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: Node holds a timeout signal only weakly,
 * so inside `any` it may be collected and never fire (nodejs/node#57736); and on a long-lived
 * parent the signals `any` makes pile up (nodejs/node#55351) instead of letting go when the work
 * ends.
 */
export function withDeadline(parent: AbortSignal | undefined, ms: number): Deadline {
  const controller = new AbortController();
  // Already cancelled: aborted now, so that nothing guarded by it is ever sent.
  if (parent?.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, clear: () => undefined };
  }
  const onParentAbort = () => controller.abort(parent?.reason);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new DOMException(`No answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/** Waits `ms`, or rejects as cancelled when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
  });
}

/**
 * Waits for `work` unless `signal` aborts first, then rejects as cancelled. The work itself goes
 * on (for shared loads, such as a page other callers also wait for).
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelledError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
