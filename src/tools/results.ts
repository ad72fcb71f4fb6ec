import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ServiceError } from '../gateway/errors.js';
import { UserError } from '../lib/user-error.js';

type Content = CallToolResult['content'][number];

/**
 * The next step in a result's structured content, in the words its text uses (how to follow the
 * job, continue the page, what to change): some clients hand their model only the structured
 * content. Left out when there is nothing to say.
 */
export const nextStep = z.string().optional();

/**
 * A successful result, in two complete forms: compact markdown, and structured content that
 * carries the same facts and next step (clients pass their model one, the other or both; see
 * result-view.ts).
 */
export function success(
  text: string,
  structured: Record<string, unknown>,
  extra: Content[] = [],
): CallToolResult {
  return { content: [{ type: 'text', text }, ...extra], structuredContent: structured };
}

/** A failure the model can act on: one or two sentences, no stack, no secrets. */
export function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * A step of a call whose failure the result names instead of the tool's action, because the
 * step's name says something the model needs ("Reading the starting video (nothing was
 * submitted)"). Thrown by a tool with the step's error as its cause.
 */
export class FailedStep extends Error {
  override name = 'FailedStep';
  constructor(
    readonly step: string,
    override readonly cause: unknown,
  ) {
    super(`${step} failed`, { cause });
  }
}

/**
 * A billed call that failed after it may have reached a provider (a 502 or 504 from the gateway,
 * a connection lost after sending): it may have been billed, so it is not sent again unasked.
 */
export class MaybeBilled extends Error {
  override name = 'MaybeBilled';
  constructor(override readonly cause: ServiceError) {
    super(cause.message, { cause });
  }
}

/** An error no tool means to throw: neither a service's failure nor a refusal. */
export function isBug(error: unknown): boolean {
  const cause = error instanceof FailedStep || error instanceof MaybeBilled ? error.cause : error;
  return !(cause instanceof ServiceError || cause instanceof UserError);
}

/**
 * What went wrong, in the words every failure uses, scrubbed. With the action that failed it is
 * the whole answer ("<action> failed: …", an unexpected error called a bug); without, a sentence
 * to say inside a longer one. A refusal is said as it is.
 */
export function failureSentence(error: unknown, scrub: (text: string) => string, action?: string): string {
  if (error instanceof FailedStep) return failureSentence(error.cause, scrub, error.step);
  if (error instanceof MaybeBilled)
    return `${failureSentence(error.cause, scrub, action)} It may have been billed: the gateway may have passed it to the provider before failing, so it was not sent again. Calling again is your choice, and may be billed again.`;
  if (error instanceof ServiceError) {
    return scrub(action ? `${action} failed: ${error.describe()}` : error.describe());
  }
  if (error instanceof UserError) return scrub(error.message);
  const message = error instanceof Error ? error.message : String(error);
  return scrub(
    action
      ? `${action} failed unexpectedly: ${message}. This is a bug in gateway-tools-mcp; please report it.`
      : `unexpected error: ${message}.`,
  );
}
