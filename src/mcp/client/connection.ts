// What one MCP connection has of its own, beside the process-wide runtime: the client's log
// level, its workspace (from its roots), its confirmations and the files its calls saved. A tool
// call gets its per-connection parts through forCall(). The handlers that change this state are
// attached where the server is built (create-server.ts).
//
// A 2026-07-28 client says who it is and what it can do on each request (request-client.ts), and
// is asked for input by input_required rounds (input-rounds.ts); over HTTP it has no connection at
// all: each request gets a server of its own (`perRequest`), whose saved files are the process's.

import { type InputRequest, inputRequired, type ResourceLink } from '@modelcontextprotocol/server';
import {
  type AskRoots,
  ClientWorkspace,
  fromSettings,
  rootsChangeAnything,
  type Workspace,
  workspaceOfRoots,
} from '../../files/workspace.js';
import type { Logger } from '../../lib/log.js';
import type { Runtime } from '../../runtime.js';
import { SavedFiles } from '../resources.js';
import type { GatewayServer, RequestExtra } from '../server.js';
import { ClientLog, type LineRequest, loggerFor } from './client-log.js';
import { Confirmations } from './confirm.js';
import type { CallRound } from './input-rounds.js';
import { requestClient } from './request-client.js';

/** The per-connection parts of a tool call's context (see ToolContext). */
export interface CallParts {
  log: Logger;
  workspace(): Promise<Workspace>;
  savedFile(path: string, mimeType: string, description: string, bytes?: number): ResourceLink;
}

export interface ConnectionOptions {
  /** A server built for one request (2026-07-28 over HTTP): no connection outlives it. */
  perRequest?: boolean;
  /** The files the connection lists; a per-request server's are the process's. */
  files?: SavedFiles;
  /** Tells subscribed clients that the saved files changed (2026-07-28 over HTTP). */
  onResourcesChanged?: () => void;
}

export class ClientConnection {
  readonly clientLog: ClientLog;
  readonly workspace: ClientWorkspace;
  readonly files: SavedFiles;
  readonly confirmations: Confirmations;
  /** Start-up warnings not yet told to this client (over HTTP, they wait for its next request). */
  private pendingWarnings: readonly string[] = [];
  /** The roots a 2026-07-28 client listed on this connection (stdio), until they change. */
  private listedRoots: string[] | undefined;

  constructor(
    readonly server: GatewayServer,
    readonly runtime: Runtime,
    private readonly options: ConnectionOptions = {},
  ) {
    const { config } = runtime;
    this.clientLog = new ClientLog(server, runtime.scrub);
    this.files = options.files ?? new SavedFiles();
    // Stateless HTTP builds a server per request: a client's answer would reach another one.
    const canAsk = !(config.transport === 'http' && config.stateless);
    this.workspace = new ClientWorkspace(
      { offersRoots: () => canAsk && server.getClientCapabilities()?.roots !== undefined },
      config,
    );
    this.confirmations = new Confirmations(server, runtime, config.confirm, canAsk);
    // A 2026-07-28 client on stdio is told the start-up warnings on its first request (it sends
    // no initialize); one served per request is not told them at every request.
    if (!options.perRequest) this.pendingWarnings = [...runtime.startupWarnings];
  }

  /**
   * Settings that weaken the server, said to the client too (VS Code shows server logs). Over
   * HTTP a line sent at initialization would go to the client's GET stream, which it may not have
   * opened (yet, or ever): they wait for the next request and travel on that one's stream.
   */
  tellStartupWarnings(): void {
    const { config, startupWarnings } = this.runtime;
    this.pendingWarnings = [];
    if (config.transport === 'http') this.pendingWarnings = [...startupWarnings];
    else for (const warning of startupWarnings) this.clientLog.send('warn', warning);
  }

  /** Sends the start-up warnings still waiting, on the stream of the request now served. */
  tellPendingWarnings(extra: RequestExtra): void {
    if (this.pendingWarnings.length === 0) return;
    const warnings = this.pendingWarnings;
    this.pendingWarnings = [];
    for (const warning of warnings) this.clientLog.send('warn', warning, this.lineRequest(extra));
  }

  /** Forgets what the client said of its roots: asked again on the next call that needs them. */
  resetRoots(): void {
    this.workspace.reset();
    this.listedRoots = undefined;
  }

  logFor(extra: RequestExtra): Logger {
    return loggerFor(this.runtime.log, this.clientLog, this.lineRequest(extra));
  }

  /**
   * The workspace of a 2025-era request: from the client's roots where it offers them (asked for
   * while the request waits), else the settings.
   */
  workspaceFor(extra: RequestExtra): Promise<Workspace> {
    return this.workspace.current(this.rootsAsker(extra), this.logFor(extra));
  }

  /**
   * A 2026-07-28 request's workspace: its roots come from this call's earlier round, or its answer
   * in this one, or an earlier call on this connection; otherwise the roots listing to ask for.
   */
  roundWorkspace(extra: RequestExtra, round: CallRound): Workspace | { ask: InputRequest } {
    const { config } = this.runtime;
    const offered = requestClient(this.server, extra).capabilities?.roots !== undefined;
    if (!offered || !rootsChangeAnything(config)) return fromSettings(config);
    const answer = round.answer('roots');
    const answered = answer.kind === 'roots' ? answer.roots.map((root) => root.uri) : undefined;
    const listed = round.state.roots ?? answered ?? this.listedRoots;
    if (!listed) return { ask: inputRequired.listRoots() };
    round.state.roots = listed;
    if (!this.options.perRequest) this.listedRoots = listed;
    if (answered)
      this.logFor(extra).info(`workspace from the client's roots: ${answered.join(', ') || 'none listed'}`);
    return workspaceOfRoots(config, listed);
  }

  /**
   * A tool call's parts. `settled`: the workspace settled before the tool ran; without it a
   * 2025-era client is asked for its roots when the tool first needs them, and a 2026-07-28 one
   * (whose tool did not declare it uses files) gets the roots it listed earlier, else the settings.
   */
  forCall(extra: RequestExtra, modern: boolean, settled?: Workspace): CallParts {
    return {
      log: this.logFor(extra),
      workspace: async () => {
        if (settled) return settled;
        if (!modern) return this.workspaceFor(extra);
        return this.listedRoots
          ? workspaceOfRoots(this.runtime.config, this.listedRoots)
          : fromSettings(this.runtime.config);
      },
      savedFile: (path, mimeType, description, bytes) => {
        const link = this.files.add(path, mimeType, description, bytes);
        this.resourcesChanged(extra, modern);
        return link;
      },
    };
  }

  private lineRequest(extra: RequestExtra): LineRequest {
    const { logLevel } = requestClient(this.server, extra);
    return logLevel === undefined ? { id: extra.mcpReq.id } : { id: extra.mcpReq.id, level: logLevel };
  }

  /** Asks a 2025-era client for its roots on the stream of the request `extra` serves. */
  private rootsAsker(extra: RequestExtra): AskRoots {
    return async (timeout) =>
      (await this.server.listRoots(undefined, { relatedRequestId: extra.mcpReq.id, timeout })).roots;
  }

  private resourcesChanged(extra: RequestExtra, modern: boolean): void {
    if (!modern) {
      this.server
        .notification(
          { method: 'notifications/resources/list_changed' },
          { relatedRequestId: extra.mcpReq.id },
        )
        .catch(() => undefined);
    } else if (this.options.onResourcesChanged) this.options.onResourcesChanged();
    else this.server.sendResourceListChanged().catch(() => undefined);
  }
}
