// Which speech or transcription model a call uses, checked against the gateway's /v1/models/tts
// and /v1/models/stt lists before anything billable is sent. The gateway itself only checks the
// provider, so a chat model on a speech-capable provider would be passed upstream and fail there.
// When the gateway has no such list (404), or listing fails, the call goes through unchecked and
// the service's own answer is reported.

import type { ModelEntry } from '../../gateway/endpoints/models.js';
import { ServiceError } from '../../gateway/errors.js';
import { UserError } from '../../lib/user-error.js';
import type { ToolContext } from '../define.js';
import { configuredModel, MODEL_SETTING } from '../models/default-models.js';
import { failureSentence } from '../results.js';
import {
  refusedSpeechHint,
  resolveSpeechId,
  type SpeechId,
  speechModels,
  voiceAloneHelp,
  voiceHelp,
} from './speech-ids.js';

export type AudioCapability = 'speech' | 'transcription';

export type ModelChoice =
  | { ok: true; model: string; notes: string[]; checked: boolean }
  | { ok: false; message: string };

/** A speech choice: the id to send, its model and voice; `checked` against the tts list. */
export type SpeechChoice = ({ ok: true; checked: boolean } & SpeechId) | { ok: false; message: string };

const LIST_OF = { speech: 'tts', transcription: 'stt' } as const;
const MAX_LISTED = 20;

/**
 * What only a failed speech or transcription call knows, added to its failure; any other failure
 * is thrown on, for the registry to answer like every tool's. A cancelled call says that nothing
 * was saved, whatever error the cancellation surfaced as. When the gateway refused a model that
 * could not be checked first (no list), the result says so: the agent then knows to try
 * list_models.
 */
export function audioFailure(
  action: 'Speech' | 'Transcription',
  error: unknown,
  ctx: ToolContext,
  choice: ModelChoice | SpeechChoice | undefined,
): never {
  if (ctx.signal.aborted)
    throw new UserError(`The ${action.toLowerCase()} call was cancelled; nothing was saved.`);
  const unchecked = choice?.ok && !choice.checked;
  if (!unchecked || !(error instanceof ServiceError) || error.kind !== 'http') throw error;
  const kind = action === 'Speech' ? 'tts' : 'stt';
  throw new UserError(
    `${failureSentence(error, ctx.runtime.scrub, action)} The model could not be checked first: the gateway has no /v1/models/${kind} list.`,
  );
}

/** The default model of a capability: the setting, else the first model the gateway lists. */
export async function defaultAudioModel(
  capability: AudioCapability,
  ctx: ToolContext,
): Promise<{ model: string; from: string } | null> {
  const configured = configuredModel(capability, ctx.runtime.config);
  if (configured) return { model: configured.id, from: configured.setting };
  const first = (await listed(capability, ctx)).list?.[0];
  return first ? { model: first.id, from: `the first model at /v1/models/${LIST_OF[capability]}` } : null;
}

/**
 * The speech id to send for `model` (+ `voice`): see speech-ids.ts. Refused, before anything is
 * sent, when neither the id nor its `provider/model` part is on the tts list.
 */
export async function chooseSpeechModel(
  model: string | undefined,
  voice: string | undefined,
  ctx: ToolContext,
): Promise<SpeechChoice> {
  const requested = await requestedModel('speech', model, ctx);
  if (!requested.ok) return requested;
  const ids = requested.list?.map((m) => m.id) ?? null;
  const resolved = resolveSpeechId(requested.model, voice, ids);
  if (resolved) return { ok: true, checked: ids !== null, ...resolved };
  const asked = voice ? `${requested.model} with voice ${voice}` : requested.model;
  const hint = await otherCapabilityHint('speech', requested.model, ctx);
  return refusal('speech', asked, requested, hint || refusedSpeechHint(requested.model, voice, ids ?? []));
}

export async function chooseTranscriptionModel(
  model: string | undefined,
  ctx: ToolContext,
): Promise<ModelChoice> {
  const requested = await requestedModel('transcription', model, ctx);
  if (!requested.ok) return requested;
  const { list } = requested;
  if (!list || list.some((m) => m.id === requested.model)) {
    return { ok: true, checked: list !== null, model: requested.model, notes: [] };
  }
  const hint = await otherCapabilityHint('transcription', requested.model, ctx);
  return refusal('transcription', requested.model, requested, hint);
}

