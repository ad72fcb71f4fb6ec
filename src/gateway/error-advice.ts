// What a failed service call tells the agent: what failed, why, and what to do next. An error
// the gateway tags with an upstream provider is that provider's (its account in the gateway, its
// rate limit, its cooldown), never the gateway key's; an untagged one is the gateway's own.
// A failure's data is declared here and carried by errors.ts's ServiceError, so the advice
// depends on no class and the two modules on each other only one way.

import {
  providerUnreachable,
  providerWithoutCredentials,
  readUpstreamFailure,
  type UpstreamFailure,
} from './upstream-failure.js';

/** What kind of failure a service call met. */
export type ServiceErrorKind =
  | 'http' // the service answered with an error status
  | 'timeout' // no complete answer within the per-request timeout
  | 'network' // connection refused, reset, DNS failure
  | 'aborted' // the caller cancelled
  | 'malformed' // the service answered 2xx with a body we cannot read
  | 'redirect' // the gateway's address answered with a redirect, which gateway calls never follow
  | 'blocked'; // a download URL points at a non-public address (see url-guard.ts); nothing was sent

/** A failed service call as data: what a ServiceError is built from, and all the advice reads. */
export interface ServiceErrorInit {
  kind: ServiceErrorKind;
  message: string;
  status?: number;
  /**
   * The service's own error code (an HTTP answer's), or the connection's (a network failure's:
   * ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET...). Decisions read it here, never from the message.
   */
  code?: string;
  /** How long the service says to wait: its Retry-After, else a "(reset after Ns)" note. */
  retryAfterSeconds?: number;
  /** The service's own message, as it said it (scrubbed): where upstream providers are named. */
  serviceMessage?: string;
  /** The model or provider the request named. */
  model?: string;
  /** True when the request may have reached the service (matters for billed submits). */
  maybeDelivered: boolean;
  /** The host that failed, when it is not the gateway (a download's): the advice then spares the gateway's settings. */
  host?: string;
  /**
   * The gateway's address answered an API path with something no gateway sends (a web page,
   * plain text): GATEWAY_BASE_URL likely names another server.
   */
  notGatewayLike?: boolean;
}

/** Connection codes of a host name that does not resolve (for now, or at all). */
export const UNRESOLVED_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN']);

/** One or two sentences for a failed call (ServiceError.describe()). */
export function describeServiceError(error: ServiceErrorInit): string {
  const upstream =
    error.kind === 'http' && error.serviceMessage ? upstreamText(error, error.serviceMessage) : '';
  if (upstream) return upstream;
  const hint = hintFor(error);
  // A redirect's message names its status beside the address it points to.
  const status =
    error.kind === 'redirect' || saysStatus(error.message, error.status) ? '' : ` (HTTP ${error.status})`;
  // A message that ends with a full stop, or is cut ("…"), takes no second one.
  return `${error.message}${status}.${hint ? ` ${hint}` : ''}`.replace(/([.…])\.(\s|$)/g, '$1$2');
}

/**
 * Whether `text` already names the status ("The service answered 401: …", "tavily returned 401:
 * …"): a sentence says it once, and adds "HTTP 401" only where nothing else does.
 */
export function saysStatus(text: string, status: number | undefined): boolean {
  return status === undefined || new RegExp(`\\b${status}\\b`).test(text);
}

/** Statuses a gateway answers for a whole family (speech 502, chat and Responses 503), whatever the upstream said. */
const FAMILY_STATUS = new Set([502, 503]);
const OTHER_CHOICE = 'or choose another provider or model';

