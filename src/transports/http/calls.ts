import type { JSONRPCMessage, RequestId, Transport } from '@modelcontextprotocol/server';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/server';

/**
 * Counts the JSON-RPC requests (tool calls above all) that are being served, across every session,
 * so a graceful shutdown can wait for them to finish before it cancels what is left.
 */
export class InFlightCalls {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  /** Marks one call as started; the returned function ends it (calling it twice is harmless). */
  begin(): () => void {
    this.count += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.count -= 1;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passes first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }
}

export interface WatchedCalls {
  isPending(id: RequestId): boolean;
  /** Cancels a call as if the client had sent notifications/cancelled for it. */
  cancel(id: RequestId, reason: string): void;
}

/**
 * Hooks a connected transport so that every request it delivers counts as in flight until its
 * response is sent, it is cancelled, or the transport closes. Call after server.connect().
 */
export function watchCalls(
  transport: Transport,
  inFlight: InFlightCalls,
  onCancelled?: (id: RequestId) => void,
): WatchedCalls {
  const pending = new Map<RequestId, () => void>();
  const finish = (id: RequestId) => {
    pending.get(id)?.();
    pending.delete(id);
  };
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      finish(message.id);
      pending.set(message.id, inFlight.begin());
    }
    const cancelled = cancelledId(message);
    deliver?.(message, extra);
    if (cancelled !== undefined && pending.has(cancelled)) {
      finish(cancelled);
      onCancelled?.(cancelled);
    }
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    // An error response may have no id (a parse error): nothing of ours to finish then.
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) {
      finish(message.id);
    }
    return send(message, options);
  };
  const closed = transport.onclose;
  transport.onclose = () => {
    for (const id of [...pending.keys()]) finish(id);
    closed?.();
  };
  return {
    isPending: (id) => pending.has(id),
    cancel(id, reason) {
      if (!pending.has(id)) return;
      transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason },
      });
    },
  };
}

function cancelledId(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) {
    return undefined;
  }
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The ids of the requests in a parsed POST body (one message or a batch). */
export function requestIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages
    .filter((m): m is { id: RequestId; method: string } => {
      const candidate = m as { id?: unknown; method?: unknown } | null;
      return (
        typeof candidate?.method === 'string' &&
        (typeof candidate.id === 'string' || typeof candidate.id === 'number')
      );
    })
    .map((m) => m.id);
}
