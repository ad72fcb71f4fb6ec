// The inputs a tool declares, settled before it runs, in either era of MCP: the client's roots
// (`usesFiles`) and the person's approval of its billed call (`confirm`, where GATEWAY_CONFIRM
// names its kind). A 2025-era client is asked by requests from the server while the call waits; a
// 2026-07-28 client by input_required rounds, the call answered with what it needs and coming
// again with the answers. Either way, when the person is asked nothing has run, been begun in
// the ledger or been sent; the limits are checked first, so no one approves a call they would
// refuse. A call the person does not approve is recorded once, as declined, in either era.

import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { BilledKind } from '../../config/billed-kinds.js';
import type { Workspace } from '../../files/workspace.js';
import { UserError } from '../../lib/user-error.js';
import { notSent } from '../../tools/billing.js';
import type {
  AnyToolDefinition,
  Approval,
  Confirmation,
  Principal,
  ToolContext,
} from '../../tools/define.js';
import type { RequestExtra } from '../server.js';
import type { Answer } from './confirm.js';
import type { ClientConnection } from './connection.js';
import { type CallRound, callRound } from './input-rounds.js';
import { requestClient } from './request-client.js';

/** The call's context once its inputs are settled, or the round that asks the client for them. */
export type Inputs = { context: ToolContext } | { ask: InputRequiredResult };

/** What the pipeline gives for the call's context: everything but what the inputs settle. */
export type ContextOf = (parts: { workspace?: Workspace; approval: Approval }) => ToolContext;

/**
 * Settles what `tool` declared for this call. Throws a UserError when the call may not go on
 * (a limit refuses it, the person said no, the ledger cannot record it).
 */
export async function settleInputs(
  connection: ClientConnection,
  tool: AnyToolDefinition,
  args: Record<string, unknown>,
  called: { name: string; given: unknown },
  extra: RequestExtra,
  contextOf: ContextOf,
): Promise<Inputs> {
  // A 2026-07-28 call's round (its digest hashes the arguments, inline audio included) is made
  // only for a call that has something to ask.
  const modern = requestClient(connection.server, extra).modern;
  let round: CallRound | undefined;
  const roundOf = () => {
    round ??= callRound(extra, called.name, called.given);
    return round;
  };
  let workspace: Workspace | undefined;
  if (tool.usesFiles && modern) {
    const settled = connection.roundWorkspace(extra, roundOf());
    if ('ask' in settled) return { ask: await roundOf().ask(connection.runtime, 'roots', settled.ask) };
    workspace = settled;
  } else if (tool.usesFiles) workspace = await connection.workspaceFor(extra);
  const settled = workspace ? { workspace } : {};
  const { confirmations } = connection;
  const asked = (kind: BilledKind) => confirmations.asks(kind, extra);
  if (!tool.confirm || !asked(tool.confirm.kind)) {
    // Nothing to ask: a billed call of a kind GATEWAY_CONFIRM names is then refused by billed().
    return { context: contextOf({ ...settled, approval: approvalOf(undefined, asked) }) };
  }
  const unasked = contextOf({ ...settled, approval: approvalOf(undefined) });
  const confirmation = await tool.confirm.call(args, unasked);
  if (confirmation && confirmation.call.kind !== tool.confirm.kind)
    throw new Error(
      `${tool.name} declared a ${tool.confirm.kind} confirmation and gave a ${confirmation.call.kind} call`,
    );
  if (!confirmation) return { context: contextOf({ ...settled, approval: approvalOf(undefined, asked) }) };
  const log = unasked.log;
  let answer: Answer;
  if (modern) {
    const inRound = await confirmations.inRound(confirmation, roundOf(), log);
    if ('ask' in inRound) {
      await refuseIfLimited(connection, confirmation, unasked.principal);
      return { ask: await roundOf().ask(connection.runtime, 'confirm', inRound.ask) };
    }
    answer = inRound;
  } else {
    await refuseIfLimited(connection, confirmation, unasked.principal);
    answer = await confirmations.ask(confirmation, extra, log);
  }
  if (!answer.approved) {
    if (answer.recorded !== false)
      await recordDeclined(connection, confirmation, unasked.principal, answer.reason, log);
    throw new UserError(answer.sentence);
  }
  return { context: contextOf({ ...settled, approval: approvalOf(confirmation.call.kind, asked) }) };
}

/**
 * The approval of one call: `approved` covers one billed call of its kind; a kind the person is
 * not asked about (`asked` false) needs none.
 */
function approvalOf(
  approved: BilledKind | undefined,
  asked: (kind: BilledKind) => boolean = () => true,
): Approval {
  let left = approved;
  return {
    allows: (kind) => !asked(kind) || left === kind,
    spend: (kind) => {
      if (left === kind) left = undefined;
    },
  };
}

/** A call its limits would refuse now is refused before anyone is asked to approve it. */
async function refuseIfLimited(
  connection: ClientConnection,
  confirmation: Confirmation,
  by: Principal,
): Promise<void> {
  const checked = await ledgerOf(connection)
    .check({ ...confirmation.call, by })
    .catch((error: unknown) => notSent(error));
  if (checked.status === 'limited') throw new UserError(checked.sentence);
}

async function recordDeclined(
  connection: ClientConnection,
  confirmation: Confirmation,
  by: Principal,
  reason: string,
  log: ToolContext['log'],
): Promise<void> {
  try {
    await ledgerOf(connection).decline({ ...confirmation.call, by }, reason);
  } catch (error) {
    log.warn(
      `ledger: the declined ${confirmation.call.kind} call was not recorded (${(error as Error).message})`,
    );
  }
}

function ledgerOf(connection: ClientConnection) {
  try {
    return connection.runtime.ledger();
  } catch (error) {
    return notSent(error);
  }
}
