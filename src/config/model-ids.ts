// Model ids: the one pattern every setting and tool argument checks them against, and the fixed
// ids the server uses when nothing names another. It imports only zod, so the settings and the
// tools both read it without an import cycle and without loading anything more at start-up.
import { z } from 'zod';

/**
 * The default models that are fixed ids, by role. Every other role's default is discovered from
 * the gateway's lists (tools/models/default-models.ts); the gateway lists no video models.
 */
export const FIXED_DEFAULT_MODELS = { video: 'xai/grok-imagine-video' } as const;

/** One character of a model or provider id: `provider/model`, `tavily`, `openai/tts-1/alloy`. */
const ID_CHAR = '[A-Za-z0-9._:/@+-]';

/** An id of any length, for schemas that bound the length with a sentence of their own. */
export const MODEL_ID = new RegExp(`^${ID_CHAR}+$`);

/** What a tool says of an argument that is not an id. */
export function notAnIdSentence(field: string, example: string): string {
  return `${field} must be an id such as ${example}`;
}

export interface ModelIdArgument {
  /** The argument as the sentence names it: `model`, `provider`. */
  field: string;
  /** An id the sentence shows, e.g. `openai/gpt-4o-mini`. */
  example: string;
  /** The longest id taken. */
  max: number;
}

/**
 * A model or provider id as a tool argument: one sentence, naming the argument and an example,
 * for anything that is not an id of 1 to `max` characters (empty, too long, a space in it).
 */
export function modelIdSchema({ field, example, max }: ModelIdArgument): z.ZodString {
  return z
    .string()
    .trim()
    .regex(new RegExp(`^${ID_CHAR}{1,${max}}$`), notAnIdSentence(field, example));
}

/**
 * A model id as a setting. The start-up error names the setting, so the sentences name no
 * argument, and an empty or overlong value has a sentence of its own.
 */
export const modelIdSetting = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(MODEL_ID, 'must be a model id such as provider/model (no spaces)');
