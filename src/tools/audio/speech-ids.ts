// Speech model ids. The gateway's /v1/models/tts names speech models as `provider/model`, without
// a voice, but the id it must be sent is `provider/model/voice`: it splits that id itself, and a
// two-part id means something else per provider (`openai/tts-1` is *voice* "tts-1" on openai's
// default model; `selfhosted-tts/kokoro` is model kokoro with that server's default voice). So
// the voice is added to a listed model here: the one asked for, else a known valid default, else
// none and the provider's own default applies.
//
// The gateway's own shorthand is taken as it reads it. On openai a two-part id that is not a
// listed model but a voice of openai's default model (`openai/alloy`) is that voice on the
// default model, gpt-4o-mini-tts; it is sent as it is, and the result names model and voice.
//
// Some gateways list voices instead (`openai/tts-1/alloy`, `openai/tts-1/nova`); a listed id whose
// last part is a known voice name is read that way, and its siblings are accepted too.

const OPENAI_VOICES = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'nova',
  'onyx',
  'sage',
  'shimmer',
] as const;
/** Voices only some openai models have, by voice. */
const OPENAI_MODEL_VOICES: Record<string, string> = {
  cedar: 'gpt-4o-mini-tts',
  marin: 'gpt-4o-mini-tts',
  verse: 'gpt-4o-mini-tts',
};

/**
 * Providers that read a two-part id `provider/name` as voice `name` on a default model (9router's
 * openai: its ttsConfig.defaultModel), with that model's voices. Others (selfhosted-tts) read it
 * as model `name`.
 */
const VOICE_ON_DEFAULT_MODEL: Record<string, { model: string; voices: ReadonlySet<string> }> = {
  openai: {
    model: 'gpt-4o-mini-tts',
    voices: new Set([
      ...OPENAI_VOICES,
      ...Object.keys(OPENAI_MODEL_VOICES).filter((v) => OPENAI_MODEL_VOICES[v] === 'gpt-4o-mini-tts'),
    ]),
  },
};

/** The voice sent when none is given, by provider. Providers not here pick their own. */
const DEFAULT_VOICE: Record<string, string> = { openai: 'alloy' };

const KNOWN_VOICES = new Set<string>([...OPENAI_VOICES, ...Object.keys(OPENAI_MODEL_VOICES)]);

export interface SpeechId {
  /**
   * What is sent: `provider/model/voice`, `provider/model` when the provider picks the voice, or
   * `provider/voice` for a voice on the provider's default model.
   */
  id: string;
  /** The speech model, `provider/model`. */
  model: string;
  /** The voice in the id; null when the provider's own default applies. */
  voice: string | null;
  /** What the agent should know about the choice (a replaced voice, a default). */
  notes: string[];
}

/**
 * The id to send for `requested` (+ `voice`), checked against the listed speech ids; null when
 * neither the id nor its `provider/model` part is listed, and it is no voice of a listed
 * provider's default model. With `listed` null (the gateway has no list) nothing is checked.
 */
export function resolveSpeechId(
  requested: string,
  voice: string | undefined,
  listed: readonly string[] | null,
): SpeechId | null {
  // Unchecked, the id is read the way the gateway reads it: a third part is the voice, and a
  // two-part openai id that names a voice is that voice on the default model.
  if (!listed) {
    if (requested.split('/').length >= 3) return withVoice(requested, voice);
    return onDefaultModel(requested, voice, false) ?? compose(requested, voice);
  }
  if (listed.includes(requested)) {
    return namesVoice(requested) ? withVoice(requested, voice) : compose(requested, voice);
  }
  const stem = stemOf(requested);
  if (stem && listed.includes(stem) && !namesVoice(stem)) return withVoice(requested, voice);
  // A list of voices: another voice of a listed provider/model, or that provider/model itself.
  const voiceEntries = listed.filter(namesVoice);
  if (stem && voiceEntries.some((id) => stemOf(id) === stem)) return withVoice(requested, voice);
  const first = voiceEntries.find((id) => stemOf(id) === requested);
  if (first) {
    if (voice) return { id: `${requested}/${voice}`, model: requested, voice, notes: [] };
    return {
      ...withVoice(first, undefined),
      notes: [`No voice given: using ${first}, the first listed voice of ${requested}.`],
    };
  }
  if (!listed.some((id) => providerOf(id) === providerOf(requested))) return null;
  return onDefaultModel(requested, voice, true);
}

