import { ServiceError } from './errors.js';

/**
 * A signal that aborts when `parent` does or `ms` after start(), on a timer held here. Not
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 the timeout signal is only
 * weakly held, so after a garbage collection it may never fire and a hung request stays hung.
 * Call `clear()` when the guarded work is over.
 */
export class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly parent: AbortSignal | undefined,
    private readonly ms: number,
  ) {
    // Already cancelled: aborted now, so that nothing guarded by it is ever sent.
    if (parent?.aborted) this.controller.abort(parent.reason);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Starts the clock and follows the parent. Apart from construction so that a request can be
   * sent first: this set-up then overlaps the wait for the answer instead of delaying it.
   */
  start(): void {
    if (this.controller.signal.aborted || this.timer) return;
    this.parent?.addEventListener('abort', this.onParentAbort, { once: true });
    this.timer = setTimeout(this.onTimeout, this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }

  private readonly onParentAbort = () => this.controller.abort(this.parent?.reason);
  private readonly onTimeout = () =>
    this.controller.abort(new DOMException(`No answer within ${this.ms} ms`, 'TimeoutError'));
}

/** A started Deadline. */
export function withDeadline(parent: AbortSignal | undefined, ms: number): Deadline {
  const deadline = new Deadline(parent, ms);
  deadline.start();
  return deadline;
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
