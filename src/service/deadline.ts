import { EventEmitter } from 'node:events';
import { ServiceError } from './errors.js';

/**
 * What a request needs of a signal: undici takes an EventEmitter as well as an AbortSignal, and
 * body readers only look at `aborted` and `reason`. A service call makes one per attempt, where an
 * AbortController and its EventTarget listeners cost more than the rest of setting up a request.
 */
export class RequestSignal extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** Either kind of signal a request can be sent with. */
export type CancelSignal = AbortSignal | RequestSignal;

/**
 * A signal that aborts when `parent` does or `ms` after start(), on a timer held here. Not
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 the timeout signal is only
 * weakly held, so after a garbage collection it may never fire and a hung request stays hung.
 * Call `clear()` when the guarded work is over.
 */
export class Deadline {
  readonly signal = new RequestSignal();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly parent: AbortSignal | undefined,
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
    this.parent?.addEventListener('abort', this.onParentAbort, { once: true });
    this.timer = setTimeout(this.onTimeout, this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }

  private readonly onParentAbort = () => this.signal.abort(this.parent?.reason);
  private readonly onTimeout = () =>
    this.signal.abort(new DOMException(`No answer within ${this.ms} ms`, 'TimeoutError'));
}

/** A started deadline whose signal is an AbortSignal, for work that needs one. */
export function withDeadline(
  parent: AbortSignal | undefined,
  ms: number,
): { signal: AbortSignal; clear(): void } {
  const deadline = new Deadline(parent, ms);
  const controller = new AbortController();
  if (deadline.signal.aborted) controller.abort(deadline.signal.reason);
  else deadline.signal.once('abort', () => controller.abort(deadline.signal.reason));
  deadline.start();
  return { signal: controller.signal, clear: () => deadline.clear() };
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
