import { Readable } from 'node:stream';
import { nestsTooDeep } from '../../lib/json-depth.js';
import { guardedBody } from '../body-errors.js';
import type { ServiceClient } from '../client.js';
import { type ServiceError, unreadableAnswer } from '../errors.js';
import { readText } from '../http-body.js';
import { asObject, asString } from '../normalize.js';

// Transcription lives beside speech; re-exported so this module stays the one audio import.
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

/**
 * The audio as the service answered it, with what the service said it is: the Content-Type of
 * raw bytes, or the `format` a JSON answer named. Either may be missing or vague
 * (`application/octet-stream`); naming the file is for whoever saves it.
 */
export interface SpeechAudio {
  contentType: string | undefined;
  format: string | undefined;
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
  const timeoutMs = client.timeoutMs * SPEECH_TIMEOUT_FACTOR;
  const res = await client.stream({
    method: 'POST',
    path: '/v1/audio/speech',
    query: { response_format: format },
    json: req,
    signal,
    retry: 'billed',
    timeoutMs,
  });
  const contentType = res.headers['content-type'];
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (/json/.test(type)) {
    const json = decodeJsonSpeech(await readText(res.body, MAX_JSON_SPEECH_BYTES, signal));
    if (!json) throw notAudio('JSON without an "audio" field');
    return { contentType: undefined, format: json.format, body: Readable.from([json.audio]) };
  }
  if (type && !type.startsWith('audio/') && type !== 'application/octet-stream') {
    void res.body.dump().catch(() => undefined);
    throw notAudio(type);
  }
  const body = guardedBody(res.body, 'the audio', timeoutMs, (t) => client.scrub(t), signal);
  return { contentType, format: undefined, body };
}

/** The answer to a speech request held no audio. */
export function notAudio(what: string): ServiceError {
  return unreadableAnswer(`The service answered the speech request with ${what} instead of audio`);
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
