// Builds one MCP server (one per session on HTTP) from the process-wide runtime. Every request
// and notification handler, and every hook, is attached here: what a connection answers can be
// read in one place.

import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/core';
import type { Runtime } from '../runtime.js';
import type { AnyToolDefinition } from '../tools/define.js';
import { SERVER_NAME, VERSION } from '../version.js';
import { showsViews, UI_EXTENSION } from '../views/ui-extension.js';
import { toolCalls } from './call-pipeline.js';
import { ClientConnection, type ConnectionOptions } from './client/connection.js';
import { callRound, roundStates } from './client/input-rounds.js';
import { requestClient } from './client/request-client.js';
import { publicTools, toolList } from './list-tools.js';
import { resourceHandlers } from './resources.js';
import { GatewayServer } from './server.js';
import { selectTools, serverInstructions } from './tool-selection.js';

/** A server for the selected tools, or for the ones given. */
export function createServer(
  runtime: Runtime,
  tools: readonly AnyToolDefinition[] = selectTools(runtime.config),
  options: ConnectionOptions = {},
): GatewayServer {
  const server = new GatewayServer(
    { name: SERVER_NAME, title: 'Gateway tools', version: VERSION },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { listChanged: true },
        logging: {},
        // MCP Apps: views for the video and speech tools, shown by clients that declare it too.
        ...(runtime.config.views === 'on' ? { extensions: { [UI_EXTENSION]: {} } } : {}),
      },
      instructions: serverInstructions(runtime.config, tools),
      // The state a 2026-07-28 call's input rounds carry, checked before any handler sees it.
      requestState: { verify: roundStates(runtime).codec.verify },
    },
    runtime.log,
  );
  const connection = new ClientConnection(server, runtime, options);
  const { clientLog } = connection;

  server.oninitialized = () => {
    connection.resetRoots();
    connection.tellStartupWarnings();
  };
  server.onrequest = (_method, extra) => connection.tellPendingWarnings(extra);

  // Replaces the SDK's own logging/setLevel handler: the level is this connection's ClientLog's.
  server.handle(SetLevelRequestSchema, (request) => {
    clientLog.setLevel(request.params.level);
    return {};
  });
  server.setNotificationHandler('notifications/roots/list_changed', () => connection.resetRoots());

  const known = publicTools(connection, tools);
  server.handle(ListToolsRequestSchema, toolList(known));
  server.handle(CallToolRequestSchema, toolCalls(connection, known));

  // A file not saved on this connection is looked for in the workspace, whose roots a 2026-07-28
  // client may be asked for first.
  const resources = resourceHandlers(
    connection.files,
    async (extra, uri) => {
      if (!requestClient(server, extra).modern) return (await connection.workspaceFor(extra)).outputDir;
      const round = callRound(extra, 'resources/read', uri);
      const workspace = connection.roundWorkspace(extra, round);
      return 'ask' in workspace ? round.ask(runtime, 'roots', workspace.ask) : workspace.outputDir;
    },
    {
      shown: (extra) =>
        runtime.config.views === 'on' && showsViews(requestClient(server, extra).capabilities),
    },
  );
  server.handle(ListResourcesRequestSchema, resources.list);
  server.handle(ListResourceTemplatesRequestSchema, resources.templates);
  server.handle(ReadResourceRequestSchema, resources.read);
  return server;
}
