// The OAuth scope each tool needs, by tool family (the group in src/config/tool-groups.ts), and the
// check of a request body against a token's scopes.
//
// The SDK has scope challenges of its own (a tool's `scopeChallenge`, checked by its transports),
// but only for tools registered on its McpServer, and its 2026-07-28 handler asks only an
// McpServer; this server registers its tools on the plain Server, and legacy SSE has no such check
// at all. So the check is made here, once, on the body each transport has already read, for all
// three; the SDK's bearerAuthChallengeResponse words the 403.

import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Config } from '../../../config/config.js';
import type { ToolGroup } from '../../../config/tool-groups.js';
import { prefixed } from '../../../mcp/tool-selection.js';
import { ALL_TOOLS } from '../../../tools/index.js';

/**
 * ask_model is a model's answer, so it needs `models` like list_models; usage reads only this
 * service's own record of the caller's calls, free, and needs no scope.
 */
const SCOPE_OF_GROUP: Record<ToolGroup, string | undefined> = {
  search: 'search',
  fetch: 'fetch',
  video: 'video',
  audio: 'audio',
  models: 'models',
  chat: 'models',
  usage: undefined,
};

/** Every scope a tool needs, in the order of the tool families. */
export const TOOL_SCOPES: readonly string[] = [
  ...new Set(Object.values(SCOPE_OF_GROUP).filter((s): s is string => s !== undefined)),
];

export interface MissingScope {
  tool: string;
  scope: string;
}

/** The scope each tool's public name (with GATEWAY_TOOL_PREFIX) needs. */
export function scopesByToolName(config: Pick<Config, 'toolPrefix'>): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const tool of ALL_TOOLS) {
    const scope = SCOPE_OF_GROUP[tool.group];
    if (scope) scopes.set(prefixed(config, tool.name), scope);
  }
  return scopes;
}

/** The first tools/call in a message (or batch) whose tool needs a scope the token lacks. */
export function missingScope(
  body: unknown,
  auth: AuthInfo,
  scopes: ReadonlyMap<string, string>,
): MissingScope | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!message || typeof message !== 'object') continue;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call' || typeof params?.name !== 'string') continue;
    const scope = scopes.get(params.name);
    if (scope && !auth.scopes.includes(scope)) return { tool: params.name, scope };
  }
  return undefined;
}
