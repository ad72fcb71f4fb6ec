// A view's side of MCP Apps (the extension io.modelcontextprotocol/ui): JSON-RPC 2.0 over
// postMessage with the host that frames the view (window.parent), as the extension's own App class
// speaks it, for what the views use: the handshake (ui/initialize, then
// ui/notifications/initialized), the size of the page as it changes, the call's input, result and
// cancellation, the host's context as it changes, teardown, ping, and the requests a view makes
// (tools/call, resources/read, ui/download-file, ui/open-link, ui/request-display-mode).
//
// The App class itself cannot be bundled small: it extends the MCP SDK's Protocol and validates
// with zod, about 390 KB in each page. Every method name and message shape here is checked by the
// compiler against the extension's and the SDK's own type definitions (type imports only: nothing
// of them is in the page).

import type {
  CallToolRequest,
  CallToolResult,
  CancelledNotification,
  Implementation,
  JSONRPCErrorResponse,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResultResponse,
  PingRequest,
  ProgressNotification,
  ProtocolErrorCode,
  ReadResourceRequest,
  ReadResourceResult,
  RequestId,
} from '@modelcontextprotocol/client';
import type {
  LATEST_PROTOCOL_VERSION,
  McpUiAppCapabilities,
  McpUiDownloadFileRequest,
  McpUiDownloadFileResult,
  McpUiHostCapabilities,
  McpUiHostContext,
  McpUiHostContextChangedNotification,
  McpUiInitializedNotification,
  McpUiInitializeRequest,
  McpUiInitializeResult,
  McpUiOpenLinkRequest,
  McpUiOpenLinkResult,
  McpUiRequestDisplayModeRequest,
  McpUiRequestDisplayModeResult,
  McpUiResourceTeardownRequest,
  McpUiSizeChangedNotification,
  McpUiToolCancelledNotification,
  McpUiToolInputNotification,
  McpUiToolResultNotification,
} from '@modelcontextprotocol/ext-apps';

/** The extension's protocol version: the compiler fails when the installed extension moves on. */
const PROTOCOL_VERSION: typeof LATEST_PROTOCOL_VERSION = '2026-01-26';
/** How long a request waits for its answer (the SDK's default), renewed by each progress report. */
const REQUEST_TIMEOUT_MS = 60_000;
const METHOD_NOT_FOUND: ProtocolErrorCode.MethodNotFound = -32601;
const INTERNAL_ERROR: ProtocolErrorCode.InternalError = -32603;

/** What a view asks its host, with the answer each request gets. */
type Asked =
  | { request: McpUiInitializeRequest; result: McpUiInitializeResult }
  | { request: CallToolRequest; result: CallToolResult }
  | { request: ReadResourceRequest; result: ReadResourceResult }
  | { request: McpUiDownloadFileRequest; result: McpUiDownloadFileResult }
  | { request: McpUiOpenLinkRequest; result: McpUiOpenLinkResult }
  | { request: McpUiRequestDisplayModeRequest; result: McpUiRequestDisplayModeResult };
type AskedMethod = Asked['request']['method'];
type Exchange<M extends AskedMethod> = Extract<Asked, { request: { method: M } }>;
type Params<M extends AskedMethod> = Exchange<M>['request']['params'];

/** What a view tells its host. */
type Told = McpUiInitializedNotification | McpUiSizeChangedNotification | CancelledNotification;

/** What the host tells a view. */
type Heard =
  | McpUiToolInputNotification
  | McpUiToolResultNotification
  | McpUiToolCancelledNotification
  | McpUiHostContextChangedNotification
  | ProgressNotification;

/** What the host asks a view; anything else is answered "Method not found". */
const ANSWERED = ['ping', 'ui/resource-teardown'] as const satisfies readonly (
  | McpUiResourceTeardownRequest
  | PingRequest
)['method'][];

