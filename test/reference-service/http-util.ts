// Replies are values: route handlers return a Reply and one function writes it, so faults such as
// a slow or truncated body can reshape any route's answer without the route knowing.
import type { ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

export type HeaderMap = Record<string, string>;

/** Where a streaming reply writes; both calls resolve false once the client is gone. */
export interface Sink {
  write(chunk: Buffer | string): Promise<boolean>;
  sleep(ms: number): Promise<boolean>;
}

export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: HeaderMap }
  | { kind: 'raw'; status: number; contentType: string; body: Buffer | string; headers?: HeaderMap }
  | {
      kind: 'stream';
      status: number;
      contentType: string;
      contentLength?: number;
      headers?: HeaderMap;
      produce(sink: Sink): Promise<void>;
    };

/** Thrown by handlers for a contract error answer; the pipeline turns it into an error reply. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** How the error body departs from the usual shape (no `type`, no `code`, extra headers). */
    readonly shape: Omit<ErrorShape, 'message'> = {},
  ) {
    super(message);
  }
}

const STATUS_INFO: Record<number, { text: string; code: string }> = {
  400: { text: 'Bad Request', code: 'bad_request' },
  401: { text: 'Unauthorized', code: 'unauthorized' },
  402: { text: 'Payment Required', code: 'payment_required' },
  403: { text: 'Forbidden', code: 'forbidden' },
  404: { text: 'Not Found', code: 'not_found' },
  405: { text: 'Method Not Allowed', code: 'method_not_allowed' },
  408: { text: 'Request Timeout', code: 'timeout' },
  413: { text: 'Payload Too Large', code: 'payload_too_large' },
  429: { text: 'Too Many Requests', code: 'rate_limit_exceeded' },
  500: { text: 'Internal Server Error', code: 'server_error' },
  502: { text: 'Bad Gateway', code: 'bad_gateway' },
  503: { text: 'Service Unavailable', code: 'service_unavailable' },
  504: { text: 'Gateway Timeout', code: 'gateway_timeout' },
};

export function statusText(status: number): string {
  return STATUS_INFO[status]?.text ?? `Status ${status}`;
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function jsonReply(body: unknown, status = 200, headers?: HeaderMap): Reply {
  return { kind: 'json', status, body, ...(headers ? { headers } : {}) };
}

export interface ErrorShape {
  message?: string;
  asString?: boolean;
  numericCode?: boolean;
  /** null leaves `code` out, as some of the gateway's answers do. */
  code?: string | null;
  /** null leaves `type` out. */
  type?: string | null;
  headers?: HeaderMap;
}

/** The contract's error body: object form by default, string form on request. */
export function errorReply(status: number, shape: ErrorShape = {}): Reply {
  const message = shape.message ?? statusText(status);
  if (shape.asString) return jsonReply({ error: message }, status, shape.headers);
  const code = shape.numericCode ? status : (shape.code ?? STATUS_INFO[status]?.code ?? `http_${status}`);
  const type = shape.type === undefined ? errorType(status) : shape.type;
  const error = {
    message,
    ...(type === null ? {} : { type }),
    ...(shape.code === null && !shape.numericCode ? {} : { code }),
  };
  return jsonReply({ error }, status, shape.headers);
}

/** Resolves false (instead of throwing) when the wait was cut short by the client or a shutdown. */
export async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** Writes with backpressure so large bodies stream with flat memory. */
export function writeChunk(res: ServerResponse, chunk: Buffer | string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  if (res.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const finish = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => finish(true);
    const onClose = () => finish(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

export interface SendOptions {
  signal: AbortSignal;
  extraHeaders?: HeaderMap | undefined;
  slowBodyMs?: number | undefined;
  headOnly?: boolean;
}

function lowerCaseKeys(...maps: (HeaderMap | undefined)[]): HeaderMap {
  const out: HeaderMap = {};
  for (const map of maps) {
    for (const [name, value] of Object.entries(map ?? {})) out[name.toLowerCase()] = value;
  }
  return out;
}

/** How much of a body goes out before a slow-body pause: a few bytes, never the whole body. */
function slowSplitPoint(length: number): number {
  return Math.min(16, Math.floor(length / 2));
}

export async function sendReply(res: ServerResponse, reply: Reply, options: SendOptions): Promise<void> {
  const { signal, slowBodyMs } = options;
  if (reply.kind === 'stream') {
    const lengthHeader: HeaderMap =
      reply.contentLength === undefined ? {} : { 'content-length': String(reply.contentLength) };
    res.writeHead(
      reply.status,
      lowerCaseKeys(
        { 'content-type': reply.contentType, ...lengthHeader },
        reply.headers,
        options.extraHeaders,
      ),
    );
    if (options.headOnly) {
      res.end();
      return;
    }
    let pauseBeforeRest = Boolean(slowBodyMs);
    const sink: Sink = {
      write: async (chunk) => {
        if (!pauseBeforeRest) return writeChunk(res, chunk);
        pauseBeforeRest = false;
        const buffer = Buffer.from(chunk);
        const split = slowSplitPoint(buffer.length);
        if (!(await writeChunk(res, buffer.subarray(0, split)))) return false;
        if (!(await sleep(slowBodyMs ?? 0, signal))) return false;
        return writeChunk(res, buffer.subarray(split));
      },
      sleep: (ms) => sleep(ms, signal),
    };
    await reply.produce(sink);
    if (!res.destroyed && !res.writableEnded) res.end();
    return;
  }
  const body = reply.kind === 'json' ? Buffer.from(JSON.stringify(reply.body)) : Buffer.from(reply.body);
  const contentType = reply.kind === 'json' ? 'application/json; charset=utf-8' : reply.contentType;
  res.writeHead(
    reply.status,
    lowerCaseKeys(
      { 'content-type': contentType, 'content-length': String(body.length) },
      reply.headers,
      options.extraHeaders,
    ),
  );
  if (options.headOnly) {
    res.end();
    return;
  }
  if (slowBodyMs && body.length > 0) {
    const split = slowSplitPoint(body.length);
    res.write(body.subarray(0, split));
    if (!(await sleep(slowBodyMs, signal))) return;
    if (!res.destroyed) res.end(body.subarray(split));
    return;
  }
  res.end(body);
}
