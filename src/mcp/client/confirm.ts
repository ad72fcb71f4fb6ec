import { inputRequired, SdkErrorCode } from '@modelcontextprotocol/server';
import type { ConfirmKind } from '../../config/confirm-kinds.js';
import type { Logger } from '../../lib/log.js';
import { UserError } from '../../lib/user-error.js';
import type { Runtime } from '../../runtime.js';
import type { BilledCall } from '../../tools/define.js';
import type { GatewayServer, RequestExtra } from '../server.js';
import { type CallRound, callDigest, ROUND_STATE_SECONDS, roundStates } from './input-rounds.js';
import { requestClient } from './request-client.js';

/** How long a user may take to answer before the call is given up (nothing sent). */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;

/**
 * Asks the user, through the client's elicitation form, before a billed call is sent: opt-in per
 * kind (GATEWAY_CONFIRM). A client without elicitation (or a stateless HTTP server, which cannot
 * get the answer back) gets the call as without the setting. Declined, dismissed, unanswered or
 * failed: nothing is sent, and the refusal thrown (a UserError) says so.
 *
 * A 2025-era client is asked in the middle of the call (elicitation/create). A 2026-07-28 client is
 * asked in a round of its own (input-rounds.ts): the call is answered input_required with the form
 * and runs again with the user's answer, which approves only the call it was asked for (the tool,
 * its arguments and what it would send) and only once.
 */
export class Confirmations {
  constructor(
    private readonly server: GatewayServer,
    private readonly runtime: Runtime,
    private readonly kinds: readonly ConfirmKind[],
    private readonly canAsk: boolean,
  ) {}

  async ask(call: BilledCall, extra: RequestExtra, log: Logger, round?: CallRound): Promise<void> {
    const refusal = round
      ? this.roundRefusalFor(call, extra, log, round)
      : await this.refusalFor(call, extra, log);
    if (refusal !== null) throw new UserError(refusal);
  }

  /** A 2026-07-28 request's confirmation: null to go ahead, a refusal, or the call asks (throws). */
  private roundRefusalFor(
    call: BilledCall,
    extra: RequestExtra,
    log: Logger,
    round: CallRound,
  ): string | null {
    if (!this.kinds.includes(call.kind)) return null;
    if (requestClient(this.server, extra).capabilities?.elicitation === undefined) {
      log.debug(`${call.action}: not confirmed (the client cannot ask its user)`);
      return null;
    }
    const what = `${call.action} with ${call.model}`;
    const approval = callDigest(call.action, call.model, call.details);
    const answer = round.answer('confirm');
    if (answer.kind === 'elicit' && answer.action === 'accept' && round.state.asked === approval) {
      if (!roundStates(this.runtime).spend(round.state.nonce)) {
        log.warn(`${what}: a confirmation was sent again after its call; nothing was sent`);
        return `${what} was not sent: the confirmation the client sent was already used for this call, within the last ${ROUND_STATE_SECONDS / 60} minutes. Nothing was billed again.`;
      }
      log.info(`${what}: confirmed by the user`);
      return null;
    }
    if (answer.kind === 'elicit' && round.state.asked === approval) {
      const declined = answer.action === 'decline';
      log.info(`${what}: ${declined ? 'declined' : 'dismissed'} by the user; nothing was sent`);
      return declined ? declinedSentence(what) : dismissedSentence(what);
    }
    round.state.asked = approval;
    round.ask(
      'confirm',
      inputRequired.elicit({
        mode: 'form',
        message: message(call),
        requestedSchema: { type: 'object', properties: {} },
      }),
    );
  }

  /** Null to go ahead; otherwise the sentence that says why nothing was sent. */
  private async refusalFor(call: BilledCall, extra: RequestExtra, log: Logger): Promise<string | null> {
    if (!this.kinds.includes(call.kind)) return null;
    if (!this.canAsk || !this.server.getClientCapabilities()?.elicitation?.form) {
      log.debug(`${call.action}: not confirmed (the client cannot ask its user)`);
      return null;
    }
    const what = `${call.action} with ${call.model}`;
    let action: string;
    try {
      const answer = await this.server.elicitInput(
        { mode: 'form', message: message(call), requestedSchema: { type: 'object', properties: {} } },
        { relatedRequestId: extra.mcpReq.id, signal: extra.mcpReq.signal, timeout: CONFIRM_TIMEOUT_MS },
      );
      action = answer.action;
    } catch (error) {
      if ((error as { code?: unknown }).code === SdkErrorCode.RequestTimeout) {
        log.info(`${what}: no answer to the confirmation; nothing was sent`);
        return `The user did not answer the confirmation within ${CONFIRM_TIMEOUT_MS / 60_000} minutes: ${what} was not sent, and nothing was billed.`;
      }
      const why = error instanceof Error ? error.message : String(error);
      log.warn(`${what}: the confirmation failed (${why}); nothing was sent`);
      return `${what} was not sent: the client could not ask the user to confirm it (${why}). Nothing was billed.`;
    }
    if (action === 'accept') {
      log.info(`${what}: confirmed by the user`);
      return null;
    }
    log.info(`${what}: ${action === 'decline' ? 'declined' : 'dismissed'} by the user; nothing was sent`);
    return action === 'decline' ? declinedSentence(what) : dismissedSentence(what);
  }
}

const declinedSentence = (what: string) =>
  `The user declined: ${what} was not sent, and nothing was billed. Do not retry unless the user asks for it.`;
const dismissedSentence = (what: string) =>
  `The user dismissed the confirmation: ${what} was not sent, and nothing was billed. Ask the user before trying again.`;

function message(call: BilledCall): string {
  const lines = call.details
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([label, value]) => `${label}: ${value}`);
  return [`${call.action} with ${call.model}? The gateway bills it when it is sent.`, ...lines].join('\n');
}