function upstreamText(error: ServiceErrorInit, said: string): string {
  const wait = error.retryAfterSeconds;
  // What the gateway said, with its status unless that says it already.
  const quoted = (text: string) => (saysStatus(text, error.status) ? text : `${text}; HTTP ${error.status}`);
  const missing = providerWithoutCredentials(said);
  if (missing) {
    if (wait !== undefined) {
      return `${missing} is cooling down for ${wait} s in the gateway (${quoted(said)}): retry after ${wait} s, ${OTHER_CHOICE}.`;
    }
    // The gateway says this both while every account of the provider cools down after an error
    // and when it has none: the answer alone cannot tell which.
    return (
      `The gateway has no usable ${missing} account right now (${quoted(said)}). Either ${missing} is cooling down ` +
      `after an earlier error (the gateway pauses a failing account, often for 30 s to 2 minutes) or the gateway has ` +
      `no ${missing} account: wait a minute and retry, or check ${missing} in the gateway's dashboard.`
    );
  }
  const failure = readUpstreamFailure(said, error.model);
  if (!failure) return '';
  if (providerUnreachable(failure)) return unreachableText(failure, quoted(failure.detail), wait);
  const status =
    failure.upstreamStatus ??
    statusFromWords(failure.detail) ??
    (FAMILY_STATUS.has(error.status ?? 0) ? undefined : error.status);
  const advice = adviceFor(status, failure, wait);
  const next =
    wait !== undefined
      ? `${failure.subject} is cooling down for ${wait} s in the gateway: ${advice}`
      : advice.charAt(0).toUpperCase() + advice.slice(1);
  const fixed = wait !== undefined ? alreadyFixed(status, wait) : '';
  return `${headline(status, failure)} (${quoted(failure.detail)}). ${next}.${fixed}`;
}

/**
 * While an account cools down the gateway answers with the refusal that locked it, the fix made
 * since in its dashboard notwithstanding: a person who fixed it is told to wait, not to fix again.
 */
function alreadyFixed(status: number | undefined, wait: number): string {
  const fix = { 401: 'Fixed the key', 402: 'Topped it up', 403: 'Fixed its permissions or quota' }[
    status ?? 0
  ];
  return fix
    ? ` ${fix} already? The gateway tries the account again in ${wait} s, and repeats this refusal until then.`
    : '';
}

/** The gateway got no answer from the provider at all: its network, never the provider's key. */
function unreachableText(failure: UpstreamFailure, said: string, wait: number | undefined): string {
  const retry = wait !== undefined ? `retry after ${wait} s` : 'retry shortly';
  return (
    `The gateway could not reach ${failure.provider} (${said}): a network failure between the gateway and ` +
    `${failure.provider}, not a refused key. Check the network of the gateway's machine (its connection, proxy, ` +
    `firewall or DNS), then ${retry}, ${OTHER_CHOICE}.`
  );
}

function headline(status: number | undefined, { subject, provider }: UpstreamFailure): string {
  switch (status) {
    case 401:
      return `${provider} refused the gateway's ${provider} account`;
    case 403:
      return `${provider} refused the gateway's ${provider} account (permission or quota)`;
    case 402:
      return `The gateway's ${provider} account is out of credit`;
    case 429:
      return `${provider} is rate limiting the gateway's ${provider} account`;
    case 404:
      return `${subject} answered "not found"`;
    default:
      return `${subject} failed`;
  }
}

function adviceFor(
  status: number | undefined,
  { provider }: UpstreamFailure,
  wait: number | undefined,
): string {
  const retry = wait !== undefined ? `retry after ${wait} s` : 'retry shortly';
  switch (status) {
    case 401:
      return `fix that account's key in the gateway's dashboard, ${OTHER_CHOICE}`;
    case 403:
      return `check that account's permissions and quota in the gateway's dashboard, ${OTHER_CHOICE}`;
    case 402:
      return `top up that account, ${OTHER_CHOICE}`;
    case 404:
      // While an account cools down the gateway answers every request with the error that locked
      // it, which may have been another request's.
      return wait !== undefined
        ? `if the model or job id is wrong, fix it (list_models lists the models); if it is right, the error may be an earlier request's: ${retry}, ${OTHER_CHOICE}`
        : `check the model or job id (list_models lists the models), ${OTHER_CHOICE}`;
    case 400:
    case 409:
    case 422:
      return `fix what the message points at and call again${wait !== undefined ? ` after ${wait} s` : ''}, ${OTHER_CHOICE}`;
    case 429:
      return `${wait !== undefined ? retry : 'wait a little and retry'}, ${OTHER_CHOICE}`;
    case undefined:
      return `${retry}, ${OTHER_CHOICE}; if it keeps failing, check the ${provider} account in the gateway's dashboard`;
    default:
      return `${retry}, ${OTHER_CHOICE}`;
  }
}