/** The model asked for (or the default), where it came from, and the list to check it against. */
type Requested =
  | { ok: true; model: string; from: string; list: ModelEntry[] | null }
  | { ok: false; message: string };

async function requestedModel(
  capability: AudioCapability,
  model: string | undefined,
  ctx: ToolContext,
): Promise<Requested> {
  const chosen = model ? { model, from: '`model`' } : await defaultAudioModel(capability, ctx);
  if (chosen) return { ok: true, ...chosen, list: (await listed(capability, ctx)).list };
  const kind = LIST_OF[capability];
  const { list, error } = await listed(capability, ctx);
  const why = error
    ? `listing /v1/models/${kind} failed (${error})`
    : list
      ? `the gateway lists none at /v1/models/${kind}`
      : `the gateway has no /v1/models/${kind} list to pick one from`;
  return {
    ok: false,
    message:
      `No ${capability} model to use: none was given and ${why}. ` +
      `Pass \`model\` (see list_models) or set ${MODEL_SETTING[capability]}.`,
  };
}

interface Listing {
  list: ModelEntry[] | null;
  error?: string;
}

/** The capability's list from the shared catalog (cached); null when the gateway has none. */
async function listed(capability: AudioCapability, ctx: ToolContext): Promise<Listing> {
  try {
    return { list: await ctx.runtime.service.catalog.list(LIST_OF[capability], ctx.signal) };
  } catch (error) {
    // Another server at the gateway's address: said as such, not as a list that failed.
    if (error instanceof ServiceError && error.notGatewayLike) throw error;
    const message = error instanceof Error ? error.message : String(error);
    ctx.log.debug(`listing ${capability} models failed, not checking the model: ${message}`);
    return { list: null, error: ctx.runtime.scrub(message) };
  }
}

/** "It is a transcription model" when a refused speech model is on the other audio list. */
async function otherCapabilityHint(
  capability: AudioCapability,
  model: string,
  ctx: ToolContext,
): Promise<string> {
  const other: AudioCapability = capability === 'speech' ? 'transcription' : 'speech';
  const ids = (await listed(other, ctx)).list?.map((m) => m.id) ?? [];
  const isOther = other === 'speech' ? resolveSpeechId(model, undefined, ids) !== null : ids.includes(model);
  if (!isOther) return '';
  return ` It is a ${other} model: use ${ctx.toolName(other === 'speech' ? 'audio_speech' : 'audio_transcribe')} for it.`;
}

function refusal(
  capability: AudioCapability,
  asked: string,
  { from, list }: { from: string; list: readonly ModelEntry[] | null },
  hint: string,
): { ok: false; message: string } {
  const kind = LIST_OF[capability];
  const source = from === '`model`' ? '' : ` (from ${from})`;
  const head = `${asked}${source} is not a ${capability} model on this gateway (not in /v1/models/${kind}), so nothing was sent.${hint}`;
  if (!list?.length) {
    return {
      ok: false,
      message: `${head} The gateway lists no ${capability} models: add a ${capability} provider to the gateway.`,
    };
  }
  const ids = list.map((m) => m.id);
  const choices = capability === 'speech' ? speechModels(ids) : ids;
  const shown = choices.slice(0, MAX_LISTED).join(', ');
  const more =
    choices.length > MAX_LISTED ? `, and ${choices.length - MAX_LISTED} more (see list_models)` : '';
  const how =
    capability === 'speech'
      ? `Pass one as \`model\` and the voice as \`voice\`, or a full provider/model/voice id. ${alone(ids)}Voices: ${voiceHelp(ids)}.`
      : 'Pass one as `model`.';
  return { ok: false, message: `${head} ${capitalized(capability)} models: ${shown}${more}. ${how}` };
}

/** The `provider/voice` form for the listed providers that have one, as a sentence and a space. */
function alone(ids: readonly string[]): string {
  const help = voiceAloneHelp(ids);
  return help ? `${help} ` : '';
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
