// Every billed call goes through billed(), so that each is in the ledger of billed calls (see
// src/ledger/) before its request leaves: begun (GATEWAY_LIMITS checked, an identical recent call
// found), sent once, and ended with what became of it. Where GATEWAY_CONFIRM asks, the person has
// approved the call before the tool ran (the registry asks, from the tool's `confirm`); a call
// begun without the approval its kind needs is a bug, refused before anything is recorded. A tool
// says what it sends and how to read the answer; the bookkeeping is here.

import { z } from 'zod';
import { ServiceError } from '../gateway/errors.js';
import {
  type CallEnd,
  type Crossing,
  crossingSentence,
  type Ledger,
  type LedgerCall,
  LedgerUnavailable,
} from '../ledger/ledger.js';
import { UserError } from '../lib/user-error.js';
import type { BillableCall, ToolContext } from './define.js';
import { MaybeBilled } from './results.js';
import { budgetEvent, budgetWebhookOf } from './usage/budget-webhook.js';

export type { BillableCall, LedgerCall };

/**
 * The argument of the calls with a duplicate guard (video submits, speech). Its name says what it
 * does, and a result answered from an earlier call says when to pass it: no description, so the
 * four tools that take it stay within the catalog's budget.
 */
export const ALLOW_DUPLICATE = z.boolean().optional();

/**
 * Sends the request once and ends the call in the ledger: accepted (with what `accepted` reads
 * from the answer), or what the failure means for billing. Whatever the request throws is thrown on.
 */
export type Send = <T>(
  request: () => Promise<T>,
  accepted?: (answer: T) => Omit<CallEnd, 'outcome'>,
) => Promise<T>;

/**
 * Runs a billed call: begins it and hands `run` the one way to send it. Over a limit, or without
 * a ledger, nothing is sent and the refusal is thrown. An identical call within
 * the duplicate window goes to `duplicate` instead (for the calls whose answers can be given
 * again); without `duplicate` the guard does not apply. A call `run` never sends is ended as not sent.
 */
export async function billed<R>(
  ctx: ToolContext,
  call: BillableCall,
  run: (send: Send) => Promise<R>,
  duplicate?: (earlier: LedgerCall) => Promise<R>,
): Promise<R> {
  if (!ctx.approval.allows(call.kind)) {
    throw new Error(`a ${call.kind} call was about to be sent without the approval GATEWAY_CONFIRM asks for`);
  }
  let ledger: Ledger;
  try {
    ledger = ctx.runtime.ledger();
  } catch (error) {
    notSent(error);
  }
  const begun = await ledger
    .begin({
      ...call,
      by: ctx.principal,
      inputs: { ...call.inputs, gateway: gatewayOf(ctx) },
      allowDuplicate: call.allowDuplicate || !duplicate,
    })
    .catch(notSent);
  if (begun.status === 'limited') throw new UserError(begun.sentence);
  if (begun.status === 'duplicate') return (duplicate as NonNullable<typeof duplicate>)(begun.earlier);
  tellCrossings(ctx, begun.crossed, begun.id);
  ctx.approval.spend(call.kind);
  let ended = false;
  const end = async (result: CallEnd) => {
    if (ended) return;
    ended = true;
    await ledger.end(begun.id, result);
  };
  const send: Send = async (request, accepted) => {
    try {
      const answer = await request();
      await end({ outcome: 'accepted', ...accepted?.(answer) });
      return answer;
    } catch (error) {
      await end(failedCall(error));
      // Not sent again (the client retries a billed call only when it surely was not taken):
      // whether to pay for another try is the model's choice, and the failure says so.
      if (error instanceof ServiceError && classifyBilledFailure(error) === 'ambiguous')
        throw new MaybeBilled(error);
      throw error;
    }
  };
  try {
    return await run(send);
  } finally {
    await end({ outcome: 'declined', reason: 'not sent' });
  }
}

/**
 * The limits a call takes past 80 % or 100 %: one line in its result for each (the higher share
 * crossed), and each crossing to the budget webhook, in the background.
 */
