import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { ConnectionOptions } from '../../mcp/client/connection.js';
import { SavedFiles } from '../../mcp/resources.js';
import type { GatewayServer } from '../../mcp/server.js';
import type { Runtime } from '../../runtime.js';

/** The people whose saved files a process lists at once; others' stay readable by URI. */
const MAX_PEOPLE = 1_000;

/**
 * MCP 2026-07-28 over Streamable HTTP at /mcp: no sessions, each request is served by a server of
 * its own, through the SDK's createMcpHandler. A request without the era's per-request envelope is
 * a 2025-era client's and goes to the sessionful transport (streamable.ts) instead: the SDK's own
 * 2025 serving is stateless, and a stateless server cannot ask its client anything (a
 * confirmation, roots), nor keep a log level. The files a 2026-07-28 client's calls saved are its
 * person's in this process, since no connection outlives a request.
 */
export class ModernHttp {
  private readonly handler: ReturnType<typeof createMcpHandler>;
  /** The files each person's calls saved (by OAuth subject; '' for the one person without OAuth). */
  private readonly files = new Map<string, SavedFiles>();
  private readonly serveNode: ReturnType<typeof toNodeHandler>;

  constructor(runtime: Runtime, makeServer: (options: ConnectionOptions) => GatewayServer) {
    const onerror = (error: Error) => runtime.log.debug(`2026-07-28 over HTTP: ${error.message}`);
    this.handler = createMcpHandler(
      ({ authInfo }) =>
        makeServer({
          perRequest: true,
          files: this.filesOf(authInfo?.extra?.sub),
          onResourcesChanged: () => this.handler.notify.resourcesChanged(),
        }),
      { legacy: 'reject', onerror },
    );
    this.serveNode = toNodeHandler(this.handler, { onerror });
  }

  /**
   * Whether a POST (its body already read) is a 2025-era client's, as the SDK classifies it. The
   * request it is handed has the headers and not the body, which it is given parsed: a large
   * body (audio as base64) is not written out again to be classified.
   */
  isLegacy(req: IncomingMessage, body: unknown): Promise<boolean> {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else for (const item of value ?? []) headers.append(name, item);
    }
    return isLegacyRequest(new Request('http://localhost/mcp', { method: 'POST', headers }), body);
  }

  serve(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    return this.serveNode(req, res, body);
  }

  /** A person's saved files: listed to them alone. The people seen last are kept, up to a bound. */
  private filesOf(subject: unknown): SavedFiles {
    const person = typeof subject === 'string' ? subject : '';
    const files = this.files.get(person) ?? new SavedFiles();
    this.files.delete(person);
    this.files.set(person, files);
    if (this.files.size > MAX_PEOPLE) this.files.delete(this.files.keys().next().value as string);
    return files;
  }

  close(): Promise<void> {
    return this.handler.close();
  }
}