/** The listed providers whose voice alone is an id, with their default model. */
export function voiceAloneProviders(listed: readonly string[]): { provider: string; model: string }[] {
  return providersOf(listed).flatMap((provider) => {
    const model = VOICE_ON_DEFAULT_MODEL[provider]?.model;
    return model ? [{ provider, model }] : [];
  });
}

/**
 * How a listed provider's voice alone is given (`provider/voice`), for the providers that have a
 * default model: "A voice alone works on openai: openai/<voice> is that voice on its default
 * model gpt-4o-mini-tts."; empty when none is listed.
 */
export function voiceAloneHelp(listed: readonly string[]): string {
  const found = voiceAloneProviders(listed);
  if (!found.length) return '';
  const forms = found.map((p) => `${p.provider}/<voice> is that voice on its default model ${p.model}`);
  return `A voice alone works on ${found.map((p) => p.provider).join(', ')}: ${forms.join('; ')}.`;
}

/**
 * Why a refused speech id is not read as a voice either (`openai/bogus`), or that a voice was
 * given where a model belongs (`selfhosted-tts/alloy`); empty when neither applies.
 */
export function refusedSpeechHint(
  requested: string,
  voice: string | undefined,
  listed: readonly string[],
): string {
  const [provider = '', name = '', ...more] = requested.split('/');
  const reading = VOICE_ON_DEFAULT_MODEL[provider];
  if (reading && name && more.length === 0 && listed.some((id) => providerOf(id) === provider)) {
    const voices = `a voice of ${provider}'s default model ${reading.model}`;
    if (!reading.voices.has(name)) return ` ${name} is neither a listed ${provider} model nor ${voices}.`;
    if (voice && !reading.voices.has(voice)) return ` ${voice} is not ${voices}.`;
    return '';
  }
  const last = lastSegment(requested);
  if (!isVoiceName(last)) return '';
  const alone = providersOf(listed).find((p) => VOICE_ON_DEFAULT_MODEL[p]?.voices.has(last));
  const or = alone && alone !== provider ? `, or as ${alone}/${last}` : '';
  return ` ${last} is a voice, not a model: give it as \`voice\` with one of these models${or}.`;
}

/** The listed speech models as `provider/model`, a list of voices grouped by model. */
export function speechModels(listed: readonly string[]): string[] {
  const voices = new Map<string, string[]>();
  for (const id of listed) {
    const model = namesVoice(id) ? stemOf(id) : id;
    const group = voices.get(model) ?? [];
    if (model !== id) group.push(lastSegment(id));
    voices.set(model, group);
  }
  return [...voices].map(([model, names]) =>
    names.length ? `${model} (voices ${names.join(', ')})` : model,
  );
}

/**
 * The voices of the listed models' providers: `openai — alloy, ash, …, shimmer, verse with
 * gpt-4o-mini-tts only (default alloy)`; other providers have their own names and default.
 */
export function voiceHelp(listed: readonly string[]): string {
  const parts = providersOf(listed).map((provider) => {
    if (provider === 'openai') {
      const byModel = new Map<string, string[]>();
      for (const [v, model] of Object.entries(OPENAI_MODEL_VOICES))
        byModel.set(model, [...(byModel.get(model) ?? []), v]);
      const only = [...byModel].map(([model, vs]) => `; ${vs.join(', ')} with ${model} only`);
      return `openai — ${OPENAI_VOICES.join(', ')}${only.join('')} (default ${DEFAULT_VOICE.openai})`;
    }
    return `${provider} — its own voice names (default: its own)`;
  });
  return parts.join('; ');
}

/**
 * A default speech model as the report shows it: `openai/tts-1 with voice alloy, sent as
 * openai/tts-1/alloy`, `openai/alloy, voice alloy on openai's default model gpt-4o-mini-tts`, or
 * just the id when it is sent as it is.
 */
