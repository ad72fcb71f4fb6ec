// tools/call, as named steps: validate the arguments → settle the inputs the tool declared (roots,
// a confirmation) → run the tool → scrub secrets → check the output schema → shape the result for
// the client → fit the result budget → attach view data. Whatever a tool throws, in its
// confirmation or its run, becomes its failure result here, and only here (the one error
// boundary). The SDK's Server has already answered -32602 to a call whose params are malformed.

import {
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Config } from '../config/config.js';
import { type AnyToolDefinition, localPrincipal, type Principal } from '../tools/define.js';
import { boundResult } from '../tools/result-budget.js';
import { FailedStep, failure, failureSentence, isBug } from '../tools/results.js';
import { viewOf } from '../views/ui-extension.js';
import { withViewData } from '../views/view-data.js';
import { type ContextOf, settleInputs } from './client/call-inputs.js';
import type { ClientConnection } from './client/connection.js';
import { requestClient } from './client/request-client.js';
import type { PublicTools } from './list-tools.js';
import { progressGate } from './progress-gate.js';
import type { ResultView } from './result-view.js';
import { checked } from './schema-sentences.js';
import { scrubResult } from './scrub-result.js';
import type { RequestExtra } from './server.js';

/** The tools/call handler of a connection. */
export function toolCalls(connection: ClientConnection, known: PublicTools) {
  const { runtime } = connection;
  return async (
    request: CallToolRequest,
    extra: RequestExtra,
  ): Promise<CallToolResult | InputRequiredResult> => {
    const { name, arguments: given } = request.params;
    const tool = known.named(name, extra);
    if (!tool) return failure(`Unknown tool "${name}"; this server has ${known.names().join(', ')}.`);
    const principal = principalOf(extra, runtime.config);
    runtime.log.debug(
      `${name} called by ${principal.id}${principal.client ? ` (client ${principal.client})` : ''}`,
    );
    const schemas = toolSchemas(tool);
    const args = validate(schemas, name, given, runtime.scrub);
    if ('invalid' in args) return args.invalid;
    const gate = progressGate(
      {
        progressToken: extra.mcpReq._meta?.progressToken,
        signal: extra.mcpReq.signal,
        notify: (notification) => extra.mcpReq.notify(notification),
      },
      runtime.log,
    );
    const notes: string[] = [];
    const contextOf: ContextOf = ({ workspace, approval }) => ({
      ...connection.forCall(extra, requestClient(connection.server, extra).modern, workspace),
      runtime,
      principal,
      signal: extra.mcpReq.signal,
      toolName: known.name,
      progress: gate.progress,
      approval,
      note: (line) => notes.push(line),
    });
    const ran = await guarded(tool, connection, async () => {
      const inputs = await settleInputs(connection, tool, args.valid, { name, given }, extra, contextOf);
      if ('ask' in inputs) return inputs.ask;
      const result = withNotes(await tool.run(args.valid, inputs.context), notes);
      return check(tool, schemas, scrub(result, connection), connection);
    });
    if (isInputRequiredResult(ran)) return ran;
    // The last progress notification is on its way before the result follows it.
    await gate.settle();
    const sent = boundResult(shape(ran, known.view(extra)));
    return known.viewsShown(extra) && viewOf(tool.name) ? withViewData(ran, sent) : sent;
  };
}

type Schemas = ReturnType<typeof toolSchemas>;

/**
 * A result with the notes of its call (a limit nearly reached) at the end of its text, and as
 * `budget` in its structured content: a client given structured content may hand its model that
 * alone (Claude Code and Codex with GATEWAY_RESULT_FORMAT=structured).
 */
function withNotes(result: CallToolResult, notes: readonly string[]): CallToolResult {
  const [first, ...rest] = result.content;
  if (notes.length === 0 || first?.type !== 'text') return result;
  const { structuredContent: structured } = result;
  return {
    ...result,
    content: [{ ...first, text: `${first.text}\n\n${notes.join('\n')}` }, ...rest],
    ...(structured ? { structuredContent: { ...structured, budget: notes.join(' ') } } : {}),
  };
}

/**
 * The caller: the subject of the OAuth token the HTTP transport verified, else the one person
 * the server runs for.
 */
function principalOf(extra: RequestExtra, config: Pick<Config, 'mcpTokenUser'>): Principal {
  const auth = extra.http?.authInfo;
  const sub = auth?.extra?.sub;
  if (auth && typeof sub === 'string')
    return { id: sub, ...(auth.clientId ? { client: auth.clientId } : {}) };
  return localPrincipal(config);
}

/** The arguments as the tool's schema reads them, or the failure that says what is wrong. */
function validate(
  schemas: Schemas,
  name: string,
  given: unknown,
  scrub: (text: string) => string,
): { valid: Record<string, unknown> } | { invalid: CallToolResult } {
  // One sentence per problem, from the tool's schema (schema-sentences.ts); it quotes the wrong
  // values, so it is scrubbed like any result.
  const args = checked(schemas.input, given ?? {});
  if (!args.success) return { invalid: failure(scrub(`Invalid arguments for ${name}: ${args.problems}`)) };
  return { valid: args.data };
}

/**
 * The one place a failure becomes a result: tools throw, and only what no tool means to throw
 * is logged, with its stack, as the bug it is.
 */
async function guarded<T>(
  tool: AnyToolDefinition,
  connection: ClientConnection,
  work: () => Promise<T>,
): Promise<T | CallToolResult> {
  try {
    return await work();
  } catch (error) {
    const { runtime } = connection;
    if (isBug(error)) runtime.log.error(`${tool.name} threw: ${stackOf(error)}`);
    return failure(failureSentence(error, runtime.scrub, tool.action ?? tool.title));
  }
}

function scrub(result: CallToolResult, connection: ClientConnection): CallToolResult {
  return scrubResult(result, connection.runtime.secrets);
}

/** A result whose structured content its schema refuses is a bug: logged, and said as a failure. */
function check(
  tool: AnyToolDefinition,
  schemas: Schemas,
  result: CallToolResult,
  connection: ClientConnection,
): CallToolResult {
  if (result.isError) return result;
  const parsed = schemas.output.safeParse(result.structuredContent);
  if (parsed.success) return result;
  const { runtime } = connection;
  runtime.log.error(`${tool.name} gave structured content its schema refuses: ${issuesOf(parsed.error)}`);
  const action = tool.action ?? tool.title;
  return failure(
    failureSentence(new Error('its result did not match the output schema'), runtime.scrub, action),
  );
}

/** The parts of a result the connection's client gets (see result-view.ts). */
function shape(result: CallToolResult, view: ResultView): CallToolResult {
  const dropLinks = !view.links && result.content.some((c) => c.type === 'resource_link');
  if (view.structured && !dropLinks) return result;
  const { structuredContent, content, ...rest } = result;
  return {
    ...rest,
    content: dropLinks ? content.filter((c) => c.type !== 'resource_link') : content,
    ...(view.structured && structuredContent !== undefined ? { structuredContent } : {}),
  };
}

/** A thrown value's stack (a failed step's: its cause's), else its message. */
function stackOf(error: unknown): string {
  const cause = error instanceof FailedStep ? error.cause : error;
  return cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
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
