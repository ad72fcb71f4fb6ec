import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, ConfigError } from '../../config/config.js';
import type { ConnectionOptions } from '../../mcp/client/connection.js';
import { createServer } from '../../mcp/create-server.js';
import type { GatewayServer } from '../../mcp/server.js';
import { closeRuntime, type Runtime } from '../../runtime.js';
import { markOutputFolder, type OutputMarker } from '../../shared-state/output-markers.js';
import { VERSION } from '../../version.js';
import { InFlightCalls } from './calls.js';
import { RPC, sendJson, sendRpcError } from './io.js';
import { ListenStreams } from './listens.js';
import { ModernHttp } from './modern.js';
import type { AuthenticatedRequest, ResourceServer } from './oauth/resource-server.js';
import { assertSafeBinding, isLoopbackHost, RequestGuard } from './security.js';
import { type EndReason, type HttpContext, SessionRegistry } from './sessions.js';
import { handleSseMessage, openSseSession } from './sse.js';
import { handleMcp } from './streamable.js';

/**
 * One node:http server for both MCP transports: Streamable HTTP at /mcp, legacy HTTP+SSE at
 * GET /sse + POST /messages, and GET /healthz (no auth) for probes. Every MCP route passes the
 * Host/Origin checks and, when GATEWAY_MCP_TOKEN is set, the bearer-token check first. With
 * GATEWAY_OAUTH_ISSUER the server is an OAuth resource server too (oauth/): it serves its
 * protected-resource metadata, and a request without GATEWAY_MCP_TOKEN needs an access token.
 */
export interface HttpServerOptions {
  /** Builds the MCP server for a session or a request; defaults to the project's createServer. */
  makeServer?: (runtime: Runtime, options: ConnectionOptions) => GatewayServer;
}

export interface RunningHttpServer {
  /** e.g. http://127.0.0.1:3000 (the real port when 0 was asked for). */
  url: string;
  context: HttpContext;
  /** Stops accepting, lets running calls finish for up to `graceMs`, cancels the rest, closes. */
  shutdown(graceMs: number): Promise<void>;
}

type Route = 'mcp' | 'sse' | 'messages';
/**
 * Listen streams one client (one remote address) may hold: a client that opens more ends its
 * oldest; many connections of one agent each hold one.
 */
const LISTENS_PER_CLIENT = 10;

const ENDED: Record<EndReason, (config: Config) => string> = {
  idle: (c) => `idle for ${c.sessionIdleSeconds} s`,
  unused: (c) => `never called a tool in ${c.sessionUnusedSeconds} s`,
  evicted: () => 'idle longest, and room was needed for a new session',
};

const ROUTES: Record<string, { route: Route; methods: string[] }> = {
  '/mcp': { route: 'mcp', methods: ['GET', 'POST', 'DELETE'] },
  '/sse': { route: 'sse', methods: ['GET'] },
  '/messages': { route: 'messages', methods: ['POST'] },
};

