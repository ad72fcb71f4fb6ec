import {
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  type ListToolsResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type Config, ConfigError } from '../config/config.js';
import { TOOL_GROUPS, type ToolGroup } from '../config/tool-groups.js';
import type { AnyToolDefinition, ToolContext } from '../tools/define.js';
import { ALL_TOOLS } from '../tools/index.js';
import { boundResult } from '../tools/result-budget.js';
import { FailedStep, failure, failureSentence, isBug } from '../tools/results.js';
import { APP_TOOLS, appToolMeta, showsViews, viewOf, viewToolMeta } from '../views/ui-extension.js';
import { withViewData } from '../views/view-data.js';
import type { ClientConnection } from './client/connection.js';
import { type CallRound, callRound, inputNeededIn, orInputRequired } from './client/input-rounds.js';
import { requestClient } from './client/request-client.js';
import { progressGate } from './progress-gate.js';
import { type ResultView, resultView } from './result-view.js';
import { checked } from './schema-sentences.js';
import { scrubResult } from './scrub-result.js';
import type { RequestExtra } from './server.js';
import { listedTool } from './tool-listing.js';

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

/**
 * tools/list and tools/call for the selected tools, for create-server.ts to attach: the only code
 * that hands tools to the protocol. Calls are validated against each tool's zod shapes here,
 * synchronously (see toolSchemas()); whatever a tool throws becomes its failure result here, and
 * only here; every result is scrubbed of secrets, shaped for the client (result-view.ts) and held
 * to the result budget before it leaves, after the call's last progress notification. (The SDK's
 * Server has already answered -32602 to a call whose params are malformed.)
 */
