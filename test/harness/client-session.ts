import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Implementation, Tool } from '@modelcontextprotocol/sdk/types.js';
import { type Connected, connectInMemory } from './harness.js';

export interface ClientSession extends Connected {
  /** The tools as this client listed them (output schemas or not). */
  tools: Map<string, Tool>;
}

/**
 * An SDK Client that introduces itself as `info` (a real client's clientInfo), connected in memory
 * to the server, which shapes results for the client it was told of at initialize
 * (src/mcp/result-view.ts).
 */
export async function connectAs(info: Implementation, env: Record<string, string>): Promise<ClientSession> {
  const connected = await connectInMemory(env, [], new Client(info));
  const listed = await connected.client.listTools();
  return { ...connected, tools: new Map(listed.tools.map((t) => [t.name, t])) };
}
