// The one place that talks HTTP to the backing service: auth header, timeouts, the retry policy
// and error mapping. Endpoint modules (search.ts, videos.ts, ...) describe requests; this runs them.

import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProxySettings } from '../config/proxy-settings.js';
import { withoutSecrets } from '../lib/secrets.js';
import { withoutCredentials } from '../lib/urls.js';
import { sleep, withDeadline } from './deadline.js';
import { createDispatchers, type Dispatchers } from './dispatchers.js';
import { UNRESOLVED_CODES } from './error-advice.js';
import { cancelledError, parseErrorBody, ServiceError, seconds, unreadableAnswer } from './errors.js';
import {
  discardBody,
  flattenHeaders,
  parseJsonBody,
  parseRetryAfter,
  readText,
  redirectError,
  safeUrl,
} from './http-body.js';
import { shownText, shownValue } from './normalize.js';
import { resetAfterSeconds } from './upstream-failure.js';
import { UrlGuard } from './url-guard.js';

export { UNRESOLVED_CODES } from './error-advice.js';

export interface ServiceClientOptions {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  maxRetries: number;
  /** Removes secrets from any text that leaves the client. */
  scrub: (text: string) => string;
  /** The exact secrets, removed from every body the service sends before anything reads (or cuts) it. */
  secrets?: readonly string[];
  userAgent?: string;
  /** Hosts on non-public networks that downloads may reach (GATEWAY_ALLOW_PRIVATE_URLS; `*` = any). */
  allowPrivateUrls?: readonly string[];
  /** HTTPS_PROXY / HTTP_PROXY / NO_PROXY, for the gateway and for downloads (see dispatchers.ts). */
  proxy?: ProxySettings;
}

/** `safe`: free and repeatable, retried on 429/502/503/504, connection failures, and any answer
 *  that names a short wait (Retry-After).
 *  `billed`: paid per call (speech, model answers); retried only on answers that say it was not
 *  accepted (429, 503) or when it provably never left this process, never after a 502/504, a
 *  reset or a timeout, which may have reached a paying upstream.
 *  `submit`: billed once and for minutes of work (video); sent once, retried only when it
 *  provably never left this process. */
export type RetryPolicy = 'safe' | 'billed' | 'submit';

export interface ServiceRequest {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** A pre-built body (multipart stream, bytes); `contentType` must say what it is. */
  body?: Readable | Buffer | string;
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  retry: RetryPolicy;
  /** Overrides the configured per-request timeout. */
  timeoutMs?: number;
  /** The model or provider the request names, for a body that is not JSON (multipart). */
  model?: string;
  /**
   * Strings of a JSON answer as sent, control characters included. Only for answers whose reader
   * refuses such strings itself (a model id with one is dropped: no cleaned form is an id the
   * gateway would accept); every other answer has them removed (normalize.ts shownValue).
   */
  controlsKept?: boolean;
}

/** Where a request goes, with what, and through which pool (dispatchers.ts). */
interface SendTarget {
  url: string;
  auth: boolean;
  /** A host other than the gateway: the pool that reaches public addresses only. */
  guarded?: boolean;
  /** A stream, an upload or a download: the pool kept apart from short calls. */
  transfer: boolean;
  /**
   * The caller follows redirects itself, deciding again where the key may go (downloads). Any
   * other call refuses a redirect: the gateway answers at its own address, and following one
   * would send the key wherever the answer points.
   */
  redirectsFollowed?: boolean;
}

export interface ServiceResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** For downloads: the URL the body came from, after redirects. */
  url?: string;
}

export interface JsonResponse<T> {
  data: T;
  headers: Record<string, string | undefined>;
}

/** Retry-After longer than this is reported to the agent at once instead of blocking it. */
export const MAX_HONOURED_RETRY_AFTER_S = 10;
/** Total time spent waiting between retries of one call. */
const RETRY_BUDGET_MS = 20_000;
/** Past a Retry-After, so the retry lands after the cooldown rather than on its last instant. */
const RETRY_AFTER_MARGIN_MS = 250;
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

const MAX_JSON_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Connection errors that prove nothing was sent. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

interface Http extends Dispatchers {
  undici: typeof import('undici');
}

export class ServiceClient {
  readonly baseUrl: string;
  /** The base URL as messages show it: credentials it may carry are masked (lib/urls.ts). */
  readonly shownBaseUrl: string;
  private http: Http | undefined;
  private loadingHttp: Promise<Http> | undefined;
  private readonly urlGuard: UrlGuard;

