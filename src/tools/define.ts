import { userInfo } from 'node:os';
import type { CallToolResult, ResourceLink, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { BilledKind } from '../config/billed-kinds.js';
import type { Config } from '../config/config.js';
import type { ConfirmKind } from '../config/confirm-kinds.js';
import type { ToolGroup } from '../config/tool-groups.js';
import type { Workspace } from '../files/workspace.js';
import type { BillableCall as LedgerBillableCall } from '../ledger/ledger.js';
import type { Logger } from '../lib/log.js';
import type { Runtime } from '../runtime.js';

/**
 * What the person is asked to approve before a tool runs, when GATEWAY_CONFIRM names its kind:
 * the billed call as the ledger records it (checked against the limits before anyone is asked,
 * and recorded as declined when the answer is no) and what the form shows.
 */
export interface Confirmation {
  call: BillableCall & { kind: ConfirmKind };
  /** e.g. "Generate a video". */
  action: string;
  /** Options worth seeing before paying: [label, value], empty values left out. */
  details: readonly (readonly [string, string | number | undefined | null])[];
}

/**
 * Whether this call may begin a billed call of a kind: the registry settles the person's answer
 * before run(), and billed() spends it. A kind GATEWAY_CONFIRM does not name, or a client that
 * cannot ask its user, needs no approval; one approval covers one billed call.
 */
export interface Approval {
  allows(kind: BilledKind): boolean;
  spend(kind: BilledKind): void;
}

/** The approval of calls the person starts themselves (`doctor --live`): nothing more to ask. */
export const STARTED_BY_THE_USER: Approval = { allows: () => true, spend: () => {} };

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** A billed call as a tool describes it: billed() adds who calls (the context's principal). */
export type BillableCall = Omit<LedgerBillableCall, 'by'>;

/**
 * Who calls: an OAuth token's subject (`id`) and the client it was issued to (`client`); with
 * GATEWAY_MCP_TOKEN or over stdio, GATEWAY_MCP_TOKEN_USER, else `local:<operating-system user>`.
 */
export interface Principal {
  id: string;
  client?: string;
}

let localUser: string | undefined;

/** The one person a server runs for: GATEWAY_MCP_TOKEN_USER, else `local:<operating-system user>`. */
export function localPrincipal(config: Pick<Config, 'mcpTokenUser'>): Principal {
  if (config.mcpTokenUser) return { id: config.mcpTokenUser };
  localUser ??= `local:${userName()}`;
  return { id: localUser };
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry: a container run under an arbitrary uid.
    return String(process.getuid?.() ?? 'unknown');
  }
}

/** What a tool's run() gets besides its arguments. */
export interface ToolContext {
  /** Who is calling, as the transport learned it. */
  principal: Principal;
  runtime: Runtime;
  /** Aborted when the client cancels the call or the server shuts down. */
  signal: AbortSignal;
  /** Sends a progress notification when the client asked for them; otherwise does nothing. */
  progress(update: Progress): Promise<void>;
  /** A tool's public name under the configured prefix, for hints such as "call video_status". */
  toolName(base: string): string;
  /** The stderr log, and the calling client's log notifications (at the level it asked for). */
  log: Logger;
  /** The calling client's input roots and output directory (from its roots, else the settings). */
  workspace(): Promise<Workspace>;
  /**
   * Records a file the tool saved (listed by resources/list, readable by resources/read) and
   * gives the resource_link for its result.
   */
  savedFile(path: string, mimeType: string, description: string, bytes?: number): ResourceLink;
  /** What the person approved before run(): billed() asks it before a call is begun. */
  approval: Approval;
  /** Adds a line to the end of the result's text (billed(): a limit past 80 %); none outside a call. */
  note?(line: string): void;
}

/**
 * The MCP annotations a tool is listed with: the tools come in four kinds. None deletes anything;
 * all but the `local` ones reach the world beyond this server (the gateway and its providers).
 */
export const ANNOTATIONS = {
  /** Reads only, and the same call again has no further effect (searches, reads, status checks). */
  lookup: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  /** Reads only, but each call is a new answer, billed again (a model's). */
  answer: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  /** Each call makes something new, billed again: a saved file, a video job. */
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  /** Reads only this server's own records (the ledger of billed calls): free, and nothing is sent. */
  local: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
} as const satisfies Record<string, ToolAnnotations>;

/** One tool, as data. The registry is the only code that hands these to the SDK. */
export interface ToolDefinition<
  In extends z.ZodRawShape = z.ZodRawShape,
  Out extends z.ZodRawShape = z.ZodRawShape,
> {
  name: string;
  group: ToolGroup;
  title: string;
  /**
   * What a failed call says failed ("Speech failed: …"), when not the title. The registry says
   * it for whatever run() throws (see failureSentence in results.ts).
   */
  action?: string;
  description: string;
  inputSchema: In;
  outputSchema: Out;
  annotations: ToolAnnotations;
  /**
   * The tool reads or saves local files, in the client's workspace: a client that must be asked
   * for its roots in a round of their own (2026-07-28) is asked before the tool runs, since
   * nothing may be asked once a billed call is sent.
   */
  usesFiles?: true;
  /**
   * The billed call the person is asked to approve before run(), when GATEWAY_CONFIRM names its
   * `kind` and the client can ask (asked in either era, after the roots, before anything is
   * sent); `call` is not called otherwise. It gives undefined when this call sends nothing of the
   * kind, or when what it would send cannot be known (run() then refuses before sending). Its
   * call must be the one run() bills: billed() refuses any other of the kind.
   */
  confirm?: {
    kind: ConfirmKind;
    call(args: z.output<z.ZodObject<In>>, ctx: ToolContext): Promise<Confirmation | undefined>;
  };
  /**
   * Returns the result, or throws: a ServiceError, a UserError refusal, a FailedStep. The registry
   * turns what it throws into the failure result; a tool catches only to recover or add context.
   */
  run(args: z.output<z.ZodObject<In>>, ctx: ToolContext): Promise<CallToolResult>;
}

/** The registry's view of a tool: its argument types erased. */
export type AnyToolDefinition = Omit<ToolDefinition, 'run' | 'confirm'> & {
  confirm?: {
    kind: ConfirmKind;
    call(args: Record<string, unknown>, ctx: ToolContext): Promise<Confirmation | undefined>;
  };
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<CallToolResult>;
};

export function defineTool<In extends z.ZodRawShape, Out extends z.ZodRawShape>(
  tool: ToolDefinition<In, Out>,
): AnyToolDefinition {
  return tool as unknown as AnyToolDefinition;
}

/** A trimmed text argument of 1 to `max` characters, whose sentences name the argument. */
export function textArgument(field: string, max: number): z.ZodString {
  return z
    .string()
    .trim()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`);
}