export async function startHttpServer(
  runtime: Runtime,
  options: HttpServerOptions = {},
): Promise<RunningHttpServer> {
  const { config, log } = runtime;
  assertSafeBinding(config);
  const guard = new RequestGuard(config);
  // Imported only when on, so that a server without OAuth starts as fast as ever.
  const oauth = config.oauthIssuer
    ? new (await import('./oauth/resource-server.js')).ResourceServer(config, log)
    : undefined;
  const makeServer =
    options.makeServer ??
    ((rt: Runtime, connection: ConnectionOptions) => createServer(rt, undefined, connection));
  const context: HttpContext = {
    runtime,
    makeServer: (connection = {}) => makeServer(runtime, connection),
    modern: new ModernHttp(runtime, (connection) => makeServer(runtime, connection)),
    sessions: new SessionRegistry(
      config.maxSessions,
      config.sessionIdleSeconds * 1000,
      config.sessionUnusedSeconds * 1000,
      (session, reason) => {
        log.debug(`session ${session.id} ${ENDED[reason](config)}; closing it`);
        void session.server.close().catch(() => undefined);
      },
    ),
    listens: new ListenStreams(config.maxSessions, LISTENS_PER_CLIENT, config.sessionIdleSeconds * 1000),
    inFlight: new InFlightCalls(),
    statelessActive: 0,
    closing: false,
    ...(oauth && config.oauthRequireScopes
      ? { refuseScopes: (req, res, body) => oauth.refuseScopes(req, res, body) }
      : {}),
  };
  const server = createHttpServer((req, res) => {
    void dispatch(context, guard, oauth, req, res);
  });
  // A malformed request line or header gets a 400, never a crash.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  const address = await listen(server, config.port, config.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    context,
    async shutdown(graceMs) {
      if (context.closing) return;
      context.closing = true;
      server.close();
      server.closeIdleConnections();
      if (context.inFlight.size > 0) {
        log.info(`waiting up to ${graceMs} ms for ${context.inFlight.size} running call(s)`);
        if (!(await context.inFlight.whenIdle(graceMs))) {
          log.warn(`cancelling ${context.inFlight.size} call(s) still running after ${graceMs} ms`);
        }
      }
      context.sessions.stop();
      context.listens.stop();
      // Closing a session's server aborts its running handlers, which abort their service requests.
      await Promise.all(context.sessions.all().map((s) => s.server.close().catch(() => undefined)));
      await context.modern.close().catch(() => undefined);
      server.closeAllConnections();
    },
  };
}

/** The CLI's http mode: serve until SIGINT/SIGTERM, then shut down gracefully and exit 0. */
export async function runHttp(runtime: Runtime): Promise<void> {
  const { config, log } = runtime;
  const running = await startHttpServer(runtime);
  const marker = config.ledgerUrl ? await markOutput(runtime) : undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn(`${signal} again: exiting now`);
      process.exit(0);
    }
    stopping = true;
    log.info(`shutting down (${signal})`);
    setTimeout(() => process.exit(0), config.shutdownGraceMs + 5_000).unref();
    await running.shutdown(config.shutdownGraceMs);
    await marker?.remove().catch(() => undefined);
    await closeRuntime(runtime);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // The warning comes first: whoever waits for the "listening" line has seen it by then.
  if (!isLoopbackHost(config.host)) {
    log.warn('the token travels in clear over plain HTTP: put a TLS proxy in front of this port');
  }
  const mode = config.stateless ? 'stateless' : `sessions, at most ${config.maxSessions}`;
  const access = config.oauthIssuer
    ? `OAuth access tokens of ${config.oauthIssuer} for ${config.publicUrl}/mcp` +
      `${config.oauthRequireScopes ? ' with the scope of each tool' : ''}` +
      `${config.mcpToken ? ', or the bearer token' : ''}`
    : config.mcpToken
      ? 'bearer token required'
      : 'no token';
  log.info(
    `listening on ${running.url} — Streamable HTTP at /mcp, legacy SSE at /sse (${mode}; ` +
      `${access}); service ${config.baseUrl}`,
  );
}

/**
 * With a shared ledger, this replica's output folder is marked, so that doctor can tell whether
 * the replicas share one (output-markers.ts); refreshed hourly while it serves.
 */
async function markOutput(runtime: Runtime): Promise<OutputMarker | undefined> {
  const { config, log } = runtime;
  try {
    const marker = await markOutputFolder(() => runtime.ledger().database(), config.outputDir);
    setInterval(() => void marker.refresh(), 3_600_000).unref();
    return marker;
  } catch (error) {
    log.warn(
      `the output folder ${config.outputDir} could not be marked for the other replicas (${(error as Error).message}); doctor cannot tell whether they share it`,
    );
    return undefined;
  }
}

