import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Implementation, Tool } from '@modelcontextprotocol/sdk/types.js';
import { parseCommandLine } from '../../src/config.js';
import { McpProtocol } from '../../src/protocol.js';
import { selectTools, serverInstructions, toolHandlers } from '../../src/registry.js';
import { closeRuntime, createRuntime } from '../../src/runtime.js';
import { SERVER_NAME, VERSION } from '../../src/version.js';
import { type Connected, tempDir } from './harness.js';

export interface ClientSession extends Connected {
  /** The tools as this client listed them (output schemas or not). */
  tools: Map<string, Tool>;
}

/**
 * An SDK Client that introduces itself as `info` (a real client's clientInfo), connected in memory
 * to a server whose registry is told the clientInfo the client sent at initialize, as the protocol
 * layer tells it: results are shaped for that client (src/result-view.ts).
 */
export async function connectAs(info: Implementation, env: Record<string, string>): Promise<ClientSession> {
  const { config } = parseCommandLine([], { GATEWAY_LOG_LEVEL: 'error', ...env }, env.CWD ?? tempDir());
  const runtime = createRuntime(config);
  const tools = selectTools(config);
  let clientInfo: Implementation | undefined;
  const server = new McpProtocol(
    { name: SERVER_NAME, title: 'Gateway tools', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: serverInstructions(config, tools),
      log: runtime.log,
    },
    toolHandlers(runtime, tools, { clientInfo: () => clientInfo }),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // Read before the server handles it: the clientInfo of the initialize request.
  serverSide.onmessage = (message) => {
    if ('method' in message && message.method === 'initialize') {
      clientInfo = (message.params as { clientInfo?: Implementation }).clientInfo;
    }
  };
  const client = new Client(info);
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  const listed = await client.listTools();
  return {
    client,
    runtime,
    tools: new Map(listed.tools.map((t) => [t.name, t])),
    async close() {
      await client.close();
      await server.close();
      await closeRuntime(runtime);
    },
  };
}
