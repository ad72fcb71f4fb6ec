/**
 * A failed service call, as a value a tool can turn into a message a model can act on.
 * Messages are scrubbed of secrets before a ServiceError is ever built.
 */
export type ServiceErrorKind =
  | 'http' // the service answered with an error status
  | 'timeout' // no complete answer within the per-request timeout
  | 'network' // connection refused, reset, DNS failure
  | 'aborted' // the caller cancelled
  | 'malformed' // the service answered 2xx with a body we cannot read
  | 'blocked'; // a download URL points at a non-public address (see url-guard.ts); nothing was sent

export interface ServiceErrorInit {
  kind: ServiceErrorKind;
  message: string;
  status?: number;
  code?: string;
  retryAfterSeconds?: number;
  /** True when the request may have reached the service (matters for billed submits). */
  maybeDelivered: boolean;
}

export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly kind: ServiceErrorKind;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly maybeDelivered: boolean;

  constructor(init: ServiceErrorInit) {
    super(init.message);
    this.kind = init.kind;
    this.status = init.status;
    this.code = init.code;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.maybeDelivered = init.maybeDelivered;
  }

  /** One or two sentences: what failed and what to do next. */
  describe(): string {
    const hint = hintFor(this);
    const status = this.status ? ` (HTTP ${this.status})` : '';
    return `${this.message}${status}.${hint ? ` ${hint}` : ''}`.replace(/\.\.(\s|$)/g, '.$1');
  }
}

function hintFor(error: ServiceError): string {
  const wait = error.retryAfterSeconds;
  switch (error.kind) {
    case 'timeout':
      return 'Retry, or raise GATEWAY_TIMEOUT_MS if the service is slow.';
    case 'network':
      return 'Check that the service is running and GATEWAY_BASE_URL is right (run `gateway-tools-mcp doctor`).';
    case 'aborted':
      return '';
    case 'malformed':
      return 'The service returned an unreadable answer; retry, and check GATEWAY_BASE_URL points at the gateway.';
    case 'blocked':
      return 'If that host is really meant to be reached, the user can list it in GATEWAY_ALLOW_PRIVATE_URLS.';
    case 'http':
      break;
  }
  if (/no credentials for provider/i.test(error.message)) {
    return 'The gateway has no working account for that provider: add credentials in the gateway, or choose another provider/model.';
  }
  switch (error.status) {
    case 401:
      return 'Set GATEWAY_API_KEY (or GATEWAY_API_KEY_FILE) to a key the gateway accepts.';
    case 402:
      return 'The upstream account is out of credit: top it up or choose another provider.';
    case 403:
      return 'The key or upstream account lacks permission or quota for this; check the gateway dashboard.';
    case 404:
      return 'The model, provider or job is unknown to the service; call list_models or check the id.';
    case 408:
      return 'The upstream took too long: retry shortly, or choose another provider or model.';
    case 429:
      return wait !== undefined
        ? `Rate limited: retry after ${wait} s.`
        : 'Rate limited: wait a little and retry.';
    case 502:
    case 504:
      return 'The upstream provider failed or timed out; retry shortly or choose another provider.';
    case 503:
      return wait !== undefined
        ? `Every upstream account is cooling down: retry after ${wait} s.`
        : 'Every upstream account is unavailable: retry later.';
    default:
      if (error.status === undefined) return '';
      // A refusal the service explains itself (400 bad request, 409, 422, ...): its message says what.
      return error.status >= 500
        ? 'Retry shortly.'
        : 'Fix what the message points at (an argument, the model or the provider) and call again.';
  }
}

/**
 * Reads whatever error body the service sent: `{"error":{"message"}}`, `{"error":"..."}`,
 * `{"message":"..."}`, a numeric code, plain text, or an HTML page from a proxy.
 */
export function parseErrorBody(
  text: string,
  contentType: string | undefined,
): { message?: string; code?: string } {
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
    return { message: `non-JSON answer: ${oneLine(title || firstText || 'HTML page')}` };
  }
  try {
    const body = JSON.parse(trimmed) as unknown;
    if (body && typeof body === 'object') {
      const obj = body as Record<string, unknown>;
      const err = obj.error;
      if (typeof err === 'string') return { message: oneLine(err) };
      if (err && typeof err === 'object') {
        const e = err as Record<string, unknown>;
        const code = e.code ?? e.type;
        return {
          message: typeof e.message === 'string' ? oneLine(e.message) : undefined,
          code: typeof code === 'string' || typeof code === 'number' ? String(code) : undefined,
        };
      }
      if (typeof obj.message === 'string') return { message: oneLine(obj.message) };
      if (typeof obj.detail === 'string') return { message: oneLine(obj.detail) };
    }
    if (typeof body === 'string') return { message: oneLine(body) };
  } catch {
    // not JSON: fall through to the first line of text
  }
  return { message: oneLine(trimmed.split('\n')[0] ?? trimmed) };
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
