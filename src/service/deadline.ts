import { ServiceError } from './errors.js';

/**
 * A signal that aborts when `parent` does or after `ms`, on a timer held here. Not
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 the timeout signal is only
 * weakly held, so after a garbage collection it may never fire and a hung request stays hung.
 * Call `clear()` when the guarded work is over.
 */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

export function withDeadline(parent: AbortSignal | undefined, ms: number): Deadline {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new DOMException(`No answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
  };
}

/** Waits `ms`, or rejects as cancelled when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(abortError());
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(): ServiceError {
  return new ServiceError({ kind: 'aborted', message: 'The request was cancelled', maybeDelivered: true });
}

/**
 * Waits for `work` unless `signal` aborts first, then rejects as cancelled. The work itself goes
 * on (for shared loads, such as a page other callers also wait for).
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
