// Fault injection: a queue of faults per route, and the replies a fault turns into.

import { errorReply, type Reply, statusText } from './http-util.js';
import type { Fault, RouteName } from './types.js';

interface QueuedFault {
  fault: Fault;
  remaining: number;
}

export class FaultQueue {
  private readonly queues = new Map<RouteName, QueuedFault[]>();

  inject(route: RouteName, fault: Fault): void {
    const times = fault.times ?? 1;
    if (!(times > 0)) return;
    const queue = this.queues.get(route) ?? [];
    // A copy, so a test reusing its fault object cannot change what is already queued.
    queue.push({
      fault: { ...fault, ...(fault.headers ? { headers: { ...fault.headers } } : {}) },
      remaining: times,
    });
    this.queues.set(route, queue);
  }

  /** The fault for this request, if any; each call uses up one of the head fault's `times`. */
  take(route: RouteName): Fault | undefined {
    const queue = this.queues.get(route);
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    head.remaining -= 1;
    if (head.remaining <= 0) queue.shift();
    return head.fault;
  }

  clear(): void {
    this.queues.clear();
  }
}

/** The page a reverse proxy serves when the service behind it fails: not JSON at all. */
export function htmlErrorReply(status: number): Reply {
  const title = `${status} ${statusText(status)}`;
  const body = [
    `<html><head><title>${title}</title></head>`,
    '<body>',
    `<center><h1>${title}</h1></center>`,
    '<hr><center>nginx</center>',
    '</body>',
    '</html>',
    '',
  ].join('\r\n');
  return { kind: 'raw', status, contentType: 'text/html', body };
}

/** A complete HTTP response whose JSON body stops halfway, as a broken proxy or upstream may send. */
export function truncatedJsonReply(normal: Reply, status: number): Reply {
  const json =
    normal.kind === 'json'
      ? JSON.stringify(normal.body)
      : JSON.stringify({ object: 'list', data: [{ id: 'item-1', object: 'item' }, { id: 'item-2' }] });
  const cut = json.slice(0, Math.max(1, Math.floor(json.length / 2)));
  return { kind: 'raw', status, contentType: 'application/json', body: cut };
}

/**
 * The reply that replaces the route's own answer, or undefined when the fault only reshapes or
 * delays the normal answer (delayMs, headers, slowBodyMs) or needs it (truncatedJson).
 */
export function replacementReply(fault: Fault): Reply | undefined {
  if (fault.html) return htmlErrorReply(fault.status ?? 502);
  if (fault.body !== undefined) {
    return { kind: 'raw', status: fault.status ?? 200, contentType: 'application/json', body: fault.body };
  }
  if (fault.status !== undefined && !fault.truncatedJson) {
    return errorReply(fault.status, {
      ...(fault.message !== undefined ? { message: fault.message } : {}),
      ...(fault.errorAsString ? { asString: true } : {}),
      ...(fault.numericCode ? { numericCode: true } : {}),
    });
  }
  return undefined;
}
