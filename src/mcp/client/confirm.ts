// The person's approval of a billed call before it is sent (GATEWAY_CONFIRM, opt-in per kind),
// asked through the client's elicitation form. A client without elicitation (or a stateless HTTP
// server, which cannot get the answer back) gets the call as without the setting.
//
// A 2025-era client is asked with an elicitation/create request while the call waits. A
// 2026-07-28 client is asked in a round of its own (input-rounds.ts): the call is answered
// input_required with the form, and comes again with the answer, which approves only the call it
// was asked for (the tool, its arguments and what it would send) and only once.

import { inputRequired, SdkErrorCode } from '@modelcontextprotocol/server';
import type { BilledKind } from '../../config/billed-kinds.js';
import type { ConfirmKind } from '../../config/confirm-kinds.js';
import type { Logger } from '../../lib/log.js';
import type { Runtime } from '../../runtime.js';
import { notSent } from '../../tools/billing.js';
import type { Confirmation } from '../../tools/define.js';
import type { GatewayServer, RequestExtra } from '../server.js';
import { type CallRound, callDigest, ROUND_STATE_SECONDS, roundStates } from './input-rounds.js';
import { requestClient } from './request-client.js';

/** How long a user may take to answer before the call is given up (nothing sent). */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;

/**
 * What the person answered: approved, or not (and then `reason` for the ledger's declined row,
 * and `sentence` for the model; `recorded: false` when the answer was already recorded once).
 */
export type Answer =
  | { approved: true }
  | { approved: false; reason: string; sentence: string; recorded?: false };

/** The form a 2026-07-28 client is to show, the round's answer to the call. */
export type RoundAnswer = Answer | { ask: ReturnType<typeof inputRequired.elicit> };

export class Confirmations {
  constructor(
    private readonly server: GatewayServer,
    private readonly runtime: Runtime,
    private readonly kinds: readonly ConfirmKind[],
    private readonly canAsk: boolean,
  ) {}

  /** Whether a billed call of `kind`, on this request, is sent only once the person approves it. */
  asks(kind: BilledKind, extra: RequestExtra): boolean {
    if (!(this.kinds as readonly string[]).includes(kind)) return false;
    const client = requestClient(this.server, extra);
    if (client.modern) return client.capabilities?.elicitation !== undefined;
    return this.canAsk && this.server.getClientCapabilities()?.elicitation?.form !== undefined;
  }

  /** Asks a 2025-era client's user now, and waits for the answer. */
  async ask(confirmation: Confirmation, extra: RequestExtra, log: Logger): Promise<Answer> {
    const what = whatOf(confirmation);
    let action: string;
    try {
      const answer = await this.server.elicitInput(
        { mode: 'form', message: message(confirmation), requestedSchema: EMPTY_FORM },
        { relatedRequestId: extra.mcpReq.id, signal: extra.mcpReq.signal, timeout: CONFIRM_TIMEOUT_MS },
      );
      action = answer.action;
    } catch (error) {
      if ((error as { code?: unknown }).code === SdkErrorCode.RequestTimeout) {
        log.info(`${what}: no answer to the confirmation; nothing was sent`);
        return {
          approved: false,
          reason: 'not answered by the user',
          sentence: `The user did not answer the confirmation within ${CONFIRM_TIMEOUT_MS / 60_000} minutes: ${what} was not sent, and nothing was billed.`,
        };
      }
      const why = error instanceof Error ? error.message : String(error);
      log.warn(`${what}: the confirmation failed (${why}); nothing was sent`);
      return {
        approved: false,
        reason: 'the confirmation failed',
        sentence: `${what} was not sent: the client could not ask the user to confirm it (${why}). Nothing was billed.`,
      };
    }
    return answered(action, what, log);
  }

  /**
   * A 2026-07-28 client's answer, from this round: approved (once: the same approval sent again
   * is refused), declined or dismissed; or, not asked yet, the form to ask with.
   */
  async inRound(confirmation: Confirmation, round: CallRound, log: Logger): Promise<RoundAnswer> {
    const what = whatOf(confirmation);
    const approves = callDigest(what, confirmation.details);
    const answer = round.answer('confirm');
    if (answer.kind !== 'elicit' || round.state.asked !== approves) {
      round.state.asked = approves;
      return {
        ask: inputRequired.elicit({
          mode: 'form',
          message: message(confirmation),
          requestedSchema: EMPTY_FORM,
        }),
      };
    }
    const spent = await roundStates(this.runtime)
      .spend(round.state.nonce)
      .catch((error: unknown) => notSent(error));
    if (!spent) {
      log.warn(`${what}: an answer to a confirmation was sent again after its call; nothing was sent`);
      return {
        approved: false,
        recorded: false,
        reason: 'answer sent again',
        sentence: `${what} was not sent: the confirmation the client sent was already used for this call, within the last ${ROUND_STATE_SECONDS / 60} minutes. Nothing was billed again.`,
      };
    }
    return answered(answer.action, what, log);
  }
}

const EMPTY_FORM = { type: 'object' as const, properties: {} };

function answered(action: string, what: string, log: Logger): Answer {
  if (action === 'accept') {
    log.info(`${what}: confirmed by the user`);
    return { approved: true };
  }
  const declined = action === 'decline';
  log.info(`${what}: ${declined ? 'declined' : 'dismissed'} by the user; nothing was sent`);
  return declined
    ? {
        approved: false,
        reason: 'declined by the user',
        sentence: `The user declined: ${what} was not sent, and nothing was billed. Do not retry unless the user asks for it.`,
      }
    : {
        approved: false,
        reason: 'dismissed by the user',
        sentence: `The user dismissed the confirmation: ${what} was not sent, and nothing was billed. Ask the user before trying again.`,
      };
}

function whatOf(confirmation: Confirmation): string {
  return `${confirmation.action} with ${confirmation.call.model}`;
}

function message(confirmation: Confirmation): string {
  const lines = confirmation.details
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([label, value]) => `${label}: ${value}`);
  return [`${whatOf(confirmation)}? The gateway bills it when it is sent.`, ...lines].join('\n');
}
