// POST /v1/audio/speech and GET /v1/audio/voices. The voice is part of the model id
// (provider/model/voice); the output format comes from the query string, never the body.
import { createHash } from 'node:crypto';
import { errorReply, jsonReply, type Reply, RequestError } from './http-util.js';
import { jsonObjectBody, requireString } from './request-body.js';
import type { RouteContext } from './router.js';
import { providerOf, type ServiceState } from './state.js';

const TTS_PROVIDERS = new Set(['openai', 'edge-tts', 'elevenlabs']);

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
 * Deterministic audio: the size grows with the input (wav and pcm, being uncompressed, about 16
 * times faster than the compressed formats), the filler is derived from it.
 */
export function synthesizeAudio(input: string, format: string): Buffer {
  const perChar =
    format === 'wav' || format === 'pcm' ? UNCOMPRESSED_BYTES_PER_CHAR : COMPRESSED_BYTES_PER_CHAR;
  const size = 1000 + perChar * input.length;
  const header = format === 'wav' ? wavHeader(size) : (AUDIO_FORMATS[format]?.header ?? Buffer.alloc(0));
  const seed = createHash('sha256').update(input).digest();
  const out = Buffer.alloc(size);
  for (let offset = header.length; offset < size; offset += seed.length) seed.copy(out, offset);
  header.copy(out, 0);
  return out;
}

/**
 * A speech model is one the tts list names, or a sibling voice of one (same provider/model,
 * another voice): the voice is just the last segment of the id.
 */
function isSpeechModel(state: ServiceState, model: string): boolean {
  const list = state.effectiveModelList('tts').map((entry) => entry.id);
  if (list.includes(model)) return true;
  const segments = model.split('/');
  const stem = segments.slice(0, -1).join('/');
  return list.some((id) => {
    const other = id.split('/');
    return other.length === segments.length && segments.length > 1 && other.slice(0, -1).join('/') === stem;
  });
}

export function speech(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const model = requireString(body.model, 'model');
  const input = requireString(body.input, 'input');
  const provider = providerOf(model);
  if (!TTS_PROVIDERS.has(provider)) {
    throw new RequestError(400, `Provider '${provider}' does not support TTS via this route.`);
  }
  // A chat model on a speech-capable provider is passed upstream, where it fails.
  if (!isSpeechModel(context.state, model)) {
    throw new RequestError(502, `[${provider}] upstream error: model does not support audio`);
  }
  const format = context.query.response_format ?? 'mp3';
  if (format === 'json') {
    return jsonReply({ audio: synthesizeAudio(input, 'mp3').toString('base64'), format: 'mp3' });
  }
  const audioFormat = AUDIO_FORMATS[format];
  if (!audioFormat) throw new RequestError(400, `Invalid response_format: ${format}`);
  return {
    kind: 'raw',
    status: 200,
    contentType: audioFormat.contentType,
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

const VOICES: Record<string, Voice[]> = {
  openai: [
    { id: 'alloy', name: 'Alloy', lang: 'en', gender: 'neutral', model: 'tts-1' },
    { id: 'echo', name: 'Echo', lang: 'en', gender: 'male', model: 'tts-1' },
    { id: 'fable', name: 'Fable', lang: 'en', gender: 'neutral', model: 'tts-1' },
    { id: 'onyx', name: 'Onyx', lang: 'en', gender: 'male', model: 'tts-1' },
    { id: 'nova', name: 'Nova', lang: 'en', gender: 'female', model: 'tts-1' },
    { id: 'shimmer', name: 'Shimmer', lang: 'en', gender: 'female', model: 'tts-1' },
  ],
  'edge-tts': [
    { id: 'en-US-AriaNeural', name: 'Aria', lang: 'en-US', gender: 'female', model: 'edge-tts' },
    { id: 'en-US-GuyNeural', name: 'Guy', lang: 'en-US', gender: 'male', model: 'edge-tts' },
    { id: 'de-DE-KatjaNeural', name: 'Katja', lang: 'de-DE', gender: 'female', model: 'edge-tts' },
  ],
};

export function listVoices(context: RouteContext): Reply {
  const provider = context.query.provider;
  if (!provider) return errorReply(400, { message: 'provider is required' });
  const voices = VOICES[provider];
  if (!voices) return errorReply(404, { message: `Voices are not available for provider: ${provider}` });
  return jsonReply({ voices });
}
