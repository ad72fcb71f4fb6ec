import { z } from 'zod';
import { modelIdSchema } from '../../config/model-ids.js';
import { excerpt } from '../../lib/text.js';
import { UserError } from '../../lib/user-error.js';
import { ANNOTATIONS, defineTool, type ToolContext } from '../define.js';
import { capped, RESULT_BUDGET } from '../result-budget.js';
import { nextStep, success } from '../results.js';
import { askBilled, incompleteNote, questionConfirmation, usageLine } from './ask.js';
import { defaultModel, MODEL_SETTING } from './default-models.js';

export const MAX_PROMPT_CHARS = 200_000;

const modelId = modelIdSchema({ field: 'model', example: 'openai/gpt-4o-mini (see list_models)', max: 200 });

const inputSchema = {
  prompt: z
    .string()
    .max(MAX_PROMPT_CHARS, `prompt must be at most ${MAX_PROMPT_CHARS} characters`)
    .refine((p) => p.trim().length > 0, 'prompt must not be empty')
    .describe('Everything the model needs: it sees nothing else'),
  model: modelId.optional().describe('e.g. openai/gpt-4o-mini'),
  instructions: z
    .string()
    .max(20_000, 'instructions must be at most 20000 characters')
    .optional()
    .describe('Role, tone, output format'),
  max_output_tokens: z.number().int().min(16).max(100_000).optional(),
  reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']).optional(),
};

const usageSchema = z
  .object({
    input_tokens: z.number().nullable(),
    output_tokens: z.number().nullable(),
    total_tokens: z.number().nullable(),
  })
  .nullable();

const outputSchema = {
  text: z.string(),
  model: z.string(),
  usage: usageSchema,
  next: nextStep,
};

export const askModel = defineTool({
  name: 'ask_model',
  group: 'chat',
  title: 'Ask another model',
  action: 'Ask model',
  description:
    'Ask another model through the gateway (billed per token): its text and token usage. ' +
    'Models: list_models chat.',
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.answer,
  confirm: {
    kind: 'chat',
    async call(args, ctx) {
      const model = await modelOf(args.model, ctx);
      if (!model) return undefined;
      return questionConfirmation({ tool: 'ask_model', text: args.prompt }, model, {
        action: 'Ask a model',
        details: [
          ['Prompt', excerpt(args.prompt)],
          ['Instructions', args.instructions && excerpt(args.instructions, 120)],
          ['Most output tokens', args.max_output_tokens],
          ['Reasoning effort', args.reasoning_effort],
        ],
      });
    },
  },
  async run(args, ctx) {
    const model = await modelOf(args.model, ctx);
    if (!model) {
      throw new UserError(
        `No chat model to ask: the service lists none at /v1/models. Pass \`model\` (see ${ctx.toolName('list_models')}) ` +
          `or set ${MODEL_SETTING.chat}.`,
      );
    }
    const answer = await askBilled(
      ctx,
      { tool: 'ask_model', text: args.prompt },
      {
        model,
        input: args.prompt,
        instructions: args.instructions,
        max_output_tokens: args.max_output_tokens,
        reasoning: args.reasoning_effort ? { effort: args.reasoning_effort } : undefined,
      },
      `asking ${model}`,
    );
    const note = incompleteNote(answer);
    if (!answer.text.trim()) {
      throw new UserError(
        `${model} returned no text${note ? ` (${note.replace(/\.$/, '')})` : ' (streamed and non-streamed)'}. ` +
          `Retry, or ask another model (see ${ctx.toolName('list_models')}).`,
      );
    }
    // The answer is bounded like any result field; a cut says so, in both forms.
    const text = capped(answer.text, RESULT_BUDGET.modelText);
    const cut = text.length < answer.text.length ? 'Ask for a shorter answer to get it whole.' : '';
    const next = [note, cut].filter(Boolean).join(' ');
    const answered = { ...answer, model: capped(answer.model, RESULT_BUDGET.name) };
    return success(`${text}${next ? `\n\n[${next}]` : ''}\n\n— ${usageLine(answered)}`, {
      text,
      model: answered.model,
      usage: answer.usage,
      ...(next ? { next } : {}),
    });
  },
});

/** The model asked: the one named, else the gateway's default chat model (undefined: none). */
async function modelOf(named: string | undefined, ctx: ToolContext): Promise<string | undefined> {
  return named ?? (await defaultModel('chat', ctx.runtime, ctx.signal)).id ?? undefined;
}
