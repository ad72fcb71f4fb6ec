// Fault markers: what a request asks its fake provider to do instead of answering well.
/** The fault markers a request carries. */
export function faultsOf(text: string): {
  status?: number;
  retryAfter?: string;
  delayMs?: number;
  /** fault-unreachable: the connection is dropped unanswered, as by a provider the network cannot reach. */
  unreachable: boolean;
} {
  const status = /\bfault-(\d{3})\b/.exec(text)?.[1];
  const retryAfter = /\bretry-after-(\d+)\b/.exec(text)?.[1];
  const delay = /\bdelay-(\d{1,5})\b/.exec(text)?.[1];
  return {
    status: status ? Number(status) : undefined,
    retryAfter,
    delayMs: delay ? Number(delay) : undefined,
    unreachable: /\bfault-unreachable\b/.test(text),
  };
}
