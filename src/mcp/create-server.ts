import type { Runtime } from '../runtime.js';
import type { AnyToolDefinition } from '../tools/define.js';
import { SERVER_NAME, VERSION } from '../version.js';
import { registerTools, selectTools, serverInstructions } from './registry.js';
import { registerResources } from './resources.js';
import { GatewayServer } from './server.js';
import { Session } from './session.js';

/**
 * Builds one MCP server (one per session on HTTP) from the process-wide runtime: the selected
 * tools, or the ones given.
 */
export function createServer(
  runtime: Runtime,
  tools: readonly AnyToolDefinition[] = selectTools(runtime.config),
): GatewayServer {
  const server = new GatewayServer(
    { name: SERVER_NAME, title: 'Gateway tools', version: VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: true }, logging: {} },
      instructions: serverInstructions(runtime.config, tools),
    },
    runtime.log,
  );
  const session = new Session(server, runtime);
  registerTools(session, tools);
  registerResources(session);
  return server;
}
