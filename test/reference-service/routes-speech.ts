// POST /v1/audio/speech and GET /v1/audio/voices, as 9router answers them. The voice is part of
// the model id (provider/model/voice), though the tts list names provider/model only; the output
// format comes from the query string, never the body, and openai ignores it (always mp3).
import { createHash } from 'node:crypto';
import { errorReply, jsonReply, type Reply, RequestError } from './http-util.js';
import { jsonObjectBody, requireString } from './request-body.js';
import type { RouteContext } from './router.js';
import { providerOf } from './state.js';

interface AudioFormat {
  contentType: string;
  header: Buffer;
}

const AUDIO_FORMATS: Record<string, AudioFormat> = {
  mp3: { contentType: 'audio/mp3', header: Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1') },
  wav: { contentType: 'audio/wav', header: Buffer.alloc(0) },
  opus: { contentType: 'audio/ogg', header: Buffer.from('OggS\x00\x02', 'latin1') },
  aac: { contentType: 'audio/aac', header: Buffer.from([0xff, 0xf1, 0x50, 0x80]) },
  flac: { contentType: 'audio/flac', header: Buffer.from('fLaC', 'latin1') },
  pcm: { contentType: 'audio/pcm', header: Buffer.alloc(0) },
};

/** A 44-byte RIFF/WAVE header for 16-bit mono PCM at 24 kHz, sized for `total` bytes. */
function wavHeader(total: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(total - 8, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(24_000, 24);
  header.writeUInt32LE(48_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(total - 44, 40);
  return header;
}

/** Uncompressed audio (24 kHz, 16-bit mono) at about 15 spoken characters a second. */
const UNCOMPRESSED_BYTES_PER_CHAR = 3200;
const COMPRESSED_BYTES_PER_CHAR = 200;

/**
 * An MP3 frame a decoder plays as 24 ms of silence: MPEG-2 Layer III, 24 kbit/s, 24 kHz, mono (a
 * 72-byte frame: its 4-byte header, 9 bytes of side info that say "no audio data", and 59 bytes of
 * ancillary data, which decoders skip).
 */
const SILENT_MP3_FRAME = Buffer.concat([Buffer.from([0xff, 0xf3, 0x34, 0xc0]), Buffer.alloc(68)]);
const MP3_ANCILLARY_AT = 13;

/**
 * Deterministic audio: the size grows with the input (wav and pcm, being uncompressed, about 16
 * times faster than the compressed formats), the filler is derived from it. MP3 is real: an ID3
 * tag, then silent frames a browser plays (at 24 kbit/s, as long as the speech would take), the
 * input's digest in the first frame's ancillary data; WAV is real PCM (noise, from the digest).
 */
export function synthesizeAudio(input: string, format: string): Buffer {
  const perChar =
    format === 'wav' || format === 'pcm' ? UNCOMPRESSED_BYTES_PER_CHAR : COMPRESSED_BYTES_PER_CHAR;
  const size = 1000 + perChar * input.length;
  const header = format === 'wav' ? wavHeader(size) : (AUDIO_FORMATS[format]?.header ?? Buffer.alloc(0));
  const seed = createHash('sha256').update(input).digest();
  const out = Buffer.alloc(size);
  if (format === 'mp3') {
    let offset = header.length;
    for (; offset + SILENT_MP3_FRAME.length <= size; offset += SILENT_MP3_FRAME.length)
      SILENT_MP3_FRAME.copy(out, offset);
    seed.copy(out, header.length + MP3_ANCILLARY_AT);
  } else {
    for (let offset = header.length; offset < size; offset += seed.length) seed.copy(out, offset);
  }
  header.copy(out, 0);
  return out;
}

/** The id the gateway is sent, read the way 9router reads it, and what the upstream is asked. */
interface Upstream {
  model: string;
  voice: string;
}

const OPENAI_MODELS = ['gpt-4o-mini-tts', 'tts-1-hd', 'tts-1'];
/** 9router's openai ttsConfig.defaultModel: what a voice alone plays on. */
const OPENAI_DEFAULT_MODEL = 'gpt-4o-mini-tts';
const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'];
/** Voices only the default model has. */
const DEFAULT_MODEL_VOICES = ['cedar', 'marin', 'verse'];

/**
 * openai, read as 9router reads what follows `openai/`: exactly `model/voice`; a voice alone on
 * the default model gpt-4o-mini-tts (so `openai/tts-1` is *voice* "tts-1", `openai/alloy` voice
 * alloy); anything longer the default model with voice alloy. The upstream then refuses what
 * OpenAI would: a model that does not speak, a voice it does not have.
 */
function openAiUpstream(rest: string, id: string): Upstream {
  const parts = rest.split('/');
  const upstream =
    parts.length === 2
      ? { model: parts[0]!, voice: parts[1]! }
      : parts.length === 1
        ? { model: OPENAI_DEFAULT_MODEL, voice: rest || 'alloy' }
        : { model: OPENAI_DEFAULT_MODEL, voice: 'alloy' };
  if (!OPENAI_MODELS.includes(upstream.model)) {
    throw upstreamRefusal(id, `${upstream.model} does not support audio`);
  }
  const onDefault = upstream.model === OPENAI_DEFAULT_MODEL && DEFAULT_MODEL_VOICES.includes(upstream.voice);
  if (!OPENAI_VOICES.includes(upstream.voice) && !onDefault) {
    throw upstreamRefusal(id, `Invalid value for 'voice': '${upstream.voice}'.`);
  }
  return upstream;
}

/**
 * What 9router answers when the speech upstream refuses: always 502, the provider's message tagged
 * with the id, and the 30 s cooldown it then puts on that id (Retry-After, "reset after").
 */
function upstreamRefusal(id: string, message: string): RequestError {
  return new RequestError(502, `[${id}] ${message} (reset after 30s)`, {
    type: null,
    code: null,
    headers: { 'retry-after': '30' },
  });
}

/** selfhosted-tts: `model/voice`, or `model` alone with the server's default voice. */
function selfHostedUpstream(rest: string): Upstream {
  const [model = 'kokoro', ...voice] = rest.split('/').filter(Boolean);
  return { model, voice: voice.join('/') || 'af_heart' };
}

/**
 * How each speech provider is reached: how the id is read, and whether the provider honours
 * `response_format` (9router's openai path drops it and answers mp3; the self-hosted server gets it).
 */
const TTS_PROVIDERS: Record<string, { upstream(rest: string, id: string): Upstream; formats: boolean }> = {
  openai: { upstream: openAiUpstream, formats: false },
  'selfhosted-tts': { upstream: selfHostedUpstream, formats: true },
  'edge-tts': { upstream: (rest) => ({ model: 'edge-tts', voice: rest }), formats: false },
};

/** What the speech provider behind the gateway is asked for an id, and whether it honours formats. */
export interface SpeechUpstream extends Upstream {
  provider: string;
  honoursFormat: boolean;
}

/**
 * Reads a speech id as 9router does (tests compare what either gateway's provider was asked);
 * throws the gateway's refusal for a provider without speech or an id its upstream refuses.
 */
export function speechUpstream(id: string): SpeechUpstream {
  const provider = providerOf(id);
  const tts = TTS_PROVIDERS[provider];
  if (!tts) {
    throw new RequestError(400, `Provider '${provider}' does not support TTS via this route.`);
  }
  return { provider, honoursFormat: tts.formats, ...tts.upstream(id.slice(provider.length + 1), id) };
}

export function speech(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const model = requireString(body.model, 'model');
  const input = requireString(body.input, 'input');
  // Nothing is checked against the tts list: any id on a speech provider goes upstream.
  const upstream = speechUpstream(model);
  const asked = context.query.response_format ?? 'mp3';
  if (asked === 'json') {
    return jsonReply({ audio: synthesizeAudio(input, 'mp3').toString('base64'), format: 'mp3' });
  }
  if (!AUDIO_FORMATS[asked]) throw new RequestError(400, `Invalid response_format: ${asked}`);
  const format = upstream.honoursFormat ? asked : 'mp3';
  return {
    kind: 'raw',
    status: 200,
    contentType: AUDIO_FORMATS[format]!.contentType,
    body: synthesizeAudio(input, format),
  };
}

interface Voice {
  id: string;
  name: string;
  lang: string;
  gender: string;
  model: string;
}

/** 9router lists voices for these providers only; any other provider is a 400. */
const VOICE_PROVIDERS = ['elevenlabs', 'deepgram', 'inworld', 'edge-tts', 'local-device'];

const VOICES: Record<string, Voice[]> = {
  'edge-tts': [
    { id: 'en-US-AriaNeural', name: 'Aria', lang: 'en-US', gender: 'female', model: 'edge-tts' },
    { id: 'en-US-GuyNeural', name: 'Guy', lang: 'en-US', gender: 'male', model: 'edge-tts' },
    { id: 'de-DE-KatjaNeural', name: 'Katja', lang: 'de-DE', gender: 'female', model: 'edge-tts' },
  ],
};

export function listVoices(context: RouteContext): Reply {
  const provider = context.query.provider;
  if (!provider || !VOICE_PROVIDERS.includes(provider)) {
    return errorReply(400, { message: `provider must be one of: ${VOICE_PROVIDERS.join(', ')}` });
  }
  return jsonReply({ voices: VOICES[provider] ?? [] });
}
