import { z } from 'zod';
import { ServiceError } from '../service/errors.js';
import {
  CAPABILITIES,
  type Capability,
  type CapabilityModel,
  configuredModel,
  defaultModel,
  LIST_PATH,
  modelsFor,
} from './support/default-models.js';
import { failureFrom, success } from './support/results.js';
import { resolveSpeechId, voiceHelp } from './support/speech-ids.js';
import { defineTool, type ToolContext } from './types.js';

/** Ids shown per capability in the text; structuredContent always carries every model. */
const MAX_IDS_IN_TEXT = 100;

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
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(args, ctx) {
    const wanted = args.capability ? [args.capability] : [...CAPABILITIES];
    const sections = await Promise.all(wanted.map((c) => section(c, ctx)));
    // Every list failed (wrong key, service down): that is the answer, not a report of gaps.
    const listed = sections.filter((s) => s.capability !== 'video');
    const firstError = listed.find((s) => s.error)?.error;
    if (firstError && listed.every((s) => s.error)) {
      return failureFrom('List models', firstError, ctx.runtime.scrub);
    }
    const models = sections.flatMap((s) => s.models ?? []);
    const unavailable = sections
      .filter((s) => s.models === null)
      .map((s) => ({ capability: s.capability, reason: reasonOf(s, ctx) }));
    const defaults = Object.fromEntries(sections.map((s) => [s.capability, s.defaultId]));
    return success(formatSections(sections, ctx), { models, defaults, unavailable });
  },
});

async function section(capability: Capability, ctx: ToolContext): Promise<Section> {
  try {
    const [models, choice] = await Promise.all([
      modelsFor(capability, ctx.runtime, ctx.signal),
      defaultModel(capability, ctx.runtime, ctx.signal),
    ]);
    return { capability, models, defaultId: choice.id, error: null };
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    const configured = configuredModel(capability, ctx.runtime.config);
    return { capability, models: null, defaultId: configured?.id ?? null, error };
  }
}

function reasonOf(s: Section, ctx: ToolContext): string {
  if (s.error) return ctx.runtime.scrub(s.error.describe());
  return `the gateway has no list (${LIST_PATH[s.capability]} answered 404)`;
}

/** Which tool takes each capability's ids, under the configured tool prefix. */
function heading(capability: Capability, tool: (name: string) => string): string {
  switch (capability) {
    case 'chat':
      return `chat (${tool('ask_model')} \`model\`)`;
    case 'search':
      return `search (${tool('web_search')} \`provider\`, bare ids)`;
    case 'fetch':
      return `fetch (${tool('web_fetch')} \`provider\`, bare ids)`;
    case 'speech':
      return `speech (${tool('audio_speech')} \`model\` as provider/model with \`voice\`, or provider/model/voice)`;
    case 'transcription':
      return `transcription (${tool('audio_transcribe')} \`model\`)`;
    case 'video':
      return `video (${tool('video_generate')} \`model\`; the gateway has no list, these are the known ids)`;
  }
}

function formatSections(sections: Section[], ctx: ToolContext): string {
  const lines: string[] = [];
  for (const s of sections) {
    const models = s.models;
    const count = models ? ` — ${models.length}` : '';
    lines.push(`## ${heading(s.capability, ctx.toolName)}${count}`);
    if (!models) lines.push(`Not available: ${reasonOf(s, ctx)}`);
    else if (models.length === 0) lines.push('None listed.');
    else {
      const ids = models.map((m) => m.id);
      const shown = models.slice(0, MAX_IDS_IN_TEXT).map((m) => {
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
      const more = models.length > MAX_IDS_IN_TEXT ? `, … and ${models.length - MAX_IDS_IN_TEXT} more` : '';
      lines.push(`${shown.join(', ')}${more}`);
      if (s.capability === 'speech') lines.push(`Voices: ${voiceHelp(ids)}.`);
    }
    if (s.defaultId && !models?.some((m) => m.id === s.defaultId))
      lines.push(`Default: ${s.defaultId} (configured)`);
    lines.push('');
  }
  return lines.join('\n').trim();
}

/** `voice alloy` for the default speech model, or whose default voice applies. */
function defaultVoiceMark(id: string, ids: readonly string[]): string {
  const resolved = resolveSpeechId(id, undefined, ids);
  if (!resolved) return '';
  if (resolved.voice === null) return "the provider's default voice";
  return resolved.id === id ? '' : `voice ${resolved.voice}`;
}