export function toolHandlers(connection: ClientConnection, tools: readonly AnyToolDefinition[]) {
  const { server, runtime } = connection;
  const toolName = (base: string) => prefixed(runtime.config, base);
  // tools/list is served from entries converted once per process (tool-listing.ts).
  const listing = tools.map((tool) => listedTool(tool, toolName(tool.name), toolMeta(tool)));
  const textListing = listing.map(withoutOutputSchema);
  // For a client that shows views (MCP Apps): the same entries, each view's tools naming it, and
  // the tools only a view calls.
  const appTools = APP_TOOLS.flatMap((app) => {
    const index = tools.findIndex((tool) => tool.name === app.runs);
    return index === -1 ? [] : [{ app, index, tool: tools[index] as AnyToolDefinition }];
  });
  const withViews = (entries: Tool[]): Tool[] => [
    ...entries.map((entry, index) => {
      const linked = viewOf((tools[index] as AnyToolDefinition).name);
      return linked ? { ...entry, _meta: { ...entry._meta, ...viewToolMeta(linked) } } : entry;
    }),
    ...appTools.map(({ app, index }) => ({
      ...(entries[index] as Tool),
      name: toolName(app.name),
      title: app.title,
      description: app.description,
      _meta: appToolMeta(app),
    })),
  ];
  const appToolNamed = new Map(appTools.map(({ app, tool }) => [toolName(app.name), tool]));
  let viewListings: { structured: Tool[]; text: Tool[] } | undefined;
  const byName = new Map(tools.map((tool) => [toolName(tool.name), tool]));
  // The client is the one each request names (2026-07-28), or the one initialize named.
  const view = (extra: RequestExtra): ResultView =>
    resultView(runtime.config.resultFormat, requestClient(server, extra).info);
  const viewsShown = (extra: RequestExtra): boolean =>
    runtime.config.views === 'on' && showsViews(requestClient(server, extra).capabilities);
  return {
    list: (_request: unknown, extra: RequestExtra): ListToolsResult => {
      const { structured } = view(extra);
      if (!viewsShown(extra)) return { tools: structured ? listing : textListing };
      viewListings ??= { structured: withViews(listing), text: withViews(textListing) };
      return { tools: structured ? viewListings.structured : viewListings.text };
    },
    call,
  };

  /**
   * A 2026-07-28 call that needs the client's input first (its roots, a confirmation) is answered
   * input_required, and runs again from the start with the answers (input-rounds.ts).
   */
  async function call(
    request: CallToolRequest,
    extra: RequestExtra,
  ): Promise<CallToolResult | InputRequiredResult> {
    const { name, arguments: given } = request.params;
    const tool = byName.get(name) ?? (viewsShown(extra) ? appToolNamed.get(name) : undefined);
    if (!tool) return failure(`Unknown tool "${name}"; this server has ${[...byName.keys()].join(', ')}.`);
    const schemas = toolSchemas(tool);
    // One sentence per problem, from the tool's schema (schema-sentences.ts); it quotes the
    // wrong values, so it is scrubbed like any result.
    const args = checked(schemas.input, given ?? {});
    if (!args.success) return failure(runtime.scrub(`Invalid arguments for ${name}: ${args.problems}`));
    const round = requestClient(server, extra).modern ? callRound(extra, name, given) : undefined;
    const gate = progressGate(
      {
        progressToken: extra.mcpReq._meta?.progressToken,
        signal: extra.mcpReq.signal,
        notify: (notification) => extra.mcpReq.notify(notification),
      },
      runtime.log,
    );
    const context = toolContext(connection, extra, toolName, gate, round);
    const result = await orInputRequired(runtime, async () => {
      // Roots asked for now, before the tool may send a billed call.
      if (round && tool.usesFiles) await context.workspace();
      return callTool(tool, schemas, args.data, context);
    });
    if (isInputRequiredResult(result)) return result;
    // The last progress notification is on its way before the result follows it.
    await gate.settle();
    const sent = boundResult(shaped(result, view(extra)));
    return viewsShown(extra) && viewOf(tool.name) ? withViewData(result, sent) : sent;
  }

  async function callTool(
    tool: AnyToolDefinition,
    schemas: ReturnType<typeof toolSchemas>,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<CallToolResult> {
    const action = tool.action ?? tool.title;
    let result: CallToolResult;
    try {
      result = scrubResult(await tool.run(args, context), runtime.secrets);
    } catch (error) {
      // The one place a failure becomes a result: tools throw, and only what no tool means to
      // throw is logged, with its stack, as the bug it is. A round that needs the client's input
      // is no failure: it goes on to call().
      if (inputNeededIn(error)) throw error;
      if (isBug(error)) context.log.error(`${tool.name} threw: ${stackOf(error)}`);
      return failure(failureSentence(error, runtime.scrub, action));
    }
    if (!result.isError) {
      const checked = schemas.output.safeParse(result.structuredContent);
      if (!checked.success) {
        runtime.log.error(
          `${tool.name} gave structured content its schema refuses: ${issuesOf(checked.error)}`,
        );
        return failure(
          failureSentence(new Error('its result did not match the output schema'), runtime.scrub, action),
        );
      }
    }
    return result;
  }
}

/** A thrown value's stack (a failed step's: its cause's), else its message. */
function stackOf(error: unknown): string {
  const cause = error instanceof FailedStep ? error.cause : error;
  return cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
}

function withoutOutputSchema(entry: Tool): Tool {
  const { outputSchema: _dropped, ...rest } = entry;
  return rest;
}

/** The parts of a result the connection's client gets (see result-view.ts). */
function shaped(result: CallToolResult, view: ResultView): CallToolResult {
  const dropLinks = !view.links && result.content.some((c) => c.type === 'resource_link');
  if (view.structured && !dropLinks) return result;
  const { structuredContent, content, ...rest } = result;
  return {
    ...rest,
    content: dropLinks ? content.filter((c) => c.type !== 'resource_link') : content,
    ...(view.structured && structuredContent !== undefined ? { structuredContent } : {}),
  };
}

const compiled = new WeakMap<AnyToolDefinition, { input: z.ZodObject; output: z.ZodObject }>();

/** Each tool's zod objects, built on its first call. */
function toolSchemas(tool: AnyToolDefinition) {
  let schemas = compiled.get(tool);
  if (!schemas) {
    schemas = { input: z.object(tool.inputSchema), output: z.object(tool.outputSchema) };
    compiled.set(tool, schemas);
  }
  return schemas;
}

/** Zod issues in one line for the log, each naming the field it is about unless its message already does. */
function issuesOf(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.join('.');
      return where === '' || issue.message.startsWith(where) ? issue.message : `${where}: ${issue.message}`;
    })
    .join('; ');
}

/** Only the required tools carry a mark: the other tools' lists stay as small as they can. */
function toolMeta(tool: AnyToolDefinition): Record<string, unknown> | undefined {
  return isRequired(tool) ? { [REQUIRED_META_KEY]: true } : undefined;
}

function toolContext(
  connection: ClientConnection,
  extra: RequestExtra,
  toolName: (base: string) => string,
  gate: ReturnType<typeof progressGate>,
  round: CallRound | undefined,
): ToolContext {
  return {
    ...connection.forCall(extra, round),
    runtime: connection.runtime,
    signal: extra.mcpReq.signal,
    toolName,
    progress: gate.progress,
  };
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