function tellCrossings(ctx: ToolContext, crossed: readonly Crossing[], callId: string): void {
  const highest = new Map(crossed.map((c) => [c.limit, c]));
  for (const c of highest.values()) ctx.note?.(crossingSentence(c));
  const webhook = budgetWebhookOf(ctx.runtime);
  for (const c of webhook ? crossed : []) webhook?.send(budgetEvent(c, ctx.principal.id, callId, Date.now()));
}

/**
 * The gateway a call goes to, without credentials: the same purchase from another gateway is
 * another purchase (and its earlier job is not this gateway's to answer with).
 */
function gatewayOf(ctx: ToolContext): string {
  const url = new URL(ctx.runtime.config.baseUrl);
  return `${url.host}${url.pathname}`;
}

/** A billed call that is one request: billed() with nothing between beginning and sending. */
export function sendBilled<T>(
  ctx: ToolContext,
  call: BillableCall,
  request: () => Promise<T>,
  accepted?: (answer: T) => Omit<CallEnd, 'outcome'>,
): Promise<T> {
  return billed(ctx, call, (send) => send(request, accepted));
}

/** The ledger, for reading; a ledger that cannot be opened is said as a refusal, not as a bug. */
export function openLedger(ctx: ToolContext): Ledger {
  try {
    return ctx.runtime.ledger();
  } catch (error) {
    throw error instanceof LedgerUnavailable ? new UserError(error.message) : error;
  }
}

/** A call the ledger cannot record is not sent: the refusal says so. */
export function notSent(error: unknown): never {
  if (!(error instanceof LedgerUnavailable)) throw error;
  const { message } = error;
  throw new UserError(
    message.startsWith('Not sent')
      ? message
      : `Not sent, and nothing billed: ${message.charAt(0).toLowerCase()}${message.slice(1)}`,
  );
}

/**
 * What a failed billed call means for billing. `refused`: the service answered with a clear
 * refusal (bad request, auth, credit, quota, rate limit), so nothing was done or charged.
 * Also refused: turned away by the gateway before any provider (no account free).
 * `not-sent`: the request provably never left this process. `ambiguous`: the request may have
 * reached a provider (timeout, reset, 5xx, 408, an unreadable 2xx), so it may have been charged;
 * sending it again could charge twice. `cancelled`: the caller gave up.
 */
export type BilledFailure = 'refused' | 'not-sent' | 'ambiguous' | 'cancelled';

const AMBIGUOUS_4XX = new Set([408, 409, 425]);

export function classifyBilledFailure(error: ServiceError): BilledFailure {
  if (error.kind === 'aborted') return 'cancelled';
  if (!error.maybeDelivered) return 'not-sent';
  if (error.turnedAway()) return 'refused';
  if (error.kind !== 'http' || error.status === undefined) return 'ambiguous';
  if (error.status >= 400 && error.status < 500 && !AMBIGUOUS_4XX.has(error.status)) return 'refused';
  return 'ambiguous';
}

/** What a failed send means for billing: refused (nothing billed) or unknown (it may have been). */
function failedCall(error: unknown): CallEnd {
  if (!(error instanceof ServiceError)) return { outcome: 'unknown', reason: 'failed after sending' };
  switch (classifyBilledFailure(error)) {
    case 'refused':
      return { outcome: 'refused', reason: `HTTP ${error.status}` };
    case 'not-sent':
      return { outcome: 'refused', reason: 'never reached the gateway' };
    case 'cancelled':
      return { outcome: 'unknown', reason: 'cancelled after sending' };
    case 'ambiguous':
      return {
        outcome: 'unknown',
        reason: `${error.kind}${error.status ? ` ${error.status}` : ''} after sending`,
      };
  }
}

/** A ledger time as a clock time: `14:05 UTC`. */
export function clockTime(iso: string): string {
  return `${iso.slice(11, 16)} UTC`;
}

/** Records a video job's state as a poll saw it, for video_status without a job_id. Never throws. */
export async function noteJobStatus(ctx: ToolContext, jobId: string, status: string): Promise<void> {
  try {
    await ctx.runtime.ledger().noteJobStatus(jobId, status);
  } catch (error) {
    ctx.log.debug(`ledger: the status of job ${jobId} was not recorded (${(error as Error).message})`);
  }
}
