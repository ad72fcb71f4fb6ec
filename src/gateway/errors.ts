import { describeServiceError, type ServiceErrorInit, type ServiceErrorKind } from './error-advice.js';
import { readUpstreamFailure } from './upstream-failure.js';

/**
 * A failed service call, as a value a tool can turn into a message a model can act on.
 * Messages are scrubbed of secrets before a ServiceError is ever built.
 */
export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly kind: ServiceErrorKind;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly serviceMessage: string | undefined;
  readonly model: string | undefined;
  readonly maybeDelivered: boolean;
  readonly host: string | undefined;
  readonly notGatewayLike: boolean;

  constructor(init: ServiceErrorInit) {
    super(init.message);
    this.kind = init.kind;
    this.status = init.status;
    this.code = init.code;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.serviceMessage = init.serviceMessage;
    this.model = init.model;
    this.maybeDelivered = init.maybeDelivered;
    this.host = init.host;
    this.notGatewayLike = init.notGatewayLike ?? false;
  }

  /**
   * Whether the request was turned away before any work was done on it, so nothing was billed:
   * rate limited (429, by the gateway or by the provider), or no account free (the gateway's own
   * 503). 9router answers a chat or Responses failure with 503 after its upstream was called,
   * tagging the message with that provider: then the upstream was reached, and sending again
   * could bill twice.
   */
  turnedAway(): boolean {
    if (this.kind !== 'http') return false;
    if (this.status === 429) return true;
    if (this.status !== 503) return false;
    return this.serviceMessage === undefined || readUpstreamFailure(this.serviceMessage) === undefined;
  }

  /** One or two sentences: what failed, why, and what to do next. */
  describe(): string {
    return describeServiceError(this);
  }
}

/** The caller cancelled the request (which may have reached the service already). */
export function cancelledError(): ServiceError {
  return new ServiceError({ kind: 'aborted', message: 'The request was cancelled', maybeDelivered: true });
}

/** The service answered, but with nothing that can be read as the answer asked for. */
export function unreadableAnswer(message: string, host?: string): ServiceError {
  return new ServiceError({ kind: 'malformed', message, maybeDelivered: true, host });
}

/**
 * Reads whatever error body the service sent: `{"error":{"message"}}`, `{"error":"..."}`,
 * `{"message":"..."}`, a numeric code, plain text, or an HTML page from a proxy.
 */
export function parseErrorBody(
  text: string,
  contentType: string | undefined,
): { message?: string; code?: string; json?: boolean; errorObject?: boolean } {
  const trimmed = text.trim();
  if (!trimmed) return {};
  if (/html/i.test(contentType ?? '') || /^<(!doctype|html)/i.test(trimmed)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1]?.trim();
    const firstText = trimmed
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<[^>]+>/g, '\n')
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean);
    return { message: `non-JSON answer: ${oneLine(title || firstText || 'HTML page')}`, json: false };
  }
  try {
    const body = JSON.parse(trimmed) as unknown;
    if (body && typeof body === 'object') {
      const obj = body as Record<string, unknown>;
      const err = obj.error;
      if (typeof err === 'string') return { message: oneLine(err), json: true };
      if (err && typeof err === 'object') {
        const e = err as Record<string, unknown>;
        const code = e.code ?? e.type;
        return {
          message: typeof e.message === 'string' ? oneLine(e.message) : undefined,
          code: typeof code === 'string' || typeof code === 'number' ? String(code) : undefined,
          json: true,
          errorObject: true,
        };
      }
      if (typeof obj.message === 'string') return { message: oneLine(obj.message), json: true };
      if (typeof obj.detail === 'string') return { message: oneLine(obj.detail), json: true };
      return { json: true };
    }
    if (typeof body === 'string') return { message: oneLine(body), json: true };
  } catch {
    // not JSON: fall through to the first line of text
  }
  return { message: oneLine(trimmed.split('\n')[0] ?? trimmed), json: false };
}

/** A timeout in seconds as a message states it: `1.5` for 1,500 ms (rounding would say 2), `60` for 60,000. */
export function seconds(ms: number): string {
  const s = ms / 1000;
  return s >= 10 || Number.isInteger(s) ? String(Math.round(s)) : String(Math.round(s * 10) / 10);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat;
}
