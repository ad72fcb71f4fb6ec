import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

/** Largest request body the HTTP transport reads: a JSON-RPC message is never near this. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Past this much refused body the connection is cut instead of drained. */
const MAX_DRAIN_BYTES = 4 * MAX_BODY_BYTES;

/** JSON-RPC error codes used at the HTTP layer: the standard ones as the SDK names them, plus two of MCP's. */
export const RPC = {
  serverError: -32000,
  sessionNotFound: -32001,
  parseError: ErrorCode.ParseError,
  invalidRequest: ErrorCode.InvalidRequest,
  internalError: ErrorCode.InternalError,
} as const;

export type BodyResult = { kind: 'json'; value: unknown } | { kind: 'too-large' } | { kind: 'invalid' };

/**
 * Reads a JSON body of at most `limit` bytes. A larger body is answered 413 by the caller; what is
 * left of it is read and dropped (so the client sees the answer), up to a bound, then cut off.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  if (Number(req.headers['content-length']) > limit) {
    discardRest(req, 0);
    return { kind: 'too-large' };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        discardRest(req, size);
        return { kind: 'too-large' };
      }
      chunks.push(chunk);
    }
  } catch {
    return { kind: 'invalid' };
  }
  try {
    return { kind: 'json', value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { kind: 'invalid' };
  }
}

function discardRest(req: IncomingMessage, alreadyRead: number): void {
  let drained = alreadyRead;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** An HTTP error in JSON-RPC form, as MCP clients expect from the transport layer. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  code: number = RPC.serverError,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

export const NO_BODY = Symbol('no body');

/** The parsed JSON body, or NO_BODY after answering 413 or 400 itself. */
export async function readBodyOrReply(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const body = await readJsonBody(req);
  if (body.kind === 'json') return body.value;
  if (body.kind === 'too-large') {
    sendRpcError(
      res,
      413,
      'Payload Too Large: the request body must be at most 4 MiB (for larger audio, give ' +
        'audio_transcribe a file_path or url instead of data_base64)',
    );
  } else {
    sendRpcError(res, 400, 'Parse error: the request body is not valid JSON', RPC.parseError);
  }
  return NO_BODY;
}
