import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { SSEServerTransport } from '@modelcontextprotocol/server-legacy/sse';
import { watchCalls } from './calls.js';
import { NO_BODY, RPC, readBodyOrReply, sendRpcError } from './io.js';
import { type HttpContext, tooManySessions } from './sessions.js';

/** How often an idle legacy SSE stream gets a comment line, so dead peers are noticed. */
const SSE_KEEPALIVE_MS = 15_000;

/**
 * The legacy HTTP+SSE transport (protocol 2024-11-05) for older clients, after the SDK's
 * sseAndStreamableHttpCompatibleServer example: GET /sse opens the session and its event stream,
 * POST /messages?sessionId=... carries the client's messages. The session lives as long as the stream.
 *
 * The SDK's v2 server has no SSE transport; this is the only module that uses its frozen copy of
 * the v1 one (@modelcontextprotocol/server-legacy, deprecated, to be removed with the SDK's v3),
 * kept for as long as clients still connect this way (Claude Code does; Codex does not).
 */
export async function openSseSession(
  ctx: HttpContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const reservation = ctx.sessions.reserve();
  if (!reservation) return tooManySessions(ctx, res);
  const transport = new SSEServerTransport('/messages', res);
  const server = ctx.makeServer();
  const id = transport.sessionId;
  // The session's id is otherwise only in the stream's first event: in a header too, a load
  // balancer can keep the session's POSTs (?sessionId=) on this replica (docs/http.md).
  res.setHeader('mcp-session-id', id);
  const keepalive = setInterval(() => {
    if (!res.writableEnded && !res.destroyed) res.write(': keepalive\n\n');
  }, SSE_KEEPALIVE_MS);
  keepalive.unref();
  res.once('close', () => clearInterval(keepalive));
  transport.onclose = () => {
    clearInterval(keepalive);
    if (ctx.sessions.delete(id))
      ctx.runtime.log.debug(`session ${id} closed (SSE); ${ctx.sessions.size} open`);
  };
  try {
    await server.connect(transport);
    const calls = watchCalls(transport, ctx.inFlight);
    ctx.sessions.open({ id, kind: 'sse', transport, server, calls }, res, req);
    ctx.runtime.log.debug(`session ${id} opened (legacy SSE); ${ctx.sessions.size} open`);
  } finally {
    reservation.release();
  }
}

export async function handleSseMessage(
  ctx: HttpContext,
  req: IncomingMessage,
  res: ServerResponse,
  sessionId: string | null,
): Promise<void> {
  if (!sessionId) return sendRpcError(res, 400, 'Bad Request: the sessionId query parameter is required');
  const session = ctx.sessions.find(sessionId, 'sse', res, req);
  if (!session) return;
  const body = await readBodyOrReply(req, res);
  if (body === NO_BODY) return;
  if (!JSONRPCMessageSchema.safeParse(body).success) {
    return sendRpcError(
      res,
      400,
      'Invalid Request: the body must be one JSON-RPC 2.0 message object',
      RPC.invalidRequest,
    );
  }
  if (await ctx.refuseScopes?.(req, res, body)) return;
  ctx.sessions.track(session, res, body);
  await (session.transport as SSEServerTransport).handlePostMessage(req, res, body);
}