/** A status the upstream's words imply, when no number says it (speech failures are all 502). */
function statusFromWords(detail: string): number | undefined {
  if (/\b401\b|unauthori[sz]ed|(invalid|incorrect)[ _]api[ _]key|authentication/i.test(detail)) return 401;
  if (/\b402\b|insufficient (credit|balance|funds)|payment required/i.test(detail)) return 402;
  if (/\b403\b|forbidden|permission denied/i.test(detail)) return 403;
  if (/\b429\b|rate.?limit|too many requests/i.test(detail)) return 429;
  return undefined;
}

const NOT_A_GATEWAY =
  "That is not how a gateway answers: GATEWAY_BASE_URL may name another server. Set it to the gateway's address, and run `gateway-tools-mcp doctor` to check.";

/** The advice for an error the gateway raised itself (or one no provider is named in). */
function hintFor(error: ServiceErrorInit): string {
  if (error.host) return elsewhereHint(error, error.host);
  if (error.notGatewayLike) return NOT_A_GATEWAY;
  const wait = error.retryAfterSeconds;
  switch (error.kind) {
    case 'timeout':
      return 'Retry, or raise GATEWAY_TIMEOUT_MS if the service is slow.';
    case 'network':
      return UNRESOLVED_CODES.has(error.code ?? '')
        ? 'Check the host name in GATEWAY_BASE_URL (run `gateway-tools-mcp doctor`).'
        : 'Check that the service is running and GATEWAY_BASE_URL is right (run `gateway-tools-mcp doctor`).';
    case 'aborted':
      return '';
    case 'malformed':
      return 'The service returned an unreadable answer; retry, and check GATEWAY_BASE_URL points at the gateway.';
    case 'blocked':
      return 'If that host is really meant to be reached, the user can list it in GATEWAY_ALLOW_PRIVATE_URLS.';
    case 'redirect':
      return ''; // the message already says which address to set
    case 'http':
      break;
  }
  const after = wait !== undefined ? ` Retry after ${wait} s.` : '';
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
      return `The upstream provider failed or timed out; ${wait !== undefined ? `retry after ${wait} s` : 'retry shortly'} or choose another provider.`;
    case 503:
      return wait !== undefined
        ? `Every upstream account is cooling down: retry after ${wait} s.`
        : 'Every upstream account is unavailable: retry later.';
    default:
      if (error.status === undefined) return '';
      // A refusal the service explains itself (400 bad request, 409, 422, ...): its message says what.
      return error.status >= 500
        ? wait !== undefined
          ? `Retry after ${wait} s.`
          : 'Retry shortly.'
        : `Fix what the message points at (an argument, the model or the provider) and call again.${after}`;
  }
}

/** Advice for a failure at a host that is not the gateway: its settings and key are not the cause. */
function elsewhereHint(error: ServiceErrorInit, host: string): string {
  const notGateway = `${host} is not the gateway, so neither GATEWAY_BASE_URL nor the gateway key is the cause`;
  switch (error.kind) {
    case 'network':
      return `${notGateway}: check that the host exists and can be reached from this machine, then retry.`;
    case 'timeout':
      return `${notGateway}: retry later.`;
    case 'http':
      return `${notGateway}: retry later; the link may have expired.`;
    default:
      return '';
  }
}
