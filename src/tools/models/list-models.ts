import { z } from 'zod';
import { ServiceError } from '../../gateway/errors.js';
import { resolveSpeechId, voiceAloneHelp, voiceHelp } from '../audio/speech-ids.js';
import { ANNOTATIONS, defineTool, type ToolContext } from '../define.js';
import { capped, cappedOrNull, RESULT_BUDGET } from '../result-budget.js';
import { nextStep, success } from '../results.js';
import {
  CAPABILITIES,
  type Capability,
  type CapabilityModel,
  configuredModel,
  defaultModel,
  listPath,
  modelsFor,
} from './default-models.js';

const inputSchema = {
  capability: z.enum(CAPABILITIES as [Capability, ...Capability[]]).optional(),
};

const outputSchema = {
  models: z.array(
    z.object({
      id: z.string(),
      capability: z.enum(CAPABILITIES as [Capability, ...Capability[]]),
      owned_by: z.string().nullable(),
    }),
  ),
  /** Per capability shown: the model the tools use when none is given (null: none). */
  defaults: z.record(z.string(), z.string().nullable()),
  /** Capabilities whose list the service does not have or could not give. */
  unavailable: z.array(z.object({ capability: z.string(), reason: z.string() })),
  /** How voices are given, and how many models were left out. */
  next: nextStep,
};

interface Section {
  capability: Capability;
  models: CapabilityModel[] | null;
  defaultId: string | null;
  error: ServiceError | null;
}

export const listModels = defineTool({
  name: 'list_models',
  group: 'models',
  title: 'List models',
  description:
    "List the gateway's models by capability and each tool's default. Free. Use it before passing model " +
    'or provider to a tool.',
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.lookup,
  async run(args, ctx) {
    const wanted = args.capability ? [args.capability] : [...CAPABILITIES];
    const sections = await Promise.all(wanted.map((c) => section(c, ctx)));
    // Every list failed (wrong key, service down): that is the answer, not a report of gaps.
    const listed = sections.filter((s) => s.capability !== 'video');
    const firstError = listed.find((s) => s.error)?.error;
    if (firstError && listed.every((s) => s.error)) throw firstError;
    const models = sections.flatMap((s) => (s.models ?? []).slice(0, RESULT_BUDGET.models));
    const unavailable = sections
      .filter((s) => s.models === null)
      .map((s) => ({ capability: s.capability, reason: reasonOf(s, ctx) }));
    const defaults = Object.fromEntries(sections.map((s) => [s.capability, s.defaultId]));
    const next = nextOf(sections);
    return success(formatSections(sections, ctx, next), {
      models,
      defaults,
      unavailable,
      ...(next ? { next } : {}),
    });
  },
});

async function section(capability: Capability, ctx: ToolContext): Promise<Section> {
  try {
    const [models, choice] = await Promise.all([
      modelsFor(capability, ctx.runtime, ctx.signal),
      defaultModel(capability, ctx.runtime, ctx.signal),
    ]);
    // Ids and owners come from the gateway: each is bounded, like every result field.
    const bounded = models?.map((m) => ({
      ...m,
      id: capped(m.id, RESULT_BUDGET.name),
      owned_by: cappedOrNull(m.owned_by, RESULT_BUDGET.name),
    }));
    return {
      capability,
      models: bounded ?? null,
      defaultId: cappedOrNull(choice.id, RESULT_BUDGET.name),
      error: null,
    };
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    const configured = configuredModel(capability, ctx.runtime.config);
    return { capability, models: null, defaultId: configured?.id ?? null, error };
  }
}

function reasonOf(s: Section, ctx: ToolContext): string {
  if (s.error) return capped(ctx.runtime.scrub(s.error.describe()), RESULT_BUDGET.answer);
  return `the gateway has no list (${listPath(s.capability)} answered 404)`;
}

/**
 * Each capability's heading: which tool takes its ids, under the configured tool prefix.
 * web_search and web_fetch are "this server's": some clients have tools of their own by those names.
 */
const HEADING: Record<Capability, (tool: (name: string) => string) => string> = {
  chat: (tool) => `chat (${tool('ask_model')} \`model\`)`,
  search: (tool) => `search (this server's ${tool('web_search')} \`provider\`, bare ids)`,
  fetch: (tool) => `fetch (this server's ${tool('web_fetch')} \`provider\`, bare ids)`,
  speech: (tool) =>
    `speech (${tool('audio_speech')} \`model\` as provider/model with \`voice\`, or provider/model/voice)`,
  transcription: (tool) => `transcription (${tool('audio_transcribe')} \`model\`)`,
  video: (tool) =>
    `video (${tool('video_generate')} \`model\`; the gateway has no list, these are the known ids)`,
};

/** How voices are given (when speech is listed), and which lists were cut to the budget. */
function nextOf(sections: Section[]): string {
  const notes: string[] = [];
  const speech = sections.find((s) => s.capability === 'speech' && s.models?.length);
  const speechIds = speech?.models?.map((m) => m.id);
  if (speechIds) notes.push(`Voices: ${voiceHelp(speechIds)}.`, voiceAloneHelp(speechIds));
  for (const s of sections) {
    const more = (s.models?.length ?? 0) - RESULT_BUDGET.models;
    if (more > 0) notes.push(`${s.capability}: ${more} more models not listed.`);
  }
  return notes.filter(Boolean).join(' ');
}

function formatSections(sections: Section[], ctx: ToolContext, next: string): string {
  const lines: string[] = [];
  for (const s of sections) {
    const models = s.models;
    const count = models ? ` — ${models.length}` : '';
    lines.push(`## ${HEADING[s.capability](ctx.toolName)}${count}`);
    if (!models) lines.push(`Not available: ${reasonOf(s, ctx)}`);
    else if (models.length === 0) lines.push('None listed.');
    else {
      const ids = models.map((m) => m.id);
      const shown = models.slice(0, RESULT_BUDGET.models).map((m) => {
        const isDefault = m.id === s.defaultId;
        const marks = [
          m.owned_by === 'combo' ? 'combo' : '',
          isDefault ? 'default' : '',
          isDefault && s.capability === 'speech' ? defaultVoiceMark(m.id, ids) : '',
        ]
          .filter(Boolean)
          .join(', ');
        return marks ? `${m.id} (${marks})` : m.id;
      });
      lines.push(shown.join(', '));
    }
    if (s.defaultId && !models?.some((m) => m.id === s.defaultId))
      lines.push(`Default: ${s.defaultId} (configured)`);
    lines.push('');
  }
  if (next) lines.push(next);
  return lines.join('\n').trim();
}

/** `voice alloy` for the default speech model, or whose default voice applies. */
function defaultVoiceMark(id: string, ids: readonly string[]): string {
  const resolved = resolveSpeechId(id, undefined, ids);
  if (!resolved) return '';
  if (resolved.voice === null) return "the provider's default voice";
  return resolved.id === id ? '' : `voice ${resolved.voice}`;
}
