import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ServiceError } from '../gateway/errors.js';

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

/** A problem with what the caller asked for (a path outside the roots, a file too big): shown as is. */
export class UserError extends Error {
  override name = 'UserError';
}

/** Turns any error thrown inside a tool into a failure result (anything unexpected is a bug). */
export function failureFrom(action: string, error: unknown, scrub: (t: string) => string): CallToolResult {
  if (error instanceof ServiceError) return failure(scrub(`${action} failed: ${error.describe()}`));
  if (error instanceof UserError) return failure(scrub(error.message));
  const message = error instanceof Error ? error.message : String(error);
  return failure(
    scrub(`${action} failed unexpectedly: ${message}. This is a bug in gateway-tools-mcp; please report it.`),
  );
}
