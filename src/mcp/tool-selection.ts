// Which tools a server has, and what they are called: the allow-list, deny-list and prefix of the
// settings, the required-tools invariant, and the server's instructions naming them.

import { type Config, ConfigError } from '../config/config.js';
import { TOOL_GROUPS, type ToolGroup } from '../config/tool-groups.js';
import type { AnyToolDefinition } from '../tools/define.js';
import { ALL_TOOLS } from '../tools/index.js';

/**
 * The required-tools invariant lives here and only here: web_search and web_fetch are in every
 * tool list, whatever the allow-list, deny-list or prefix says.
 */
export const REQUIRED_TOOLS = ['web_search', 'web_fetch'] as const;
export const REQUIRED_META_KEY = 'gateway-tools/required';

/** Every tool name the project defines, for validating allow- and deny-lists. */
const KNOWN_TOOL_NAMES = new Set(ALL_TOOLS.map((t) => t.name));

/** Applies allow-list, deny-list and prefix. Throws ConfigError for a list the invariant forbids. */
export function selectTools(
  config: Pick<Config, 'tools' | 'disabledTools'>,
  all = ALL_TOOLS,
): AnyToolDefinition[] {
  const allow = config.tools?.map(normalizeName);
  const deny = config.disabledTools.map(normalizeName);
  for (const name of [...(allow ?? []), ...deny]) {
    if (!isGroup(name) && !KNOWN_TOOL_NAMES.has(name)) {
      throw new ConfigError(
        `unknown tool or group "${name}" in ${allow?.includes(name) ? 'GATEWAY_TOOLS (--tools)' : 'GATEWAY_DISABLED_TOOLS (--disable-tools)'}; ` +
          `groups: ${TOOL_GROUPS.join(', ')}; tools: ${[...KNOWN_TOOL_NAMES].join(', ')}`,
      );
    }
  }
  for (const name of deny) {
    const required = REQUIRED_TOOLS.find((t) => t === name || t === groupTool(name));
    if (required) {
      throw new ConfigError(
        `GATEWAY_DISABLED_TOOLS (--disable-tools) names "${name}", but ${required} is a required agent tool and cannot be disabled; remove it from the list`,
      );
    }
  }
  return all.filter((tool) => {
    if (isRequired(tool)) return true;
    const allowed = !allow || allow.includes(tool.name) || allow.includes(tool.group);
    const denied = deny.includes(tool.name) || deny.includes(tool.group);
    return allowed && !denied;
  });
}

export function isRequired(tool: Pick<AnyToolDefinition, 'name'>): boolean {
  return (REQUIRED_TOOLS as readonly string[]).includes(tool.name);
}

export function prefixed(config: Pick<Config, 'toolPrefix'>, name: string): string {
  return `${config.toolPrefix}${name}`;
}

/** The server `instructions`: names the required tools under their public (prefixed) names. */
export function serverInstructions(
  config: Pick<Config, 'toolPrefix'>,
  tools: readonly AnyToolDefinition[],
): string {
  const [search, fetch] = REQUIRED_TOOLS.map((n) => prefixed(config, n));
  const others = tools.filter((t) => !isRequired(t)).map((t) => prefixed(config, t.name));
  return [
    `Required agent tools, always available: ${search} (search the web) and ${fetch} (read a URL as markdown, paged with start_index).`,
    others.length > 0 ? `Also available: ${others.join(', ')}.` : '',
    'Tool errors say what to change; a saved file is given by its path on the server and as the resource gateway-tools://output/<file name>, which resources/read returns wherever the client runs.',
  ]
    .filter(Boolean)
    .join(' ');
}

function normalizeName(name: string): string {
  return name.trim().toLowerCase();
}

function isGroup(name: string): name is ToolGroup {
  return (TOOL_GROUPS as readonly string[]).includes(name);
}

/** The required tool a group name stands for, if any. */
function groupTool(group: string): string | undefined {
  return group === 'search' ? 'web_search' : group === 'fetch' ? 'web_fetch' : undefined;
}
