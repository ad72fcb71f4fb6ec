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
import { ClientConnection } from './client-connection.js';
import { selectTools, serverInstructions, toolHandlers } from './registry.js';
import { resourceHandlers } from './resources.js';
import { GatewayServer } from './server.js';

/** A server for the selected tools, or for the ones given. */
export function createServer(
  runtime: Runtime,
  tools: readonly AnyToolDefinition[] = selectTools(runtime.config),
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
    },
    runtime.log,
  );
  const connection = new ClientConnection(server, runtime);
  const { clientLog, workspace } = connection;

  server.oninitialized = () => {
    workspace.reset();
    connection.tellStartupWarnings();
  };
  server.onrequest = (_method, extra) => connection.tellPendingWarnings(extra);

  // Replaces the SDK's own logging/setLevel handler: the level is this connection's ClientLog's.
  server.handle(SetLevelRequestSchema, (request) => {
    clientLog.setLevel(request.params.level);
    return {};
  });
  server.setNotificationHandler('notifications/roots/list_changed', () => workspace.reset());

  const toolCalls = toolHandlers(connection, tools);
  server.handle(ListToolsRequestSchema, toolCalls.list);
  server.handle(CallToolRequestSchema, toolCalls.call);

  const resources = resourceHandlers(
    connection.files,
    async (extra) => (await connection.workspaceFor(extra)).outputDir,
    {
      shown: () => runtime.config.views === 'on' && showsViews(server.getClientCapabilities()),
      gatewayUrl: runtime.config.baseUrl,
    },
  );
  server.handle(ListResourcesRequestSchema, resources.list);
  server.handle(ListResourceTemplatesRequestSchema, resources.templates);
  server.handle(ReadResourceRequestSchema, resources.read);
  return server;
}
