// What one MCP connection has of its own, beside the process-wide runtime: the client's log
// level, its workspace (from its roots), its confirmations and the files its calls saved. A tool
// call gets its per-connection parts through forCall(). The handlers that change this state are
// attached where the server is built (create-server.ts).

import type { ResourceLink } from '@modelcontextprotocol/server';
import { type AskRoots, ClientWorkspace, type Workspace } from '../files/workspace.js';
import type { Logger } from '../lib/log.js';
import type { Runtime } from '../runtime.js';
import type { BilledCall } from '../tools/define.js';
import { ClientLog, loggerFor } from './client-log.js';
import { Confirmations } from './confirm.js';
import { SavedFiles } from './resources.js';
import type { GatewayServer, RequestExtra } from './server.js';

/** The per-connection parts of a tool call's context (see ToolContext). */
export interface CallParts {
  log: Logger;
  workspace(): Promise<Workspace>;
  savedFile(path: string, mimeType: string, description: string, bytes?: number): ResourceLink;
  confirm(call: BilledCall): Promise<void>;
}

export class ClientConnection {
  readonly clientLog: ClientLog;
  readonly workspace: ClientWorkspace;
  readonly files = new SavedFiles();
  private readonly confirmations: Confirmations;
  /** Start-up warnings not yet told to this client (over HTTP, they wait for its next request). */
  private pendingWarnings: readonly string[] = [];

  constructor(
    readonly server: GatewayServer,
    readonly runtime: Runtime,
  ) {
    const { config } = runtime;
    this.clientLog = new ClientLog(server, runtime.scrub);
    // Stateless HTTP builds a server per request: a client's answer would reach another one.
    const canAsk = !(config.transport === 'http' && config.stateless);
    this.workspace = new ClientWorkspace(
      { offersRoots: () => canAsk && server.getClientCapabilities()?.roots !== undefined },
      config,
    );
    this.confirmations = new Confirmations(server, config.confirm, canAsk);
  }

  /**
   * Settings that weaken the server, said to the client too (VS Code shows server logs). Over
   * HTTP a line sent at initialization would go to the client's GET stream, which it may not have
   * opened (yet, or ever): they wait for the next request and travel on that one's stream.
   */
  tellStartupWarnings(): void {
    const { config, startupWarnings } = this.runtime;
    if (config.transport === 'http') this.pendingWarnings = [...startupWarnings];
    else this.sendWarnings(startupWarnings);
  }

  /** Sends the start-up warnings still waiting, on the stream of the request now served. */
  tellPendingWarnings(extra: RequestExtra): void {
    if (this.pendingWarnings.length === 0) return;
    const warnings = this.pendingWarnings;
    this.pendingWarnings = [];
    this.sendWarnings(warnings, extra.mcpReq.id);
  }

  private sendWarnings(warnings: readonly string[], relatedRequestId?: string | number): void {
    for (const warning of warnings) this.clientLog.send('warn', warning, relatedRequestId);
  }

  logFor(extra: RequestExtra): Logger {
    return loggerFor(this.runtime.log, this.clientLog, extra.mcpReq.id);
  }

  workspaceFor(extra: RequestExtra): Promise<Workspace> {
    return this.workspace.current(this.rootsAsker(extra), this.logFor(extra));
  }

  /** Asks the client for its roots on the stream of the request `extra` serves. */
  private rootsAsker(extra: RequestExtra): AskRoots {
    return async (timeout) =>
      (await this.server.listRoots(undefined, { relatedRequestId: extra.mcpReq.id, timeout })).roots;
  }

  forCall(extra: RequestExtra): CallParts {
    const log = this.logFor(extra);
    return {
      log,
      workspace: () => this.workspace.current(this.rootsAsker(extra), log),
      savedFile: (path, mimeType, description, bytes) => {
        const link = this.files.add(path, mimeType, description, bytes);
        this.server
          .notification(
            { method: 'notifications/resources/list_changed' },
            { relatedRequestId: extra.mcpReq.id },
          )
          .catch(() => undefined);
        return link;
      },
      confirm: (call) => this.confirmations.ask(call, extra, log),
    };
  }
}
