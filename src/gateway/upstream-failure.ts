// Reading a gateway error for the upstream provider behind it. 9router tags an upstream
// provider's failure with that provider (`[exa] exa returned 401: … (reset after 2m)`,
// `[openai/tts-1/alloy] …`, `[<provider node>/m1] [401]: …`). After such a failure it locks that
// account or model for a while (a "cooldown"), and meanwhile answers with the stored error,
// `Retry-After` and "(reset after Ns)", or with 400 "No credentials for provider: X".
// Other gateways tag errors the same way or not at all; an untagged error is the gateway's own.

export interface UpstreamFailure {
  /** What failed, as the gateway names it: a provider (`exa`) or provider/model[/voice]. */
  subject: string;
  /** The provider part of `subject`. */
  provider: string;
  /** The status the upstream answered, when the message says so. */
  upstreamStatus: number | undefined;
  /** The upstream's own words, without the tags and the cooldown note. */
  detail: string;
}

const TAG = /^\s*\[([\w.:@/+-]{1,200})\]:?\s*/;
const STATUS_TAG = /^\d{3}$/;
const RESET_NOTE = /\s*\(reset after ([^)]{1,40})\)\s*$/i;
const NO_CREDENTIALS = /\bno credentials for provider:?\s*([\w.:/-]{1,100})/i;
/** Provider nodes are tagged with an id the user never typed (`openai-compatible-chat-<uuid>`). */
const INTERNAL_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const STATUS_IN_TEXT = [/\breturned (\d{3})\b/i, /\berror:? (\d{3})\b/i];

/**
 * The upstream failure a tagged gateway message reports, or undefined for the gateway's own
 * errors. `requested` is the model or provider the request named: it stands in for a tag that
 * is an internal id.
 */
export function readUpstreamFailure(message: string, requested?: string): UpstreamFailure | undefined {
  let rest = message.replace(RESET_NOTE, '');
  const tags: string[] = [];
  let upstreamStatus: number | undefined;
  for (let match = TAG.exec(rest); match; match = TAG.exec(rest)) {
    const tag = match[1] ?? '';
    if (STATUS_TAG.test(tag)) upstreamStatus ??= Number(tag);
    else tags.push(tag);
    rest = rest.slice(match[0].length);
  }
  const [tag] = tags;
  if (!tag) return undefined;
  const subject = INTERNAL_ID.test(tag) && requested ? requested : tag;
  for (const pattern of STATUS_IN_TEXT) upstreamStatus ??= numberOf(pattern.exec(rest)?.[1]);
  return {
    subject,
    provider: subject.split('/')[0] || subject,
    upstreamStatus,
    detail: rest.trim() || message,
  };
}

/**
 * How a gateway reports that its request to the provider never got an answer (Node's fetch and
 * undici, DNS, TLS, proxies): the network between the gateway and the provider, not the account.
 */
const UNREACHABLE =
  /\bfetch failed\b|\bsocket hang up\b|\bE(CONNREFUSED|CONNRESET|NOTFOUND|AI_AGAIN|TIMEDOUT|HOSTUNREACH|NETUNREACH)\b|\bUND_ERR_(CONNECT_TIMEOUT|SOCKET)\b|\bgetaddrinfo\b|\bcertificate\b|\bproxy\b/i;

/** Whether an upstream failure's words say the provider could not be reached at all. */
export function providerUnreachable(failure: UpstreamFailure): boolean {
  return failure.upstreamStatus === undefined && UNREACHABLE.test(failure.detail);
}

/** The provider a "No credentials for provider: X" answer names: cooling down, or not configured. */
export function providerWithoutCredentials(message: string): string | undefined {
  return NO_CREDENTIALS.exec(message)?.[1]?.replace(/[.:]+$/, '');
}

/** The seconds a "(reset after 1m 53s)" note says, or undefined. */
export function resetAfterSeconds(message: string): number | undefined {
  const note = RESET_NOTE.exec(message)?.[1];
  if (!note) return undefined;
  let total = 0;
  let matched = false;
  for (const [, amount, unit] of note.matchAll(/(\d+(?:\.\d+)?)\s*(ms|h|m|s)\b/gi)) {
    const value = Number(amount);
    const scale = { ms: 0.001, h: 3600, m: 60, s: 1 }[(unit ?? 's').toLowerCase() as 'ms' | 'h' | 'm' | 's'];
    total += value * scale;
    matched = true;
  }
  return matched ? Math.ceil(total) : undefined;
}

function numberOf(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}
