import {
  createResponse,
  type ModelAnswer,
  type ResponsesRequest,
} from '../../gateway/endpoints/responses.js';
import { formatCount } from '../../lib/text.js';
import { billed } from '../billing.js';
import type { Confirmation, ToolContext } from '../define.js';

/** Progress while text streams in: at most one notification per interval (the first at once). */
const PROGRESS_INTERVAL_MS = 250;

/** A question to a model as the ledger sees it: the tool, and what was asked. */
export interface Question {
  tool: string;
  /** The prompt (its first words are kept in the ledger). */
  text: string;
}

/** What the person approves before a question is put to `model` (GATEWAY_CONFIRM=chat). */
export function questionConfirmation(
  question: Question,
  model: string,
  shown: Pick<Confirmation, 'action' | 'details'>,
): Confirmation {
  return { call: { kind: 'chat', model, ...question }, ...shown };
}

/**
 * Asks a model through the service as a billed call, recorded in the ledger: every question a
 * tool puts to a model goes through here. Relays progress notifications while the answer streams
 * (message: characters received so far) and aborts the stream when the call is cancelled.
 */
export function askBilled(
  ctx: ToolContext,
  question: Question,
  req: ResponsesRequest,
  startMessage: string,
): Promise<ModelAnswer> {
  return billed(ctx, { kind: 'chat', model: req.model, ...question }, async (send) => {
    // Progress values must increase: 0 for the start, then the character count (at least 1).
    await ctx.progress({ progress: 0, message: startMessage });
    let lastSent = 0;
    let lastChars = 0;
    const ask = () =>
      createResponse(ctx.runtime.service.client, req, {
        signal: ctx.signal,
        onDelta(_delta, textSoFar) {
          const now = Date.now();
          if (lastChars > 0 && now - lastSent < PROGRESS_INTERVAL_MS) return;
          lastSent = now;
          lastChars = textSoFar.length;
          void ctx.progress({
            progress: lastChars,
            message: `${formatCount(lastChars)} characters received from ${req.model}`,
          });
        },
      });
    return send(ask, (answer) => ({ amount: tokensOf(answer) }));
  });
}

/** The tokens an answer used, as the service reported them. */
function tokensOf(answer: ModelAnswer): number | undefined {
  const u = answer.usage;
  if (!u || (u.total_tokens ?? u.input_tokens ?? u.output_tokens) === null) return undefined;
  return u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0);
}

/** One line for the agent about an answer that stopped early, or '' when it is complete. */
export function incompleteNote(answer: ModelAnswer): string {
  if (answer.status !== 'incomplete') return '';
  if (answer.incompleteReason === 'max_output_tokens') {
    return 'The answer stopped at max_output_tokens; raise it for a longer answer.';
  }
  return `The answer may be cut: the service reported it incomplete${answer.incompleteReason ? ` (${answer.incompleteReason})` : ''}.`;
}

export function usageLine(answer: ModelAnswer): string {
  const u = answer.usage;
  if (!u) return answer.model;
  const count = (n: number | null) => (n === null ? '?' : formatCount(n));
  return `${answer.model} · ${count(u.input_tokens)} input + ${count(u.output_tokens)} output tokens`;
}
