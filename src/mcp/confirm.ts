import { SdkErrorCode } from '@modelcontextprotocol/server';
import type { ConfirmKind } from '../config/confirm-kinds.js';
import type { Logger } from '../lib/log.js';
import { UserError } from '../lib/user-error.js';
import type { BilledCall } from '../tools/define.js';
import type { GatewayServer, RequestExtra } from './server.js';

/** How long a user may take to answer before the call is given up (nothing sent). */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;

/**
 * Asks the user, through the client's elicitation form, before a billed call is sent: opt-in per
 * kind (GATEWAY_CONFIRM). A client without elicitation (or a stateless HTTP server, which cannot
 * get the answer back) gets the call as without the setting. Declined, dismissed, unanswered or
 * failed: nothing is sent, and the refusal thrown (a UserError) says so.
 */
export class Confirmations {
  constructor(
    private readonly server: GatewayServer,
    private readonly kinds: readonly ConfirmKind[],
    private readonly canAsk: boolean,
  ) {}

  async ask(call: BilledCall, extra: RequestExtra, log: Logger): Promise<void> {
    const refusal = await this.refusalFor(call, extra, log);
    if (refusal !== null) throw new UserError(refusal);
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
    return action === 'decline'
      ? `The user declined: ${what} was not sent, and nothing was billed. Do not retry unless the user asks for it.`
      : `The user dismissed the confirmation: ${what} was not sent, and nothing was billed. Ask the user before trying again.`;
  }
}

function message(call: BilledCall): string {
  const lines = call.details
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([label, value]) => `${label}: ${value}`);
  return [`${call.action} with ${call.model}? The gateway bills it when it is sent.`, ...lines].join('\n');
}
