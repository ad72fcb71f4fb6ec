import type { Readable } from 'node:stream';
import type { ServiceClient, ServiceResponse } from './client.js';
import { multipartBody } from './multipart.js';
import { asArray, asObject, asString } from './normalize.js';

export type SpeechFormat = 'mp3' | 'wav' | 'opus' | 'aac' | 'flac' | 'pcm';

export interface SpeechRequest {
  /** provider/model/voice: the voice is part of the id on this service. */
  model: string;
  input: string;
  language?: string;
  style?: string;
}

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
    retry: 'safe',
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

export type TranscriptFormat = 'json' | 'text' | 'verbose_json' | 'srt' | 'vtt';

export interface TranscriptionRequest {
  model: string;
  file: { filename: string; contentType: string; size: number; stream: () => Readable };
  language?: string;
  prompt?: string;
  response_format?: TranscriptFormat;
  temperature?: number;
}

export interface Transcript {
  text: string;
  /** The body as sent (SRT/VTT/verbose JSON), for formats other than plain text. */
  raw: string;
  format: TranscriptFormat;
}

export async function transcribe(
  client: ServiceClient,
  req: TranscriptionRequest,
  signal?: AbortSignal,
): Promise<Transcript> {
  const format = req.response_format ?? 'json';
  const body = multipartBody(
    {
      model: req.model,
      language: req.language,
      prompt: req.prompt,
      response_format: format,
      temperature: req.temperature === undefined ? undefined : String(req.temperature),
    },
    { field: 'file', ...req.file },
  );
  const res = await client.stream({
    method: 'POST',
    path: '/v1/audio/transcriptions',
    body: body.stream,
    contentType: body.contentType,
    headers: { 'content-length': String(body.length) },
    signal,
    // An upload stream cannot be replayed, so it is sent once.
    retry: 'submit',
    timeoutMs: Math.max(client.timeoutMs, 300_000),
  });
  const raw = await res.body.text();
  return { raw, text: transcriptText(raw, res.headers['content-type'], format), format };
}

/** The plain text of a transcript, whatever shape the provider answered in. */
export function transcriptText(
  raw: string,
  contentType: string | undefined,
  format: TranscriptFormat,
): string {
  const looksJson = /json/i.test(contentType ?? '') || /^\s*[{[]/.test(raw);
  if (looksJson) {
    try {
      const obj = asObject(JSON.parse(raw));
      const text = asString(obj.text);
      if (text !== undefined) return text;
      return asArray(obj.segments)
        .map((s) => asString(asObject(s).text) ?? '')
        .join(' ')
        .trim();
    } catch {
      // not JSON after all: fall through
    }
  }
  return format === 'srt' || format === 'vtt' ? subtitleText(raw) : raw.trim();
}

function subtitleText(raw: string): string {
  return raw
    .split(/\r?\n/)
    .filter(
      (line) =>
        line.trim() && !/^\d+$/.test(line.trim()) && !line.includes('-->') && line.trim() !== 'WEBVTT',
    )
    .join(' ')
    .trim();
}

export interface Voice {
  id: string;
  name: string | null;
  lang: string | null;
  model: string | null;
}

export async function listVoices(
  client: ServiceClient,
  provider: string,
  signal?: AbortSignal,
): Promise<Voice[]> {
  const { data } = await client.json<unknown>({
    method: 'GET',
    path: '/v1/audio/voices',
    query: { provider },
    signal,
    retry: 'safe',
  });
  const body = asObject(data);
  return asArray(Array.isArray(data) ? data : (body.voices ?? body.data)).flatMap((raw) => {
    const v = asObject(raw);
    const id = asString(v.id);
    return id
      ? [
          {
            id,
            name: asString(v.name) ?? null,
            lang: asString(v.lang) ?? null,
            model: asString(v.model) ?? null,
          },
        ]
      : [];
  });
}
