import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, Transport } from '@modelcontextprotocol/server';
import type { ConnectionOptions } from '../../mcp/client/connection.js';
import type { GatewayServer } from '../../mcp/server.js';
import type { Runtime } from '../../runtime.js';
import type { InFlightCalls, WatchedCalls } from './calls.js';
import { RPC, sendRpcError } from './io.js';
import type { ListenStreams } from './listens.js';
import type { ModernHttp } from './modern.js';

export type HttpSessionKind = 'streamable' | 'sse';

/** One client's HTTP session (Mcp-Session-Id, or an SSE stream), with the MCP server it talks to. */
export interface HttpSession<T extends Transport = Transport> {
  id: string;
  kind: HttpSessionKind;
  transport: T;
  server: GatewayServer;
  calls: WatchedCalls;
  /** HTTP responses still open for this session (a listening stream is not idleness). */
  open: number;
  lastActive: number;
  /** Whether the client ever called a tool (a health check or `mcp list` never does). */
  used: boolean;
  /**
   * The OAuth subject that opened the session: only requests with a token of the same subject may
   * use it, so a session id that leaks does not carry anyone's rights.
   */
  owner?: string;
}

export type EndReason = 'idle' | 'unused' | 'evicted';

/** How a client that names a session too late, or at the other transport's path, is told. */
const SESSION_WORDS: Record<HttpSessionKind, { gone: string; uses: string }> = {
  streamable: {
    gone: 'it expired, was closed, or belongs to another server; start a new session with initialize',
    uses: 'Streamable HTTP (POST /mcp)',
  },
  sse: {
    gone: 'the SSE stream was closed or expired; open a new one with GET /sse',
    uses: 'the legacy SSE transport (POST /messages)',
  },
};

/**
 * The open sessions of both transports, bounded in number. Most clients never end their sessions
 * (a health check, `mcp list`, a client that is simply closed), so sessions end by themselves:
 * one with no open response and no request for `idleMs` is closed, one that never called a tool
 * already after `unusedMs`; and at the bound the least recently used idle session (never-used
 * ones first) makes room for a new client, which gets 503 only while every session has a response
 * open. `reserved` counts sessions being set up, so a burst of initializations cannot overshoot
 * the bound.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, HttpSession>();
  private reserved = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    readonly maxSessions: number,
    private readonly idleMs: number,
    private readonly unusedMs: number,
    private readonly onEnd: (session: HttpSession, reason: EndReason) => void,
  ) {
    const shortest = Math.min(idleMs, unusedMs);
    this.sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(30_000, shortest / 2)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * The open session of `kind` with this id; otherwise undefined, with the request answered: 404
   * when there is no such session, 400 when it is the other transport's.
   */
  find(
    id: string,
    kind: HttpSessionKind,
    res: ServerResponse,
    req?: IncomingMessage,
  ): HttpSession | undefined {
    let session = this.sessions.get(id);
    // Another caller's session is answered as no session at all: its existence is not theirs to learn.
    if (session && req && session.owner !== ownerOf(req)) session = undefined;
    if (session?.kind === kind) return session;
    if (session) sendRpcError(res, 400, `Bad Request: this session uses ${SESSION_WORDS[session.kind].uses}`);
    else sendRpcError(res, 404, `Session not found: ${SESSION_WORDS[kind].gone}`, RPC.sessionNotFound);
    return undefined;
  }

  /** Claims room for one more session, ending an idle one if need be; undefined when none can end. */
  reserve(): { release(): void } | undefined {
    if (this.sessions.size + this.reserved >= this.maxSessions && !this.evictOne()) return undefined;
    this.reserved += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.reserved -= 1;
      },
    };
  }

  /** Adds a new session, with `res` (the request that opened it) counted as open. */
  open(
    parts: Pick<HttpSession, 'id' | 'kind' | 'transport' | 'server' | 'calls'>,
    res: ServerResponse,
    req?: IncomingMessage,
  ): void {
    const owner = req ? ownerOf(req) : undefined;
    const session: HttpSession = {
      ...parts,
      open: 0,
      lastActive: Date.now(),
      used: false,
      ...(owner !== undefined ? { owner } : {}),
    };
    this.sessions.set(session.id, session);
    this.track(session, res);
  }

  /** Forgets a session; false when it was not open (ended already, or never added). */
  delete(id: string): boolean {
    return this.sessions.delete(id);
  }

  /** Counts `res` as open for the session until it closes; marks the session active (and used, for a tool call). */
  track(session: HttpSession, res: ServerResponse, body?: unknown): void {
    session.lastActive = Date.now();
    if (!session.used && callsATool(body)) session.used = true;
    if (res.destroyed || res.writableFinished) return;
    session.open += 1;
    res.once('close', () => {
      session.open -= 1;
      session.lastActive = Date.now();
    });
  }

  all(): HttpSession[] {
    return [...this.sessions.values()];
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  private end(session: HttpSession, reason: EndReason): void {
    this.sessions.delete(session.id);
    this.onEnd(session, reason);
  }

  private sweep(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.open > 0) continue;
      if (now - session.lastActive >= this.idleMs) this.end(session, 'idle');
      else if (!session.used && now - session.lastActive >= this.unusedMs) this.end(session, 'unused');
    }
  }

  /** Ends the idle session least worth keeping: never used first, then least recently active. */
  private evictOne(): boolean {
    let victim: HttpSession | undefined;
    for (const session of this.sessions.values()) {
      if (session.open > 0) continue;
      if (
        !victim ||
        (victim.used && !session.used) ||
        (victim.used === session.used && session.lastActive < victim.lastActive)
      )
        victim = session;
    }
    if (victim) this.end(victim, 'evicted');
    return victim !== undefined;
  }
}

/** The OAuth subject of a request's verified token (set by serve.ts as `req.auth`), if any. */
function ownerOf(req: IncomingMessage): string | undefined {
  const sub = (req as IncomingMessage & { auth?: AuthInfo }).auth?.extra?.sub;
  return typeof sub === 'string' ? sub : undefined;
}

function callsATool(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => (m as { method?: unknown } | null)?.method === 'tools/call');
}

/** What the HTTP request handlers share. */
export interface HttpContext {
  runtime: Runtime;
  /** Builds the MCP server for one session (or, stateless, for one request). */
  makeServer: (options?: ConnectionOptions) => GatewayServer;
  /** Serves 2026-07-28 requests at /mcp. */
  modern: ModernHttp;
  sessions: SessionRegistry;
  /** 2026-07-28 listen streams, bounded apart from calls. */
  listens: ListenStreams;
  inFlight: InFlightCalls;
  /** Stateless requests being served, bounded by GATEWAY_MAX_SESSIONS. */
  statelessActive: number;
  /** Set once shutdown begins: new requests are refused. */
  closing: boolean;
  /**
   * With OAuth and required scopes: answers 403 insufficient_scope, and says true, when the body
   * calls a tool outside the scopes of the request's token.
   */
  refuseScopes?: (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<boolean>;
}

/** 503 with a JSON-RPC error a client can show: the session bound is reached. */
export function tooManySessions(ctx: HttpContext, res: ServerResponse): void {
  const max = ctx.sessions.maxSessions;
  ctx.runtime.log.warn(`refused a new session: ${max} already open (GATEWAY_MAX_SESSIONS)`);
  sendRpcError(
    res,
    503,
    `Too many open sessions (the limit is ${max}); close unused sessions or retry later`,
    RPC.serverError,
    { 'retry-after': '5' },
  );
}
