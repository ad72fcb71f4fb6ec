import { McpProtocol } from './protocol.js';
import { selectTools, serverInstructions, toolHandlers } from './registry.js';
import type { Runtime } from './runtime.js';
import type { AnyToolDefinition } from './tools/types.js';
import { SERVER_NAME, VERSION } from './version.js';

/**
 * Builds one MCP server (one per session on HTTP) from the process-wide runtime: the selected
 * tools, or the ones given.
 */
export function createServer(
  runtime: Runtime,
  tools: readonly AnyToolDefinition[] = selectTools(runtime.config),
): McpProtocol {
  return new McpProtocol(
    { name: SERVER_NAME, title: 'Gateway tools', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: serverInstructions(runtime.config, tools),
      log: runtime.log,
    },
    toolHandlers(runtime, tools),
  );
}
