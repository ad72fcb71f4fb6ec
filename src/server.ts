import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerTools, selectTools, serverInstructions } from './registry.js';
import type { Runtime } from './runtime.js';
import { SERVER_NAME, VERSION } from './version.js';

/** Builds one MCP server (one per session on HTTP) from the process-wide runtime. */
export function createServer(runtime: Runtime): McpServer {
  const tools = selectTools(runtime.config);
  const server = new McpServer(
    { name: SERVER_NAME, title: 'Gateway tools', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: serverInstructions(runtime.config, tools),
    },
  );
  registerTools(server, runtime, tools);
  return server;
}
