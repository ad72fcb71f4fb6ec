import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import { requestIds, type WatchedCalls, watchCalls } from './calls.js';
import { NO_BODY, RPC, readBodyOrReply, sendRpcError } from './io.js';
import { opensListen } from './listens.js';
import { type HttpContext, tooManySessions } from './sessions.js';

/**
 * Streamable HTTP at /mcp. A 2026-07-28 request goes to the SDK's per-request handler
 * (modern.ts). A 2025-era client gets what the SDK's simpleStreamableHttp example gives it: one
 * transport and one MCP server per session, or per request in stateless mode (no session
 * affinity needed, so any replica behind a load balancer can answer any request).
 */
export async function handleMcp(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = req.method === 'POST' ? await readBodyOrReply(req, res) : undefined;
  if (body === NO_BODY) return;
  if (body !== undefined && (await ctx.refuseScopes?.(req, res, body))) return;
  if (req.method === 'POST' && !(await ctx.modern.isLegacy(req, body)))
    return serveModern(ctx, req, res, body);
  if (ctx.runtime.config.stateless) return handleStateless(ctx, req, res, body);
  const sessionId = headerValue(req, 'mcp-session-id');
  if (sessionId !== undefined) {
    const session = ctx.sessions.find(sessionId, 'streamable', res, req);
    if (!session) return;
    ctx.sessions.track(session, res, body);
    cancelOnDisconnect(session.calls, body, res);
    return (session.transport as NodeStreamableHTTPServerTransport).handleRequest(req, res, body);
  }
  if (req.method !== 'POST') {
    return sendRpcError(
      res,
      400,
      'Bad Request: Mcp-Session-Id header is required; start a session with initialize',
    );
  }
  const initializes = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
  if (!initializes) {
    return sendRpcError(res, 400, 'Bad Request: no Mcp-Session-Id header; start a session with initialize');
  }
  return openSession(ctx, req, res, body);
}

/**
 * A 2026-07-28 request: served on its own, counted like a stateless one against the session
 * bound; a listen stream, held for as long as the client keeps it, is bounded apart (listens.ts).
 */
async function serveModern(
  ctx: HttpContext,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  if (opensListen(body)) {
    ctx.listens.hold(res, req.socket.remoteAddress ?? '');
    return ctx.modern.serve(req, res, body);
  }
  if (ctx.statelessActive >= ctx.sessions.maxSessions) return tooManySessions(ctx, res);
  ctx.statelessActive += 1;
  const finished = ctx.inFlight.begin();
  res.once('close', () => {
    ctx.statelessActive -= 1;
    finished();
  });
  await ctx.modern.serve(req, res, body);
}

async function openSession(
  ctx: HttpContext,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const reservation = ctx.sessions.reserve();
  if (!reservation) return tooManySessions(ctx, res);
  const server = ctx.makeServer();
  let calls: WatchedCalls | undefined;
  const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      ctx.sessions.open(
        { id, kind: 'streamable', transport, server, calls: calls as WatchedCalls },
        res,
        req,
      );
      reservation.release();
      ctx.runtime.log.debug(`session ${id} opened (Streamable HTTP); ${ctx.sessions.size} open`);
    },
  });
  transport.onclose = () => {
    const id = transport.sessionId;
    if (id && ctx.sessions.delete(id))
      ctx.runtime.log.debug(`session ${id} closed; ${ctx.sessions.size} open`);
  };
  try {
    await server.connect(transport);
    // A cancelled call gets no response, so its stream is ended here rather than left open.
    calls = watchCalls(transport, ctx.inFlight, (id) => transport.closeSSEStream(id));
    cancelOnDisconnect(calls, body, res);
    await transport.handleRequest(req, res, body);
  } finally {
    reservation.release();
    // The SDK refused the initialize (wrong Accept header, bad batch): nothing to keep.
    if (transport.sessionId === undefined) await server.close().catch(() => undefined);
  }
}

async function handleStateless(
  ctx: HttpContext,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  if (req.method !== 'POST') {
    return sendRpcError(
      res,
      405,
      'Method not allowed: this server is stateless (GATEWAY_STATELESS), so only POST /mcp is served',
      RPC.serverError,
      { allow: 'POST, OPTIONS' },
    );
  }
  if (ctx.statelessActive >= ctx.sessions.maxSessions) return tooManySessions(ctx, res);
  ctx.statelessActive += 1;
  const server = ctx.makeServer({ perRequest: true });
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  // Closing the server when the response ends also aborts a call whose client went away.
  res.once('close', () => {
    ctx.statelessActive -= 1;
    void server.close().catch(() => undefined);
  });
  await server.connect(transport);
  watchCalls(transport, ctx.inFlight);
  await transport.handleRequest(req, res, body);
}

/** A client that drops the HTTP request of a call it is still waiting for has given up on it. */
function cancelOnDisconnect(calls: WatchedCalls, body: unknown, res: ServerResponse): void {
  const ids = requestIds(body);
  if (ids.length === 0) return;
  res.once('close', () => {
    for (const id of ids) {
      if (calls.isPending(id)) calls.cancel(id, 'the client closed the HTTP request');
    }
  });
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
