import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../../service/errors.js';
import type { ModelEntry } from '../../service/models.js';
import type { ToolContext } from '../types.js';
import { configuredModel, MODEL_SETTING } from './default-models.js';
import { failure, failureFrom } from './results.js';

/**
 * Which speech or transcription model a call uses, checked against the gateway's /v1/models/tts
 * and /v1/models/stt lists before anything billable is sent. The gateway itself only checks the
 * provider, so a chat model on a speech-capable provider would be passed upstream and fail there.
 * When the gateway has no such list (404), or listing fails, the call goes through unchecked and
 * the service's own answer is reported.
 */
export type AudioCapability = 'speech' | 'transcription';

export type ModelChoice =
  | { ok: true; model: string; notes: string[]; checked: boolean }
  | { ok: false; message: string };

const LIST_OF = { speech: 'tts', transcription: 'stt' } as const;
const MAX_LISTED = 20;

/**
 * A failed speech or transcription call as a result. When the gateway refused a model that could
 * not be checked first (no list), the result says so: the agent then knows to try list_models.
 */
export function audioFailure(
  action: 'Speech' | 'Transcription',
  error: unknown,
  ctx: ToolContext,
  choice: ModelChoice | undefined,
): CallToolResult {
  if (ctx.signal.aborted)
    return failure(`The ${action.toLowerCase()} call was cancelled; nothing was saved.`);
  const result = failureFrom(action, error, ctx.runtime.scrub);
  if (choice?.ok && !choice.checked && error instanceof ServiceError && error.kind === 'http') {
    const kind = action === 'Speech' ? 'tts' : 'stt';
    result.content.push({
      type: 'text',
      text: `The model could not be checked first: the gateway has no /v1/models/${kind} list.`,
    });
  }
  return result;
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

export async function chooseSpeechModel(
  model: string | undefined,
  voice: string | undefined,
  ctx: ToolContext,
): Promise<ModelChoice> {
  const requested = await requestedModel('speech', model, ctx);
  if (!requested.ok) return requested;
  const { list } = await listed('speech', ctx);
  if (!list) return { ok: true, checked: false, ...composeUnchecked(requested.model, voice) };
  const match = matchSpeechModel(
    requested.model,
    voice,
    list.map((m) => m.id),
  );
  if (match) return { ok: true, checked: true, ...match };
  const asked = voice ? `${requested.model} with voice ${voice}` : requested.model;
  return refusal(
    'speech',
    asked,
    requested.from,
    list,
    await otherCapabilityHint('speech', requested.model, ctx),
  );
}

export async function chooseTranscriptionModel(
  model: string | undefined,
  ctx: ToolContext,
): Promise<ModelChoice> {
  const requested = await requestedModel('transcription', model, ctx);
  if (!requested.ok) return requested;
  const { list } = await listed('transcription', ctx);
  if (!list) return { ok: true, checked: false, model: requested.model, notes: [] };
  if (list.some((m) => m.id === requested.model)) {
    return { ok: true, checked: true, model: requested.model, notes: [] };
  }
  const hint = await otherCapabilityHint('transcription', requested.model, ctx);
  return refusal('transcription', requested.model, requested.from, list, hint);
}

/**
 * The voice is the last segment of a speech model id (`openai/tts-1/alloy`, `edge-tts/en-US-AriaNeural`).
 * Accepted: a listed id; `provider/model` that is the stem of listed ids (plus `voice`, or the
 * first listed voice); a sibling voice of a listed id. A separate `voice` replaces the id's own.
 */
export function matchSpeechModel(
  requested: string,
  voice: string | undefined,
  listedIds: readonly string[],
): { model: string; notes: string[] } | null {
  const withStem = listedIds.filter((id) => stemOf(id) === requested);
  if (withStem.length > 0) {
    if (voice) return { model: `${requested}/${voice}`, notes: [] };
    const first = withStem[0]!;
    return {
      model: first,
      notes: [`No voice given: using ${first}, the first listed voice of ${requested}.`],
    };
  }
  const stem = stemOf(requested);
  const known = listedIds.includes(requested) || (stem !== '' && listedIds.some((id) => stemOf(id) === stem));
  if (!known) return null;
  return replaceVoice(requested, voice);
}

/** Without a list: append the voice to `provider/model`, or replace the voice of a 3-segment id. */
function composeUnchecked(requested: string, voice: string | undefined): { model: string; notes: string[] } {
  if (!voice) return { model: requested, notes: [] };
  if (requested.split('/').length >= 3) return replaceVoice(requested, voice);
  return { model: `${requested}/${voice}`, notes: [] };
}

function replaceVoice(model: string, voice: string | undefined): { model: string; notes: string[] } {
  const own = lastSegment(model);
  if (!voice || own === voice) return { model, notes: [] };
  return {
    model: `${stemOf(model)}/${voice}`,
    notes: [`The voice ${voice} replaces ${own} from the model id.`],
  };
}

type Requested = { ok: true; model: string; from: string } | { ok: false; message: string };

async function requestedModel(
  capability: AudioCapability,
  model: string | undefined,
  ctx: ToolContext,
): Promise<Requested> {
  if (model) return { ok: true, model, from: '`model`' };
  const fallback = await defaultAudioModel(capability, ctx);
  if (fallback) return { ok: true, model: fallback.model, from: fallback.from };
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
    const message = error instanceof Error ? error.message : String(error);
    ctx.runtime.log.debug(`listing ${capability} models failed, not checking the model: ${message}`);
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
  const isOther = other === 'speech' ? matchSpeechModel(model, undefined, ids) !== null : ids.includes(model);
  if (!isOther) return '';
  return ` It is a ${other} model: use ${ctx.toolName(other === 'speech' ? 'audio_speech' : 'audio_transcribe')} for it.`;
}

function refusal(
  capability: AudioCapability,
  asked: string,
  from: string,
  list: readonly ModelEntry[],
  hint: string,
): ModelChoice {
  const kind = LIST_OF[capability];
  const source = from === '`model`' ? '' : ` (from ${from})`;
  const head = `${asked}${source} is not a ${capability} model on this gateway (not in /v1/models/${kind}), so nothing was sent.${hint}`;
  if (list.length === 0) {
    return {
      ok: false,
      message: `${head} The gateway lists no ${capability} models: add a ${capability} provider to the gateway.`,
    };
  }
  const choices = capability === 'speech' ? speechChoices(list) : list.map((m) => m.id);
  const shown = choices.slice(0, MAX_LISTED).join(', ');
  const more =
    choices.length > MAX_LISTED ? `, and ${choices.length - MAX_LISTED} more (see list_models)` : '';
  const how =
    capability === 'speech'
      ? 'Pass one as `model`, and `voice` to choose its voice.'
      : 'Pass one as `model`.';
  return { ok: false, message: `${head} ${capitalized(capability)} models: ${shown}${more}. ${how}` };
}

/** `openai/tts-1 (voices alloy, nova)`: one entry per provider/model, voices grouped. */
function speechChoices(list: readonly ModelEntry[]): string[] {
  const voices = new Map<string, string[]>();
  for (const { id } of list) {
    const stem = stemOf(id) || id;
    const group = voices.get(stem) ?? [];
    if (stem !== id) group.push(lastSegment(id));
    voices.set(stem, group);
  }
  return [...voices].map(([stem, names]) => (names.length ? `${stem} (voices ${names.join(', ')})` : stem));
}

function stemOf(id: string): string {
  const at = id.lastIndexOf('/');
  return at < 0 ? '' : id.slice(0, at);
}

function lastSegment(id: string): string {
  return id.slice(id.lastIndexOf('/') + 1);
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
