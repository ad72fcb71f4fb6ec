import { Transform } from 'node:stream';

/** A pass-through stream that counts bytes and stops past a limit. */
export interface ByteLimiter extends Transform {
  /** Bytes passed so far. */
  readonly bytes: number;
}

/** Fails with `tooBig()` once more than `maxBytes` have passed; `onBytes` hears the running total. */
export function byteLimiter(
  maxBytes: number,
  tooBig: () => Error,
  onBytes?: (total: number) => void,
): ByteLimiter {
  let bytes = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > maxBytes) return callback(tooBig());
      onBytes?.(bytes);
      callback(null, chunk);
    },
  });
  return Object.defineProperty(limiter, 'bytes', { get: () => bytes }) as ByteLimiter;
}
