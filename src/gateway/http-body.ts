import type { Dispatcher } from 'undici';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../lib/json-depth.js';
import { ServiceError, unreadableAnswer } from './errors.js';

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

/** A redirect answered to a gateway call (client.ts refuses to follow one): what redirectError reads. */
export interface RedirectAnswer {
  status: number;
  /** The Location header, as sent. */
  location: string | undefined;
  /** The request: where it went, and the route it named (`/v1/search`) after the base URL. */
  method: string;
  requestUrl: string;
  path: string;
  /** The base URL as messages show it (credentials masked). */
  shownBase: string;
  scrub: (text: string) => string;
}

/**
 * The error for a redirect from the gateway's address: where it points, and the base URL to set
 * instead. A target that keeps the route (`https://host/v1/search` for `/v1/search`, what a
 * reverse proxy moving http to https sends) gives that base URL for sure; a target at a root, or
 * a page on the same host as a base URL with a path (9router's dashboard sends /login), gives a
 * likely one. What is shown of the target keeps neither credentials nor query: a login page's
 * may carry a token.
 */
export function redirectError(answer: RedirectAnswer): ServiceError {
  const { status, path } = answer;
  const lead = `The gateway's address ${answer.shownBase}`;
  const asked = new URL(answer.requestUrl);
  const target = answer.location ? safeUrl(answer.location, asked) : undefined;
  const instead = `instead of answering ${answer.method} ${path}`;
  let message: string;
  if (!target) {
    message = `${lead} answered with a redirect (HTTP ${status}) to no http(s) address ${instead}: set GATEWAY_BASE_URL to the gateway's own address`;
  } else {
    target.username = '';
    target.password = '';
    target.search = '';
    target.hash = '';
    const shown = `${lead} redirects to ${target.toString()} (HTTP ${status})`;
    if (target.pathname.endsWith(path)) {
      message = `${shown}: set GATEWAY_BASE_URL to ${withoutRoute(target, path)}`;
    } else {
      const baseHasPath = withoutRoute(asked, path) !== asked.origin;
      const likely =
        target.pathname === '/'
          ? target.origin
          : baseHasPath && target.origin === asked.origin
            ? asked.origin
            : undefined;
      message = `${shown} ${instead}: set GATEWAY_BASE_URL to the gateway's own address${likely ? `, likely ${likely}` : ''}`;
    }
  }
  // The gateway never saw the request: whoever redirected it did not pass it on.
  return new ServiceError({
    kind: 'redirect',
    status,
    message: answer.scrub(message),
    maybeDelivered: false,
  });
}

/** A URL that ends in `route`, without it (and without a trailing slash): the base URL it was sent to. */
function withoutRoute(url: URL, route: string): string {
  return `${url.origin}${url.pathname.slice(0, url.pathname.length - route.length)}`.replace(/\/+$/, '');
}

export function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
