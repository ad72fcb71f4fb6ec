import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  type MessageExtraInfo,
  type RequestId,
  type ServerCapabilities,
  type ServerNotification,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { RequestSignal } from './cancel.js';
import type { Logger } from './log.js';

/** What a request handler gets besides the request's params. */
export interface RequestContext {
  requestId: RequestId;
  /** Aborted when the client cancels the request or the connection closes. */
  signal: RequestSignal;
  /** The request's `_meta.progressToken`, when the client asked for progress. */
  progressToken: string | number | undefined;
  /** Sends a notification on the request's own stream (nothing once the request is cancelled). */
  notify(notification: ServerNotification): Promise<void>;
  /** What the transport knows about the message (HTTP headers, auth). */
  transportInfo: MessageExtraInfo | undefined;
}

export type Params = Record<string, unknown>;
export type RequestHandler = (params: Params, context: RequestContext) => unknown;

/** A JSON-RPC error a handler means to send as it is (any other thrown error is -32603). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ProtocolOptions {
  capabilities: ServerCapabilities;
  instructions?: string;
  /** Where a handler that throws (a bug) and an answer that could not be sent are reported. */
  log: Pick<Logger, 'error' | 'debug'>;
}

/**
 * The server side of one MCP connection: initialize, ping, cancellation and the handlers it is
 * given (tools/list and tools/call), over any SDK transport. In place of the SDK's Server, whose
 * request path (task bookkeeping, a zod parse of every request and every tool result, closures
 * for server-to-client requests) was the largest cost of a tool call that bought this server
 * nothing (docs/benchmarks.md): it sends the client no requests and checks its own results.
 */
export class McpProtocol {
  onclose?: () => void;

  private transport: Transport | undefined;
  private readonly handlers: Map<string, RequestHandler>;
  /** Requests being served, by id: what notifications/cancelled and a closed connection abort. */
  private readonly running = new Map<RequestId, RequestSignal>();

  constructor(
    private readonly serverInfo: Implementation,
    private readonly options: ProtocolOptions,
    handlers: Record<string, RequestHandler>,
  ) {
    this.handlers = new Map([
      ['initialize', (params) => this.initialize(params)],
      ['ping', () => ({})],
      ...Object.entries(handlers),
    ]);
  }

  /** Takes over the transport's callbacks (keeping any already set) and starts it. */
  async connect(transport: Transport): Promise<void> {
    if (this.transport) throw new Error('already connected: use one McpProtocol per connection');
    this.transport = transport;
    const { onclose, onmessage } = transport;
    transport.onclose = () => {
      onclose?.();
      this.closed();
    };
    transport.onmessage = (message, extra) => {
      onmessage?.(message, extra);
      this.receive(message, extra);
    };
    await transport.start();
  }

  async close(): Promise<void> {
    await this.transport?.close();
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    // Responses are not read: this server sends the client no requests.
    if (!('method' in message)) return;
    if ('id' in message) this.serve(message as JSONRPCRequest, extra);
    else if (message.method === 'notifications/cancelled') {
      const { requestId, reason } = (message.params ?? {}) as { requestId?: RequestId; reason?: unknown };
      if (requestId !== undefined) this.running.get(requestId)?.abort(reason);
    }
  }

  private serve(request: JSONRPCRequest, extra: MessageExtraInfo | undefined): void {
    const transport = this.transport;
    if (!transport) return;
    const { id, method } = request;
    const handler = this.handlers.get(method) ?? methodNotFound;
    const signal = new RequestSignal();
    this.running.set(id, signal);
    const params = (request.params ?? {}) as Params;
    const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    const context: RequestContext = {
      requestId: id,
      signal,
      progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
      notify: async (notification) => {
        if (signal.aborted) return;
        await transport.send({ jsonrpc: '2.0', ...notification }, { relatedRequestId: id });
      },
      transportInfo: extra,
    };
    const respond = (message: JSONRPCMessage) => {
      if (this.running.get(id) === signal) this.running.delete(id);
      // A cancelled request gets no answer.
      if (!signal.aborted) this.answer(transport, message);
    };
    const fail = (error: unknown) => {
      if (!(error instanceof RpcError)) {
        this.options.log.error(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
      respond({ jsonrpc: '2.0', id, error: errorOf(error) });
    };
    let outcome: unknown;
    try {
      outcome = handler(params, context);
    } catch (error) {
      outcome = Promise.reject(error);
    }
    // Answered in a later microtask even when the handler returned at once: transports expect
    // no answer from inside their own onmessage call.
    Promise.resolve(outcome).then(
      (result) => respond({ jsonrpc: '2.0', id, result } as JSONRPCMessage),
      fail,
    );
  }

  private answer(transport: Transport, message: JSONRPCMessage): void {
    transport.send(message).catch((error: unknown) => {
      this.options.log.debug(
        `an answer was not sent: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  private initialize(params: Params) {
    const requested = params.protocolVersion;
    if (typeof requested !== 'string') {
      throw new RpcError(
        ErrorCode.InvalidParams,
        'Invalid initialize request: protocolVersion must be a string',
      );
    }
    return {
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
      capabilities: this.options.capabilities,
      serverInfo: this.serverInfo,
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
    };
  }

  private closed(): void {
    this.transport = undefined;
    for (const signal of this.running.values()) signal.abort(new Error('the connection closed'));
    this.running.clear();
    this.onclose?.();
  }
}

function methodNotFound(): never {
  throw new RpcError(ErrorCode.MethodNotFound, 'Method not found');
}

/** A JSON object (not null, not an array): what params, arguments and `_meta` must be. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An RpcError as it is; anything else is a bug, answered without its message (it is logged). */
function errorOf(error: unknown): { code: number; message: string } {
  if (error instanceof RpcError) return { code: error.code, message: error.message };
  return { code: ErrorCode.InternalError, message: 'Internal error' };
}
