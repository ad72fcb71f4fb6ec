import type { ServerResponse } from 'node:http';
import { faultsOf } from './faults.js';
import type { UpstreamRequest } from './types.js';

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
  return true;
}

/**
 * Answers the fault the request asks for (`fault-<status>`, with `retry-after-<s>`), in the
 * provider's error shape, and returns true; returns false when it asks for none.
 */
export function answerFault(
  req: UpstreamRequest,
  res: ServerResponse,
  shape: (status: number, message: string) => unknown = (status, message) => ({
    error: { message, type: 'fake_error', code: status },
  }),
): boolean {
  const { status, retryAfter } = faultsOf(req.text);
  if (!status) return false;
  const message = `fake ${req.host} says ${status}`;
  return json(res, status, shape(status, message), retryAfter ? { 'retry-after': retryAfter } : {});
}
