import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { registerTools, selectTools, serverInstructions } from './registry.js';
import type { Runtime } from './runtime.js';
import { SERVER_NAME, VERSION } from './version.js';

/**
 * The SDK validates elicitation answers with this. The server never elicits, so instead of the
 * SDK's default (an Ajv instance per server, built at start-up and for every HTTP session) it
 * gets one that refuses; the bundle leaves Ajv out (scripts/bundle-stubs.mjs).
 */
const noElicitation: jsonSchemaValidator = {
  getValidator() {
    throw new Error('this server does not elicit input, so it validates no elicitation answers');
  },
};

/**
 * Builds one MCP server (one per session on HTTP) from the process-wide runtime. The SDK's
 * low-level Server, not its McpServer: the registry serves tools/list from a catalog converted
 * once and validates tools/call arguments itself, synchronously, where McpServer would convert
 * the schemas again and validate every call asynchronously.
 */
export function createServer(runtime: Runtime): Server {
  const tools = selectTools(runtime.config);
  const server = new Server(
    { name: SERVER_NAME, title: 'Gateway tools', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: serverInstructions(runtime.config, tools),
      jsonSchemaValidator: noElicitation,
    },
  );
  registerTools(server, runtime, tools);
  return server;
}
