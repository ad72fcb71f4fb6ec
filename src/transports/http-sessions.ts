import type { ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { GatewayServer } from '../mcp-server.js';
import type { Runtime } from '../runtime.js';
import type { InFlightCalls, WatchedCalls } from './http-calls.js';
import { RPC, sendRpcError } from './http-io.js';

export type SessionKind = 'streamable' | 'sse';

export interface Session<T extends Transport = Transport> {
  id: string;
  kind: SessionKind;
  transport: T;
  server: GatewayServer;
  calls: WatchedCalls;
  /** HTTP responses still open for this session (a listening stream is not idleness). */
  open: number;
  lastActive: number;
}

/**
 * The open sessions of both transports, bounded in number, with idle expiry: a session with no
 * open response and no request for `idleMs` is closed, so abandoned sessions do not leak memory.
 * `reserved` counts sessions being set up, so a burst of initializations cannot overshoot the bound.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private reserved = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    readonly maxSessions: number,
    private readonly idleMs: number,
    private readonly onExpire: (session: Session) => void,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(30_000, idleMs / 2)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Claims room for one more session; undefined when the bound is reached. */
  reserve(): { release(): void } | undefined {
    if (this.sessions.size + this.reserved >= this.maxSessions) return undefined;
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

  add(session: Session): void {
    this.sessions.set(session.id, session);
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  /** Counts `res` as open for the session until it closes; marks the session active. */
  track(session: Session, res: ServerResponse): void {
    session.lastActive = Date.now();
    if (res.destroyed || res.writableFinished) return;
    session.open += 1;
    res.once('close', () => {
      session.open -= 1;
      session.lastActive = Date.now();
    });
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const session of this.sessions.values()) {
      if (session.open === 0 && session.lastActive < cutoff) {
        this.sessions.delete(session.id);
        this.onExpire(session);
      }
    }
  }
}

/** What the HTTP request handlers share. */
export interface HttpContext {
  runtime: Runtime;
  /** Builds the MCP server for one session (or, stateless, for one request). */
  makeServer: () => GatewayServer;
  sessions: SessionRegistry;
  inFlight: InFlightCalls;
  /** Stateless requests being served, bounded by GATEWAY_MAX_SESSIONS. */
  statelessActive: number;
  /** Set once shutdown begins: new requests are refused. */
  closing: boolean;
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
