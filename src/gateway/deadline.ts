import { type CancelSignal, onAbort, RequestSignal } from '../lib/cancel.js';
import { ServiceError } from './errors.js';

/**
 * A signal that aborts when `parent` does or `ms` after start(), on a timer held here. Not
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 the timeout signal is only
 * weakly held, so after a garbage collection it may never fire and a hung request stays hung.
 * Call `clear()` when the guarded work is over.
 */
export class Deadline {
  readonly signal = new RequestSignal();
  private timer: NodeJS.Timeout | undefined;
  private unlink: (() => void) | undefined;

  constructor(
    private readonly parent: CancelSignal | undefined,
    private readonly ms: number,
  ) {
    // Already cancelled: aborted now, so that nothing guarded by it is ever sent.
    if (parent?.aborted) this.signal.abort(parent.reason);
  }

  /**
   * Starts the clock and follows the parent. Apart from construction so that a request can be
   * sent first: this set-up then overlaps the wait for the answer instead of delaying it.
   */
  start(): void {
    if (this.signal.aborted || this.timer) return;
    const parent = this.parent;
    if (parent) this.unlink = onAbort(parent, () => this.signal.abort(parent.reason));
    this.timer = setTimeout(this.onTimeout, this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.unlink?.();
  }

  private readonly onTimeout = () =>
    this.signal.abort(new DOMException(`No answer within ${this.ms} ms`, 'TimeoutError'));
}

/** A started deadline. */
export function withDeadline(parent: CancelSignal | undefined, ms: number): Deadline {
  const deadline = new Deadline(parent, ms);
  deadline.start();
  return deadline;
}

/** Waits `ms`, or rejects as cancelled when `signal` aborts. */
export function sleep(ms: number, signal?: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const stop = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(abortError());
        })
      : undefined;
    const timer = setTimeout(() => {
      stop?.();
      resolve();
    }, ms);
  });
}

function abortError(): ServiceError {
  return new ServiceError({ kind: 'aborted', message: 'The request was cancelled', maybeDelivered: true });
}

/**
 * Waits for `work` unless `signal` aborts first, then rejects as cancelled. The work itself goes
 * on (for shared loads, such as a page other callers also wait for).
 */
export function abortable<T>(work: Promise<T>, signal: CancelSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const stop = onAbort(signal, () => reject(abortError()));
    work.then(resolve, reject).finally(stop);
  });
}
