import { cancelledError, ServiceError, seconds } from './errors.js';

/**
 * Failures while reading a streamed body, after the headers arrived (audio, transcripts, video
 * and audio downloads): a stall past the timeout or a dropped connection. undici reports them as
 * its own errors; turned into ServiceErrors here, they reach the agent as what they are (with
 * the advice that goes with them) instead of as internal errors. Codes, not classes: undici is
 * loaded lazily (see client.ts).
 */
export function bodyReadError(
  error: unknown,
  what: string,
  timeoutMs: number,
  scrub: (text: string) => string,
  signal?: AbortSignal,
): ServiceError {
  if (error instanceof ServiceError) return error;
  if (signal?.aborted) return cancelledError();
  const err = error as { code?: string; message?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new ServiceError({
      kind: 'timeout',
      message: `The service stalled while sending ${what}: nothing arrived for ${seconds(timeoutMs)} s`,
      maybeDelivered: true,
    });
  }
  return new ServiceError({
    kind: 'network',
    code,
    message: scrub(`The connection dropped while receiving ${what} (${code ?? err.message ?? 'reset'})`),
    maybeDelivered: true,
  });
}

/** The chunks of `body`, with read failures turned into ServiceErrors (see bodyReadError). */
export async function* guardedBody(
  body: AsyncIterable<Uint8Array>,
  what: string,
  timeoutMs: number,
  scrub: (text: string) => string,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  } catch (error) {
    throw bodyReadError(error, what, timeoutMs, scrub, signal);
  }
}
