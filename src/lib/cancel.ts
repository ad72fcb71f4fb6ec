import { EventEmitter } from 'node:events';

/**
 * A cancellation signal that costs next to nothing when it is never used: the server makes one
 * for every request and one for every service attempt, where an AbortController (an EventTarget,
 * with its listeners) cost about 20 µs of a web_search's time (docs/benchmarks.md).
 * undici accepts it as a request signal; code that needs a real AbortSignal (streams, fs) asks
 * for one with toAbortSignal().
 */
export class RequestSignal extends EventEmitter {
  aborted = false;
  reason: unknown;
  private linked: AbortController | undefined;

  constructor() {
    super();
    // Every wait and service attempt of a request listens while it runs; many at once is no leak.
    this.setMaxListeners(0);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.linked?.abort(reason);
    this.emit('abort');
  }

  /** An AbortSignal that aborts with this one, made on first use. */
  get abortSignal(): AbortSignal {
    if (!this.linked) {
      this.linked = new AbortController();
      if (this.aborted) this.linked.abort(this.reason);
    }
    return this.linked.signal;
  }
}

/** Either kind of signal: what the service client and the tools accept. */
export type CancelSignal = AbortSignal | RequestSignal;

/** Calls `listener` once when `signal` aborts; the returned function stops listening. */
export function onAbort(signal: CancelSignal, listener: () => void): () => void {
  if (signal instanceof RequestSignal) {
    signal.once('abort', listener);
    return () => signal.off('abort', listener);
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/** For APIs that take only an AbortSignal (stream pipelines, fs). */
export function toAbortSignal(signal: CancelSignal): AbortSignal;
export function toAbortSignal(signal: CancelSignal | undefined): AbortSignal | undefined;
export function toAbortSignal(signal: CancelSignal | undefined): AbortSignal | undefined {
  return signal instanceof RequestSignal ? signal.abortSignal : signal;
}
