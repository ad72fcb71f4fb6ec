import type { Dispatcher } from 'undici';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../lib/json-depth.js';
import { unreadableAnswer } from './errors.js';

// Reading what the service sent: bodies, headers, redirect targets, Retry-After.

export function parseJsonBody<T>(text: string, scrub: (t: string) => string = (t) => t): T {
  // The `data: [DONE]` line is removed only at the end of the body, so look only there.
  const trimmed = text.trim();
  return parseJson<T>(
    trimmed.endsWith('[DONE]') ? trimmed.replace(/\n?data: \[DONE\]$/, '').trim() : trimmed,
    scrub,
  );
}

/** Refuses an answer nested too deep to parse in bounded time (json-depth.ts). */
export function assertParsable(text: string): void {
  if (!nestsTooDeep(text)) return;
  throw unreadableAnswer(
    `The service sent JSON nested deeper than ${MAX_JSON_DEPTH} levels (${text.length} bytes), which no answer is; it was not read`,
  );
}

function parseJson<T>(cleaned: string, scrub: (t: string) => string): T {
  assertParsable(cleaned);
  try {
    return JSON.parse(cleaned) as T;
  } catch {
    // Scrubbed whole, then cut: a cut first could leave part of a secret that scrub no longer knows.
    const preview = scrub(cleaned).replace(/\s+/g, ' ').slice(0, 80);
    throw unreadableAnswer(
      `The service sent a body that is not valid JSON (${cleaned.length} bytes, starting "${preview}")`,
    );
  }
}

/**
 * Reads a whole body as text, refusing more than `limit` bytes. With listeners, not `for await`:
 * the async iterator costs more than the rest of reading a small answer. `signal` is the one the
 * request was sent with: undici ends the body with its reason when it aborts; the check on each
 * chunk stops a read whose signal aborted between chunks.
 */
export function readText(
  body: Dispatcher.ResponseData['body'],
  limit: number,
  signal?: AbortSignal,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error: unknown) => {
      body.off('data', onData);
      body.on('error', () => undefined);
      body.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      if (signal?.aborted) return stop(signal.reason ?? new Error('aborted'));
      size += chunk.length;
      if (size > limit) {
        return stop(unreadableAnswer(`The service answer exceeded ${Math.round(limit / 1024)} KiB`));
      }
      chunks.push(chunk);
    };
    body.on('data', onData);
    body.once('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    body.once('error', reject);
  });
}

export function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Drops a response body we will not read (undici reports a bare destroy() as an error). */
export function discardBody(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** An http(s) URL resolved against `base`, or undefined. */
export function safeUrl(location: string, base: URL): URL | undefined {
  try {
    const url = new URL(location, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

export function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
