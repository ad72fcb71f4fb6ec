// The faults of the fault matrix, and what an acceptable answer to each looks like.
import type { Fault } from '../../reference-service/index.js';

/** A distinctive key: the service echoes it in its error messages, and no answer may repeat it. */
export const SECRET = 'sk-matrix-DO-NOT-LEAK-7f3a9c21e5b04d68';

/** Per-request timeout and retry bound of every server under test: short, so the matrix is fast. */
export const TIMEOUT_MS = 3000;
export const MAX_RETRIES = 1;

export interface MatrixFault {
  /** Column id in the report. */
  id: string;
  /** What the service does, for the legend. */
  what: string;
  fault: Fault;
  /** The answer must name this: the status, or the cause. */
  cause: RegExp;
}

const echo = (what: string) => `${what} (key ${SECRET}; Authorization: Bearer ${SECRET})`;

function status(code: number, what: string, extra: Partial<Fault> = {}): MatrixFault {
  return {
    id: String(code),
    what: `HTTP ${code}, contract error JSON whose message echoes the key`,
    fault: { status: code, message: echo(what), ...extra },
    cause: new RegExp(`\\b${code}\\b`),
  };
}

const TIMED_OUT = /did not answer|stalled|nothing arrived/i;

export const FAULTS: readonly MatrixFault[] = [
  status(401, 'Invalid API key'),
  status(402, '[xai] Insufficient credit'),
  status(403, 'Quota exceeded'),
  status(404, 'Model not found'),
  status(408, 'Upstream timeout'),
  status(429, 'Rate limited'),
  {
    ...status(429, 'Rate limited, cooling down', { headers: { 'retry-after': '1' } }),
    id: '429+RA',
    what: 'HTTP 429 with `Retry-After: 1`, on every attempt',
  },
  status(500, '[tavily] upstream exploded'),
  status(502, 'Upstream network failure'),
  status(503, 'All accounts unavailable'),
  status(504, 'Upstream timed out'),
  { id: 'reset', what: 'TCP reset, no response', fault: { reset: true }, cause: /connection/i },
  { id: 'hang', what: 'no response at all', fault: { hang: true }, cause: TIMED_OUT },
  {
    id: 'slow',
    what: 'headers and 16 bytes, then a pause far past the timeout',
    fault: { slowBodyMs: 60_000 },
    cause: TIMED_OUT,
  },
  {
    id: 'trunc',
    what: 'HTTP 200 whose JSON body stops halfway',
    fault: { truncatedJson: true },
    cause: /not valid JSON|unreadable|instead of audio|incomplete/i,
  },
  {
    id: 'nest',
    what: 'HTTP 200 whose body is 4 MiB of nested arrays (`[[[[…]]]]`), valid JSON too deep to parse in bounded time',
    fault: { body: `${'['.repeat(2 * 1024 * 1024)}${']'.repeat(2 * 1024 * 1024)}` },
    cause: /nested deeper|instead of audio/i,
  },
  {
    id: 'cut',
    what: 'HTTP 400 whose message puts the key across the 300 characters the server quotes',
    fault: { status: 400, message: `Invalid request ${'.'.repeat(264)} ${SECRET} …` },
    cause: /\b400\b.*Invalid request/s,
  },
  {
    id: 'html',
    what: 'HTTP 502 with a proxy’s HTML error page',
    fault: { status: 502, html: true },
    cause: /\b502\b/,
  },
  {
    id: 'str',
    what: 'HTTP 400 with `{"error":"<message>"}` (a string) echoing the key',
    fault: { status: 400, errorAsString: true, message: echo('Invalid request') },
    cause: /\b400\b.*Invalid request/s,
  },
];

/** Faults on a lookup that comes before the main call (model lists, the status of a starting job). */
export const LOOKUP_FAULTS: readonly MatrixFault[] = [
  {
    id: '404',
    what: 'HTTP 404',
    fault: { status: 404, message: echo('Not found') },
    cause: /\b404\b|has no \/v1\/models|lists? (no|none)/,
  },
  { ...status(500, 'Internal error'), what: 'HTTP 500' },
  { id: 'hang', what: 'no response at all', fault: { hang: true }, cause: TIMED_OUT },
];

/** Faults on a file download that follows the main call. */
export const DOWNLOAD_FAULTS: readonly MatrixFault[] = FAULTS.filter((f) =>
  ['404', '500', 'reset', 'hang', 'slow'].includes(f.id),
);

/** A next step the agent can take. */
const NEXT_STEP =
  /\b(retry|try again|set GATEWAY_\w+|check|call \w+|wait|pass `?\w+|choose|top it up|raise GATEWAY_\w+|add credentials|fix|start a new)\b/i;

/** Why a failure message is not actionable (empty when it is). */
export function messageProblems(text: string, fault: Pick<MatrixFault, 'cause'>): string[] {
  const problems: string[] = [];
  if (!fault.cause.test(text)) problems.push(`does not name the cause (${fault.cause})`);
  if (!NEXT_STEP.test(text)) problems.push('says nothing to do next');
  if (/unexpectedly|this is a bug/i.test(text)) problems.push('reported as an internal bug');
  if (text.includes(SECRET) || /sk-matrix/.test(text)) problems.push('leaks the API key');
  return problems;
}
