// Speech model ids. The gateway's /v1/models/tts names speech models as `provider/model`, without
// a voice, but the id it must be sent is `provider/model/voice`: it splits that id itself, and a
// two-part id means something else per provider (`openai/tts-1` is *voice* "tts-1" on openai's
// default model; `selfhosted-tts/kokoro` is model kokoro with that server's default voice). So
// the voice is always added here: the one asked for, else a known valid default, else none and
// the provider's own default applies.
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
/** Voices only some openai models have. */
const OPENAI_MODEL_VOICES: Record<string, string> = { verse: 'gpt-4o-mini-tts' };

/** The voice sent when none is given, by provider. Providers not here pick their own. */
const DEFAULT_VOICE: Record<string, string> = { openai: 'alloy' };

const KNOWN_VOICES = new Set<string>([...OPENAI_VOICES, ...Object.keys(OPENAI_MODEL_VOICES)]);

export interface SpeechId {
  /** What is sent: `provider/model/voice`, or `provider/model` when the provider picks the voice. */
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
 * neither the id nor its `provider/model` part is listed. With `listed` null (the gateway has no
 * list) nothing is checked.
 */
export function resolveSpeechId(
  requested: string,
  voice: string | undefined,
  listed: readonly string[] | null,
): SpeechId | null {
  // Unchecked, the id is read the way the gateway reads it: a third part is the voice.
  if (!listed)
    return requested.split('/').length >= 3 ? withVoice(requested, voice) : compose(requested, voice);
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
  return null;
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
  const providers = [...new Set(listed.map(providerOf))];
  const parts = providers.map((provider) => {
    if (provider === 'openai') {
      const only = Object.entries(OPENAI_MODEL_VOICES).map(([v, model]) => `, ${v} with ${model} only`);
      return `openai — ${OPENAI_VOICES.join(', ')}${only.join('')} (default ${DEFAULT_VOICE.openai})`;
    }
    return `${provider} — its own voice names (default: its own)`;
  });
  return parts.join('; ');
}

/**
 * A default speech model as the report shows it: `openai/tts-1 with voice alloy, sent as
 * openai/tts-1/alloy`, or just the id when it is sent as it is.
 */
export function describeSpeechDefault(id: string, listed: readonly string[] | null): string {
  const resolved = resolveSpeechId(id, undefined, listed);
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

/** A voice name this product knows (openai's). */
export function isVoiceName(name: string): boolean {
  return KNOWN_VOICES.has(name);
}

/** A listed id that ends in a voice (`openai/tts-1/alloy`) rather than a model. */
function namesVoice(id: string): boolean {
  return id.split('/').length >= 3 && KNOWN_VOICES.has(lastSegment(id));
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
