import { ClientLog, loggerFor } from './client-log.js';
import type { Logger } from './log.js';
import type { GatewayServer, RequestExtra } from './mcp-server.js';
import type { Runtime } from './runtime.js';

/**
 * What one MCP connection has of its own, beside the process-wide runtime: the client's log
 * level. A tool call gets its per-connection parts through forCall().
 */
export class Session {
  readonly clientLog: ClientLog;

  constructor(
    readonly server: GatewayServer,
    readonly runtime: Runtime,
  ) {
    this.clientLog = new ClientLog(server, runtime.scrub);
    server.oninitialized = () => {
      // Settings that weaken the server, said to the client too (VS Code shows server logs).
      for (const warning of runtime.startupWarnings) this.clientLog.send('warn', warning);
    };
  }

  /** The per-connection parts of a tool call's context. */
  forCall(extra: RequestExtra): { log: Logger } {
    return { log: loggerFor(this.runtime.log, this.clientLog, extra.requestId) };
  }
}