/** What a view does when the host tells it something. */
export interface ViewEvents {
  toolInput?(params: McpUiToolInputNotification['params']): void;
  toolResult?(result: McpUiToolResultNotification['params']): void;
  toolCancelled?(params: McpUiToolCancelledNotification['params']): void;
  /** The host's context changed; the bridge has merged the change into `hostContext` already. */
  hostContextChanged?(context: McpUiHostContext): void;
  /** The host is about to remove the view (it waits for the view's answer). */
  teardown?(): void;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class HostBridge {
  private readonly host = window.parent;
  private readonly pending = new Map<RequestId, Pending>();
  private nextId = 0;
  private context: McpUiHostContext = {};
  private capabilities: McpUiHostCapabilities = {};
  private info: Implementation | undefined;

  private constructor(private readonly events: ViewEvents) {}

  /**
   * Connects to the host: the handshake (the view's name, the display modes it can be shown in,
   * the protocol version), then the page's size, now and as it changes.
   */
  static async connect(
    appInfo: Implementation,
    appCapabilities: McpUiAppCapabilities,
    events: ViewEvents,
  ): Promise<HostBridge> {
    const bridge = new HostBridge(events);
    const listener = (event: MessageEvent) => {
      if (event.source === bridge.host) bridge.receive(event.data);
    };
    window.addEventListener('message', listener);
    try {
      const answer = await bridge.ask('ui/initialize', {
        appCapabilities,
        appInfo,
        protocolVersion: PROTOCOL_VERSION,
      });
      bridge.capabilities = answer.hostCapabilities;
      bridge.info = answer.hostInfo;
      bridge.context = answer.hostContext;
      bridge.tell({ method: 'ui/notifications/initialized' });
    } catch (error) {
      window.removeEventListener('message', listener);
      throw error;
    }
    bridge.reportSize();
    return bridge;
  }

  /** What the host says about itself and the view: theme, display modes, the tool called… */
  get hostContext(): McpUiHostContext {
    return this.context;
  }

  get hostCapabilities(): McpUiHostCapabilities {
    return this.capabilities;
  }

  get hostInfo(): Implementation | undefined {
    return this.info;
  }

  /**
   * Calls one of the server's tools through the host. The call carries a progress token (its
   * request id), so that the host's progress reports on a long call keep it from timing out.
   */
  callServerTool(params: CallToolRequest['params']): Promise<CallToolResult> {
    return this.ask('tools/call', (id) => ({ ...params, _meta: { ...params._meta, progressToken: id } }));
  }

  /** Reads one of the server's resources through the host. */
  readServerResource(params: ReadResourceRequest['params']): Promise<ReadResourceResult> {
    return this.ask('resources/read', params);
  }

  /** Asks the host to save a file where its user chooses. */
  downloadFile(params: McpUiDownloadFileRequest['params']): Promise<McpUiDownloadFileResult> {
    return this.ask('ui/download-file', params);
  }

  /** Asks the host to open a URL. */
  openLink(params: McpUiOpenLinkRequest['params']): Promise<McpUiOpenLinkResult> {
    return this.ask('ui/open-link', params);
  }

  /** Asks the host to show the view in another display mode; it answers the mode it set. */
  requestDisplayMode(
    params: McpUiRequestDisplayModeRequest['params'],
  ): Promise<McpUiRequestDisplayModeResult> {
    return this.ask('ui/request-display-mode', params);
  }

  /**
   * Sends a request and waits for its answer: the result, or an Error with the host's message.
   * `params` may be made from the request's id.
   */
  private ask<M extends AskedMethod>(
    method: M,
    params: Params<M> | ((id: number) => Params<M>),
  ): Promise<Exchange<M>['result']> {
    const id = this.nextId++;
    const sent = typeof params === 'function' ? params(id) : params;
    return new Promise((resolve, reject) => {
      const timer = this.timeout(id);
      this.pending.set(id, { resolve: resolve as Pending['resolve'], reject, timer });
      this.send({ jsonrpc: '2.0', id, method, params: sent } satisfies JSONRPCRequest);
    });
  }

  private timeout(id: RequestId): ReturnType<typeof setTimeout> {
    return setTimeout(() => {
      const waiting = this.pending.get(id);
      if (!waiting) return;
      this.pending.delete(id);
      this.tell({
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'Request timed out' },
      });
      waiting.reject(new Error('Request timed out'));
    }, REQUEST_TIMEOUT_MS);
  }

