import { Readable } from 'node:stream';
import { nestsTooDeep } from '../../lib/json-depth.js';
import { guardedBody } from '../body-errors.js';
import type { ServiceClient, ServiceResponse } from '../client.js';
import { ServiceError } from '../errors.js';
import { readText } from '../http-body.js';
import { asObject, asString } from '../normalize.js';

// Transcription lives beside speech; re-exported so `service/audio` stays the one audio import.
export * from './transcriptions.js';

export type SpeechFormat = 'mp3' | 'wav' | 'opus' | 'aac' | 'flac' | 'pcm';

export interface SpeechRequest {
  /** provider/model/voice: the voice is part of the id on this service. */
  model: string;
  input: string;
  language?: string;
  style?: string;
}

/**
 * Speech is synthesized whole before the first byte arrives, so it may wait longer than other
 * requests: twice GATEWAY_TIMEOUT_MS (120 s at the default). A multiple, not a floor, so a user
 * who lowers the timeout sees a hung gateway reported sooner here too.
 */
export const SPEECH_TIMEOUT_FACTOR = 2;

/** Returns the open audio response; the format travels in the query string. */
export function speech(
  client: ServiceClient,
  req: SpeechRequest,
  format: SpeechFormat,
  signal?: AbortSignal,
): Promise<ServiceResponse> {
  return client.stream({
    method: 'POST',
    path: '/v1/audio/speech',
    query: { response_format: format },
    json: req,
    signal,
    retry: 'billed',
    timeoutMs: client.timeoutMs * SPEECH_TIMEOUT_FACTOR,
  });
}

/** `audio/mp3` is what the service sends; the registered type is `audio/mpeg`. */
export function normalizeAudioMime(contentType: string | undefined, format: SpeechFormat): string {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'audio/mp3' || type === 'audio/mpeg3') return 'audio/mpeg';
  if (type.startsWith('audio/')) return type;
  return SPEECH_MIME[format];
}

export const SPEECH_MIME: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

const EXTENSION_BY_MIME: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/ogg': 'opus',
  'audio/opus': 'opus',
  'audio/aac': 'aac',
  'audio/x-aac': 'aac',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'audio/pcm': 'pcm',
  'audio/l16': 'pcm',
  'audio/webm': 'webm',
  'audio/mp4': 'm4a',
};

/** The file extension for what the service actually sent, falling back to the format asked for. */
export function audioExtension(mime: string, format: SpeechFormat): string {
  return EXTENSION_BY_MIME[mime] ?? format;
}

export interface SpeechAudio {
  /** `audio/mpeg` for what the service calls `audio/mp3`. */
  mimeType: string;
  extension: string;
  /** The audio bytes; the caller must consume them. */
  body: AsyncIterable<Uint8Array>;
}

const MAX_JSON_SPEECH_BYTES = 64 * 1024 * 1024;

/**
 * Speaks `req` and hands back the audio as a stream, whatever shape the service answered in: raw
 * bytes (the usual), or `{"audio":"<base64>","format":"mp3"}` (what `?response_format=json` gives,
 * and what some gateways always send). Anything else (an HTML page, plain text) is refused.
 */
export async function speechAudio(
  client: ServiceClient,
  req: SpeechRequest,
  format: SpeechFormat,
  signal?: AbortSignal,
): Promise<SpeechAudio> {
  const res = await speech(client, req, format, signal);
  const contentType = res.headers['content-type'];
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (/json/.test(type)) {
    const json = decodeJsonSpeech(await readText(res.body, MAX_JSON_SPEECH_BYTES, signal));
    if (!json) throw notAudio('JSON without an "audio" field');
    const sent = isSpeechFormat(json.format) ? json.format : format;
    return { mimeType: SPEECH_MIME[sent], extension: sent, body: Readable.from([json.audio]) };
  }
  if (type && !type.startsWith('audio/') && type !== 'application/octet-stream') {
    void res.body.dump().catch(() => undefined);
    throw notAudio(type);
  }
  const mimeType = normalizeAudioMime(contentType, format);
  const timeoutMs = client.timeoutMs * SPEECH_TIMEOUT_FACTOR;
  const body = guardedBody(res.body, 'the audio', timeoutMs, (t) => client.scrub(t), signal);
  return { mimeType, extension: audioExtension(mimeType, format), body };
}

/** The answer to a speech request held no audio. */
export function notAudio(what: string): ServiceError {
  return new ServiceError({
    kind: 'malformed',
    message: `The service answered the speech request with ${what} instead of audio`,
    maybeDelivered: true,
  });
}

function isSpeechFormat(value: string | undefined): value is SpeechFormat {
  return value !== undefined && Object.hasOwn(SPEECH_MIME, value);
}

/** The `?response_format=json` shape: `{"audio":"<base64>","format":"mp3"}`. */
export function decodeJsonSpeech(text: string): { audio: Buffer; format: string | undefined } | null {
  if (nestsTooDeep(text)) return null;
  try {
    const body = asObject(JSON.parse(text));
    const audio = asString(body.audio) ?? asString(body.data);
    if (!audio) return null;
    return { audio: Buffer.from(audio, 'base64'), format: asString(body.format) };
  } catch {
    return null;
  }
}