  constructor(private readonly options: ServiceClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.shownBaseUrl = withoutCredentials(this.baseUrl);
    this.urlGuard = new UrlGuard(new URL(this.baseUrl).origin, options.allowPrivateUrls ?? []);
  }

  /** undici is loaded on the first request, not at start-up: a server that is only listed stays light. */
  private loadHttp(): Promise<Http> {
    this.loadingHttp ??= import('undici').then((undici) => {
      this.http = { undici, ...createDispatchers(undici, this.options.proxy) };
      return this.http;
    });
    return this.loadingHttp;
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  get hasApiKey(): boolean {
    return Boolean(this.options.apiKey);
  }

  scrub(text: string): string {
    return this.options.scrub(text);
  }

  /**
   * A body as the service sent it, without the exact secrets: done before it is parsed, so no
   * later cut (a capped field, a page window, a preview) can leave part of a secret behind.
   */
  clean(text: string): string {
    return this.options.secrets ? withoutSecrets(text, this.options.secrets) : text;
  }

  /** Sends a request and parses a JSON answer (tolerating a trailing `data: [DONE]`). */
  json<T>(req: ServiceRequest): Promise<JsonResponse<T>> {
    return this.withRetries(req, true, async (signal) => {
      const res = await this.send(req, signal);
      const text = this.clean(await readText(res.body, MAX_JSON_BYTES, signal));
      const data = parseJsonBody<T>(text, this.options.scrub);
      return { data: req.controlsKept ? data : shownValue(data), headers: res.headers };
    });
  }

  /**
   * Sends a request and hands back the open response for streaming (downloads, SSE, audio).
   * The caller must consume or destroy `body`. Timeouts apply to headers and to gaps in the body.
   */
  stream(req: ServiceRequest): Promise<ServiceResponse> {
    const target: SendTarget = { url: this.url(req), auth: true, transfer: true };
    return this.withRetries(req, false, (signal) => this.send(req, signal, target));
  }

  /**
   * Streams a file from an absolute URL (a finished video, an audio file). The key is sent only
   * when the URL is on the service's own origin, never to third-party hosts; hosts other than
   * the gateway are reached only on public addresses (see url-guard.ts). `sendKey: false` for URLs
   * an agent typed: the key then never goes anywhere with them, not even to the gateway.
   */
  async download(url: string, signal?: AbortSignal, { sendKey = true } = {}): Promise<ServiceResponse> {
    const ownOrigin = new URL(this.baseUrl).origin;
    let target = new URL(url);
    // The key goes only along a chain that has stayed on the gateway's origin from its start: a
    // host elsewhere could otherwise redirect back to the gateway and have the key sent there.
    let onGateway = true;
    // Redirects are followed here, not by undici, so the key and address decisions are made
    // again on every hop.
    for (let hop = 0; ; hop++) {
      onGateway &&= target.origin === ownOrigin;
      const auth = onGateway && sendKey;
      const guarded = this.urlGuard.classify(target) === 'guarded';
      if (guarded) this.urlGuard.assertPublicLiteral(target);
      const req: ServiceRequest = { method: 'GET', path: target.pathname, signal, retry: 'safe' };
      const at = target.toString();
      const host = target.host;
      const res = await this.withRetries(req, false, (s) =>
        this.send(req, s, { url: at, auth, guarded, transfer: true, redirectsFollowed: true }),
      ).catch((error: unknown) => {
        throw onGateway ? error : failedElsewhere(error, host);
      });
      const location = REDIRECT_STATUS.has(res.status) ? res.headers.location : undefined;
      if (res.status >= 200 && res.status < 300) return { ...res, url: at };
      discardBody(res.body);
      const next = location ? safeUrl(location, target) : undefined;
      if (!next || hop >= MAX_REDIRECTS) {
        throw unreadableAnswer(
          this.scrub(
            next
              ? `The download of ${url} redirected more than ${MAX_REDIRECTS} times`
              : `The download of ${at} answered ${res.status} without a usable http(s) location`,
          ),
        );
      }
      target = next;
    }
  }

  async close(): Promise<void> {
    if (!this.loadingHttp) return;
    const { calls, transfers, guarded } = await this.loadingHttp;
    await Promise.all([calls, transfers, guarded].map((pool) => pool.destroy().catch(() => undefined)));
  }

  /** `wholeCallDeadline`: the timeout bounds the whole call (JSON); otherwise only the wait for
   *  headers and each gap in the body (streams may legitimately last longer). */
  private async withRetries<T>(
    req: ServiceRequest,
    wholeCallDeadline: boolean,
    attempt: (signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T> {
    const started = Date.now();
    let waitedAsTold = false;
    for (let n = 0; ; n++) {
      const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
      // Streams get no whole-call timer: undici's header and body timeouts guard them instead.
      const guard = wholeCallDeadline ? withDeadline(req.signal, timeoutMs) : undefined;
      let error: ServiceError;
      try {
        return await attempt(guard?.signal ?? req.signal);
      } catch (raw) {
        error = this.toServiceError(raw, req, timeoutMs);
      } finally {
        // Before any wait for the next attempt: the caller's signal keeps no listener of this one.
        guard?.clear();
      }
      const delay = this.retryDelay(error, req, n, Date.now() - started, waitedAsTold);
      if (delay === undefined) throw error;
      waitedAsTold ||= error.retryAfterSeconds !== undefined;
      await sleep(delay, req.signal);
    }
  }

  /**
   * How long to wait before trying again, or undefined to report the error now. A wait the
   * service names (Retry-After: a rate limit, or an upstream account cooling down) is honoured
   * once per call when it is short; a long one is reported at once instead of blocking the agent,
   * and a second one too: trying again after it would only meet a longer cooldown.
   */
  private retryDelay(
    error: ServiceError,
    req: ServiceRequest,
    n: number,
    elapsedMs: number,
    waitedAsTold: boolean,
  ): number | undefined {
    if (n >= this.options.maxRetries || error.kind === 'aborted' || error.kind === 'redirect')
      return undefined;
    if (req.retry === 'submit') return error.maybeDelivered ? undefined : backoff(n);
    const wait = error.kind === 'http' ? error.retryAfterSeconds : undefined;
    let delay: number;
    if (wait !== undefined) {
      // Free calls wait out any status the service names a wait for (9router sends one with
      // 400/401/429/5xx while an account cools down); billed ones only the answers that say the
      // request was not accepted.
      const retryable = req.retry === 'safe' || error.turnedAway();
      if (!retryable || waitedAsTold || wait > MAX_HONOURED_RETRY_AFTER_S) return undefined;
      delay = wait * 1000 + RETRY_AFTER_MARGIN_MS;
    } else {
      const retryable =
        (error.kind === 'http' &&
          (req.retry === 'billed' ? error.turnedAway() : RETRYABLE_STATUS.has(error.status ?? 0))) ||
        (error.kind === 'network' && (req.retry === 'safe' || !error.maybeDelivered));
      if (!retryable) return undefined;
      delay = backoff(n);
    }
    return elapsedMs + delay > RETRY_BUDGET_MS ? undefined : delay;
  }

  private async send(
    req: ServiceRequest,
    signal: AbortSignal | undefined,
    target: SendTarget = { url: this.url(req), auth: true, transfer: false },
  ): Promise<ServiceResponse> {
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream;q=0.9, */*;q=0.8',
      'user-agent': this.options.userAgent ?? 'gateway-tools-mcp',
      ...req.headers,
    };
    if (this.options.apiKey && target.auth) headers.authorization = `Bearer ${this.options.apiKey}`;
    let body: Readable | Buffer | string | undefined = req.body;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    } else if (req.contentType) headers['content-type'] = req.contentType;

    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    // Once undici is loaded the request is sent in this same turn, before send() first yields.
    const { undici, calls, transfers, guarded } = this.http ?? (await this.loadHttp());
    const res = await undici.request(target.url, {
      method: req.method,
      headers,
      body,
      signal,
      dispatcher: target.guarded ? guarded : target.transfer ? transfers : calls,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const flatHeaders = flattenHeaders(res.headers);
    if (res.statusCode >= 300 && res.statusCode < 400 && !target.redirectsFollowed) {
      discardBody(res.body);
      throw redirectError({
        status: res.statusCode,
        location: flatHeaders.location,
        method: req.method,
        requestUrl: target.url,
        path: req.path,
        shownBase: this.shownBaseUrl,
        scrub: this.options.scrub,
      });
    }
    if (res.statusCode >= 400) {
      // Scrubbed whole before parseErrorBody cuts its message.
      const text = this.scrub(await readText(res.body, MAX_ERROR_BYTES, signal).catch(() => ''));
      const parsed = parseErrorBody(text, flatHeaders['content-type']);
      const said = parsed.message === undefined ? undefined : shownText(parsed.message);
      throw new ServiceError({
        kind: 'http',
        status: res.statusCode,
        code: parsed.code,
        message: `The service answered ${res.statusCode}: ${said ?? statusText(res.statusCode)}`,
        serviceMessage: said,
        model: modelOf(req),
        // A cooldown answered without the header still says how long in its message.
        retryAfterSeconds:
          parseRetryAfter(flatHeaders['retry-after']) ??
          (said === undefined ? undefined : resetAfterSeconds(said)),
        maybeDelivered: true,
        // The gateway answers a path or method it lacks in JSON; another server at its address
        // does not, or says in JSON only that the route is missing. (A proxy's own 502, 503 or
        // 504 page says nothing of what is behind it.)
        notGatewayLike:
          !target.guarded &&
          ((parsed.json === false && (res.statusCode < 500 || res.statusCode === 501)) ||
            routeMissing(res.statusCode, parsed)),
      });
    }
    return { status: res.statusCode, headers: flatHeaders, body: res.body };
  }

  private url(req: ServiceRequest): string {
    if (!req.query) return this.baseUrl + req.path;
    const url = new URL(this.baseUrl + req.path);
    for (const [k, v] of Object.entries(req.query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  private toServiceError(raw: unknown, req: ServiceRequest, timeoutMs: number): ServiceError {
    if (raw instanceof ServiceError) return raw;
    if (req.signal?.aborted) return cancelledError();
    const err = raw as { name?: string; code?: string; message?: string; cause?: { code?: string } };
    const code = err.code ?? err.cause?.code;
    const timedOut =
      err.name === 'TimeoutError' ||
      err.name === 'AbortError' ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT';
    if (timedOut) {
      return new ServiceError({
        kind: 'timeout',
        message: `The service did not answer ${req.method} ${req.path} within ${seconds(timeoutMs)} s`,
        maybeDelivered: true,
      });
    }
    const neverSent = code !== undefined && NEVER_SENT_CODES.has(code);
    const unresolved = code !== undefined && UNRESOLVED_CODES.has(code);
    const where = `Cannot reach the service at ${this.shownBaseUrl}`;
    return new ServiceError({
      kind: 'network',
      code,
      message: this.scrub(
        unresolved
          ? `${where}: its host name ${code === 'EAI_AGAIN' ? 'could not be resolved just now' : 'does not resolve'} (${code})`
          : neverSent
            ? `${where} (${code})`
            : `The connection to the service failed during ${req.method} ${req.path} (${code ?? err.message ?? 'reset'})`,
      ),
      maybeDelivered: !neverSent,
    });
  }
}

/** A download's failure at a host other than the gateway, told as that host's, not "the service"'s. */
function failedElsewhere(error: unknown, host: string): unknown {
  if (!(error instanceof ServiceError) || error.kind === 'aborted' || error.kind === 'blocked') return error;
  const code = error.kind === 'network' ? error.code : undefined;
  const unresolved = code !== undefined && UNRESOLVED_CODES.has(code);
  const what =
    error.kind === 'http'
      ? 'answered'
      : error.kind === 'timeout'
        ? 'did not answer in time'
        : error.kind === 'network'
          ? unresolved
            ? `could not be found (${code}: the name does not resolve)`
            : `could not be reached (${code ?? 'the connection failed'})`
          : error.message;
  return new ServiceError({
    kind: error.kind,
    status: error.status,
    code: error.code,
    retryAfterSeconds: error.retryAfterSeconds,
    message: error.kind === 'malformed' ? what : `The download host ${host} ${what}`,
    maybeDelivered: error.maybeDelivered,
    host,
  });
}

function backoff(n: number): number {
  return Math.min(4_000, 250 * 2 ** n) + Math.floor(Math.random() * 100);
}

/** The model or provider a request names (for error messages): the body's, or the one it says. */
function modelOf(req: ServiceRequest): string | undefined {
  if (req.model) return req.model;
  const body = req.json as { model?: unknown; provider?: unknown } | undefined;
  const named = body && typeof body === 'object' ? (body.model ?? body.provider) : undefined;
  return typeof named === 'string' ? named : undefined;
}

function statusText(status: number): string {
  return status >= 500 ? 'server error' : 'request refused';
}

/**
 * What a web framework answers in JSON for a path or method it lacks ("Not Found", "Cannot POST
 * /v1/search", or no message at all), outside the `{"error":{"message"}}` object gateways answer
 * with: never what a gateway says of a model or job it does not know, which names them.
 */
const ROUTE_MISSING =
  /^(?:40[45]\s*)?(?:not found|method not allowed|cannot (?:get|post|put|patch|delete) \/\S*)\.?$/i;

function routeMissing(
  status: number,
  parsed: { message?: string; json?: boolean; errorObject?: boolean },
): boolean {
  if (parsed.json !== true || parsed.errorObject || (status !== 404 && status !== 405)) return false;
  return parsed.message === undefined || ROUTE_MISSING.test(parsed.message);
}