  private tell(notification: Told): void {
    this.send({ jsonrpc: '2.0', ...notification } satisfies JSONRPCNotification);
  }

  private send(message: JSONRPCRequest | JSONRPCNotification | JSONRPCResultResponse | JSONRPCErrorResponse) {
    this.host.postMessage(message, '*');
  }

  /** One message from the host: an answer to a request, a request, or a notification. */
  private receive(message: unknown): void {
    if (!isObject(message) || message.jsonrpc !== '2.0') return;
    const { id, method } = message;
    if (typeof method === 'string') {
      // Sent by the host as the extension's types say (the views check what they use).
      if (isRequestId(id)) this.answer(id, method);
      else this.hear(message as Heard);
    } else if (isRequestId(id)) {
      this.settle(id, message);
    }
  }

  private settle(id: RequestId, response: Record<string, unknown>): void {
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    const { error } = response as Partial<JSONRPCErrorResponse>;
    if (error) waiting.reject(Object.assign(new Error(String(error.message)), { code: error.code }));
    else waiting.resolve((response as JSONRPCResultResponse).result);
  }

  private hear(notification: Heard): void {
    switch (notification.method) {
      case 'ui/notifications/tool-input':
        this.events.toolInput?.(notification.params);
        break;
      case 'ui/notifications/tool-result':
        this.events.toolResult?.(notification.params);
        break;
      case 'ui/notifications/tool-cancelled':
        this.events.toolCancelled?.(notification.params);
        break;
      case 'ui/notifications/host-context-changed':
        this.context = { ...this.context, ...notification.params };
        this.events.hostContextChanged?.(this.context);
        break;
      case 'notifications/progress':
        this.renew(notification.params.progressToken);
        break;
    }
  }

  /** A progress report on a call under way: its wait starts again. */
  private renew(token: RequestId): void {
    const waiting = this.pending.get(token);
    if (!waiting) return;
    clearTimeout(waiting.timer);
    waiting.timer = this.timeout(token);
  }

  /** Answers a request of the host: ping and teardown with an empty result, anything else with an error. */
  private answer(id: RequestId, method: string): void {
    const fail = (code: number, message: string) =>
      this.send({ jsonrpc: '2.0', id, error: { code, message } } satisfies JSONRPCErrorResponse);
    if (!(ANSWERED as readonly string[]).includes(method)) {
      fail(METHOD_NOT_FOUND, 'Method not found');
      return;
    }
    try {
      if (method === 'ui/resource-teardown') this.events.teardown?.();
      this.send({ jsonrpc: '2.0', id, result: {} } satisfies JSONRPCResultResponse);
    } catch (error) {
      fail(INTERNAL_ERROR, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Tells the host the page's size now and whenever it changes (at most once a frame): the
   * height its content needs, and the width it has.
   */
  private reportSize(): void {
    let scheduled = false;
    let width = 0;
    let height = 0;
    const measure = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        const page = document.documentElement;
        const set = page.style.height;
        page.style.height = 'max-content';
        const needed = Math.ceil(page.getBoundingClientRect().height);
        page.style.height = set;
        const has = Math.ceil(window.innerWidth);
        if (has === width && needed === height) return;
        width = has;
        height = needed;
        this.tell({ method: 'ui/notifications/size-changed', params: { width, height } });
      });
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.documentElement);
    observer.observe(document.body);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number';
}