async function dispatch(
  ctx: HttpContext,
  guard: RequestGuard,
  oauth: ResourceServer | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = req.method ?? 'GET';
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/healthz') return health(ctx, res);
    if (ctx.closing) {
      return sendRpcError(res, 503, 'The server is shutting down; retry in a moment', RPC.serverError, {
        connection: 'close',
      });
    }
    if (url.pathname.startsWith('/.well-known/oauth') || url.pathname.startsWith('/.well-known/openid')) {
      if (oauth?.serveMetadata(url.pathname, method, res)) return;
      const why = oauth
        ? `the authorization server is ${ctx.runtime.config.oauthIssuer}; this service's metadata is at ${oauth.metadataUrl}`
        : NO_OAUTH;
      return sendRpcError(res, 404, `Not found: ${why}`);
    }
    const entry = ROUTES[url.pathname];
    if (!entry) {
      return sendRpcError(
        res,
        404,
        `Not found: ${method} ${url.pathname}; MCP is served at /mcp (Streamable HTTP) and /sse (legacy SSE)`,
      );
    }
    const refused = guard.hostProblem(req) ?? guard.originProblem(req);
    if (refused) {
      ctx.runtime.log.warn(`refused ${method} ${url.pathname}: ${refused}`);
      return sendRpcError(res, 403, `Forbidden: ${refused}`);
    }
    for (const [name, value] of Object.entries(guard.corsHeaders(req, method === 'OPTIONS'))) {
      res.setHeader(name, value);
    }
    if (method === 'OPTIONS') {
      res.writeHead(204, { allow: [...entry.methods, 'OPTIONS'].join(', ') }).end();
      return;
    }
    if (!entry.methods.includes(method)) {
      return sendRpcError(res, 405, `Method not allowed: ${method} ${url.pathname}`, RPC.serverError, {
        allow: [...entry.methods, 'OPTIONS'].join(', '),
      });
    }
    const what = `${method} ${url.pathname}`;
    if (oauth) {
      // GATEWAY_MCP_TOKEN, when set, stands for its one person beside the OAuth callers.
      if (!guard.sentStaticToken(req)) {
        const auth = await oauth.authenticate(req, res, what);
        if (!auth) return;
        (req as AuthenticatedRequest).auth = auth;
      }
    } else if (!guard.authorized(req)) return refuseToken(ctx, req, res, what);
    if (entry.route === 'mcp') return await handleMcp(ctx, req, res);
    if (entry.route === 'sse') return await openSseSession(ctx, req, res);
    return await handleSseMessage(ctx, req, res, url.searchParams.get('sessionId'));
  } catch (error) {
    ctx.runtime.log.error(
      `${method} ${req.url} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    if (!res.headersSent) sendRpcError(res, 500, 'Internal server error', RPC.internalError);
    else res.destroy();
  }
}

const NO_OAUTH =
  'this server takes no OAuth; it takes a static token, sent as the header Authorization: Bearer <the value of GATEWAY_MCP_TOKEN>';

/**
 * A missing or wrong token is answered 403, not 401. MCP clients built on the SDK with an auth
 * provider (Claude Code, mcp-remote) start OAuth discovery and dynamic client registration on any
 * 401, whatever its WWW-Authenticate or the server's metadata say (without authorization servers
 * they fall back to this origin), and then show that registration's failure instead of this
 * message. A 403 whose `error` is not `insufficient_scope` they report with its body.
 */
function refuseToken(ctx: HttpContext, req: IncomingMessage, res: ServerResponse, what: string): void {
  const sent = req.headers.authorization !== undefined;
  ctx.runtime.log.debug(`refused ${what}: ${sent ? 'wrong' : 'missing'} bearer token`);
  const why = sent ? 'the bearer token is wrong' : 'no bearer token was sent';
  sendRpcError(res, 403, `Forbidden: ${why}; ${NO_OAUTH}`, RPC.serverError, {
    'www-authenticate': `Bearer realm="gateway-tools-mcp", error="invalid_token", error_description="${why}"`,
  });
}

function health(ctx: HttpContext, res: ServerResponse): void {
  sendJson(res, ctx.closing ? 503 : 200, {
    status: ctx.closing ? 'shutting down' : 'ok',
    version: VERSION,
    mode: ctx.runtime.config.stateless ? 'stateless' : 'sessions',
    sessions: ctx.sessions.size,
    in_flight: ctx.inFlight.size,
  });
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE'
          ? 'the port is already in use; choose another GATEWAY_PORT (--port)'
          : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
            ? 'that address is not on this machine; check GATEWAY_HOST (--host)'
            : error.code === 'EACCES'
              ? 'permission denied; use a port above 1023'
              : error.message;
      reject(new ConfigError(`cannot listen on ${host}:${port}: ${why}`));
    });
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}