export function describeSpeechDefault(id: string, listed: readonly string[] | null): string {
  const resolved = resolveSpeechId(id, undefined, listed);
  const read = asVoiceOnDefaultModel(id);
  if (resolved && read && resolved.id === id && resolved.model === read.model) {
    return `${id}, voice ${read.voice} on ${read.provider}'s default model ${read.modelName}`;
  }
  if (!resolved || (resolved.id === id && resolved.voice !== null)) return id;
  if (resolved.voice === null) return `${id} with ${providerOf(id)}'s own default voice`;
  return `${id} with voice ${resolved.voice}, sent as ${resolved.id}`;
}

/** The voice a model gets when none is given; null when the provider chooses. */
function defaultVoiceOf(model: string): string | null {
  return DEFAULT_VOICE[providerOf(model)] ?? null;
}

/** `provider/model` + the voice asked for, else the provider's known default, else none. */
function compose(model: string, voice: string | undefined): SpeechId {
  if (voice) return { id: `${model}/${voice}`, model, voice, notes: [] };
  const fallback = defaultVoiceOf(model);
  if (fallback) {
    return {
      id: `${model}/${fallback}`,
      model,
      voice: fallback,
      notes: [`No voice given: using ${fallback}, the default voice for ${providerOf(model)}.`],
    };
  }
  return {
    id: model,
    model,
    voice: null,
    notes: [
      `No voice given: ${providerOf(model)} uses its own default voice (sent as ${model}); pass \`voice\` to choose one.`,
    ],
  };
}

/** A `provider/model/voice` id; a separate `voice` replaces the id's own. */
function withVoice(id: string, voice: string | undefined): SpeechId {
  const model = stemOf(id);
  const own = lastSegment(id);
  if (!voice || voice === own) return { id, model, voice: own, notes: [] };
  return {
    id: `${model}/${voice}`,
    model,
    voice,
    notes: [`The voice ${voice} replaces ${own} from the model id.`],
  };
}

interface VoiceOnDefaultModel {
  provider: string;
  voice: string;
  /** The default model's name (`gpt-4o-mini-tts`). */
  modelName: string;
  /** The default model as `provider/model`. */
  model: string;
}

/** `openai/alloy` as the gateway reads it: voice alloy on openai's default model; else null. */
function asVoiceOnDefaultModel(id: string): VoiceOnDefaultModel | null {
  const [provider = '', voice = '', ...more] = id.split('/');
  const reading = VOICE_ON_DEFAULT_MODEL[provider];
  if (!reading || more.length > 0 || !reading.voices.has(voice)) return null;
  return { provider, voice, modelName: reading.model, model: `${provider}/${reading.model}` };
}

/**
 * `provider/voice` sent as it is, with the default model it plays on; a separate `voice` replaces
 * the id's own, and when `checked` it must be a voice of that model too. Null for other ids.
 */
function onDefaultModel(id: string, voice: string | undefined, checked: boolean): SpeechId | null {
  const read = asVoiceOnDefaultModel(id);
  if (!read) return null;
  const replaced = voice !== undefined && voice !== read.voice;
  const sent = replaced ? `${read.provider}/${voice}` : id;
  if (replaced && checked && !asVoiceOnDefaultModel(sent)) return null;
  const chosen = replaced ? voice : read.voice;
  const notes = [`${sent} is voice ${chosen} on ${read.provider}'s default speech model, ${read.modelName}.`];
  if (replaced) notes.unshift(`The voice ${voice} replaces ${read.voice} from the model id.`);
  return { id: sent, model: read.model, voice: chosen, notes };
}

/** A voice name this product knows (openai's). */
export function isVoiceName(name: string): boolean {
  return KNOWN_VOICES.has(name);
}

/** A listed id that ends in a voice (`openai/tts-1/alloy`) rather than a model. */
function namesVoice(id: string): boolean {
  return id.split('/').length >= 3 && KNOWN_VOICES.has(lastSegment(id));
}

function providersOf(listed: readonly string[]): string[] {
  return [...new Set(listed.map(providerOf))];
}

function providerOf(id: string): string {
  return id.split('/')[0] ?? id;
}

function stemOf(id: string): string {
  const at = id.lastIndexOf('/');
  return at < 0 ? '' : id.slice(0, at);
}

function lastSegment(id: string): string {
  return id.slice(id.lastIndexOf('/') + 1);
}
