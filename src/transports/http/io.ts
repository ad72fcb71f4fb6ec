import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { nestsTooDeep } from '../../lib/json-depth.js';

const MiB = 1024 * 1024;
/**
 * Largest request body the HTTP transport reads: room for audio_transcribe's largest
 * data_base64 (20 MiB of audio, about 28 MB as base64), as on stdio.
 */
export const MAX_BODY_BYTES = 32 * MiB;
/**
 * The first bytes of every body are read as they come (every ordinary message is smaller); all
 * bytes past them count against BODY_BUDGET, however large the body will turn out to be: sixty
 * slow 4 MiB bodies cannot hold more memory than two full-size ones.
 */
const FREE_BODY_BYTES = 64 * 1024;
/** How many bytes past FREE_BODY_BYTES all requests together may hold: two full-size bodies. */
const BODY_BUDGET = 2 * MAX_BODY_BYTES;
/** Past this much refused body the connection is cut instead of drained. */
const MAX_DRAIN_BYTES = 2 * MAX_BODY_BYTES;

let budgetHeld = 0;

/** JSON-RPC error codes used at the HTTP layer: the standard ones as the SDK names them, plus two of MCP's. */
export const RPC = {
  serverError: -32000,
  sessionNotFound: -32001,
  parseError: ProtocolErrorCode.ParseError,
  invalidRequest: ProtocolErrorCode.InvalidRequest,
  internalError: ProtocolErrorCode.InternalError,
} as const;

export type BodyResult =
  /** `held`: bytes of the body budget this body holds until release(held). */
  | { kind: 'json'; value: unknown; held: number }
  | { kind: 'too-large' }
  | { kind: 'busy' }
  | { kind: 'invalid' };

/**
 * Reads a JSON body of at most `limit` bytes. A larger body is answered 413 by the caller; what is
 * left of it is read and dropped (so the client sees the answer), up to a bound, then cut off.
 * Bodies share a budget (BODY_BUDGET) for all but their first FREE_BODY_BYTES, so memory stays
 * bounded however many arrive at once: one that would overdraw it is refused as `busy` (503, retry
 * shortly) and the rest of it dropped likewise; ordinary messages, smaller than that, never meet
 * it. A body read whole keeps its share until the caller releases it (see readBodyOrReply); any
 * other outcome gives it back here.
 *
 * Read through 'data' events, not `for await`: leaving a `for await` loop early destroys the
 * request, and a destroyed request is never read again, so the refused body would not be dropped
 * but left unread, its connection open and stalled, and a client that finishes sending before it
 * reads the answer would never see the 413 or 503.
 */
export function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  if (Number(req.headers['content-length']) > limit) {
    discardRest(req, 0);
    return Promise.resolve({ kind: 'too-large' });
  }
  if (req.destroyed) return Promise.resolve({ kind: 'invalid' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const refuse = (kind: 'too-large' | 'busy' | 'invalid') => {
      stop();
      if (kind !== 'invalid') discardRest(req, size);
      releaseBudget(held);
      resolve({ kind });
    };
    function onData(chunk: Buffer): void {
      size += chunk.length;
      const counted = Math.max(0, size - FREE_BODY_BYTES);
      if (size > limit) refuse('too-large');
      else if (budgetHeld + counted - held > BODY_BUDGET) refuse('busy');
      else {
        budgetHeld += counted - held;
        held = counted;
        chunks.push(chunk);
      }
    }
    function onEnd(): void {
      stop();
      try {
        const text = Buffer.concat(chunks, size).toString('utf8');
        if (nestsTooDeep(text)) refuse('invalid');
        else resolve({ kind: 'json', value: JSON.parse(text) as unknown, held });
      } catch {
        refuse('invalid');
      }
    }
    /** The client went away (or the stream failed) before the end of the body. */
    function onGone(): void {
      refuse('invalid');
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

function releaseBudget(bytes: number): void {
  budgetHeld -= bytes;
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

/**
 * The parsed JSON body, or NO_BODY after answering 413, 503 or 400 itself. A large body keeps its
 * share of the budget until its response is over: on Streamable HTTP that is when the call has
 * been answered; a legacy SSE POST is answered (202) as soon as it is read.
 */
export async function readBodyOrReply(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const body = await readJsonBody(req);
  if (body.kind === 'json') {
    if (body.held > 0 && res.destroyed) releaseBudget(body.held);
    else if (body.held > 0) res.once('close', () => releaseBudget(body.held));
    return body.value;
  }
  if (body.kind === 'too-large') {
    sendRpcError(
      res,
      413,
      `Payload Too Large: the request body must be at most ${MAX_BODY_BYTES / MiB} MiB (for larger ` +
        'audio, give audio_transcribe a file_path or url instead of data_base64)',
    );
  } else if (body.kind === 'busy') {
    sendRpcError(
      res,
      503,
      `Service Unavailable: the server is reading other large requests (at most ${BODY_BUDGET / MiB} MiB ` +
        'of request bodies at a time); send this one again in a few seconds',
      RPC.serverError,
      { 'retry-after': '2' },
    );
  } else {
    sendRpcError(res, 400, 'Parse error: the request body is not valid JSON', RPC.parseError);
  }
  return NO_BODY;
}
