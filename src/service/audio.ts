import type { Readable } from 'node:stream';
import type { ServiceClient, ServiceResponse } from './client.js';
import { ServiceError } from './errors.js';
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

const SPEECH_TIMEOUT_MS = 120_000;

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
    // Long texts take a while to synthesize before the first byte arrives.
    timeoutMs: Math.max(client.timeoutMs, SPEECH_TIMEOUT_MS),
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

/** The `?response_format=json` shape, `{"audio":"<base64>","format":"mp3"}`, some gateways always send. */
export function decodeJsonSpeech(text: string): { audio: Buffer; format: string | undefined } | null {
  try {
    const body = asObject(JSON.parse(text));
    const audio = asString(body.audio) ?? asString(body.data);
    if (!audio) return null;
    return { audio: Buffer.from(audio, 'base64'), format: asString(body.format) };
  } catch {
    return null;
  }
}

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
  /** The format the provider really answered in: some ignore `response_format` and send JSON. */
  format: TranscriptFormat;
}

/** A transcript bigger than this is not a transcript; refuse it rather than hold it. */
const MAX_TRANSCRIPT_BYTES = 32 * 1024 * 1024;
const TRANSCRIBE_TIMEOUT_MS = 300_000;

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
    timeoutMs: Math.max(client.timeoutMs, TRANSCRIBE_TIMEOUT_MS),
  });
  const raw = await readBounded(res.body, MAX_TRANSCRIPT_BYTES);
  const contentType = res.headers['content-type'];
  const delivered = deliveredFormat(raw, contentType, format);
  return { raw, text: transcriptText(raw, contentType, delivered), format: delivered };
}

/** What the body really is, whatever was asked for (tolerates providers that always send JSON). */
export function deliveredFormat(
  raw: string,
  contentType: string | undefined,
  requested: TranscriptFormat,
): TranscriptFormat {
  const trimmed = raw.trimStart();
  if (!trimmed) return requested;
  if (/json/i.test(contentType ?? '') || /^[{[]/.test(trimmed)) {
    try {
      return Array.isArray(asObject(JSON.parse(raw)).segments) ? 'verbose_json' : 'json';
    } catch {
      // not JSON after all
    }
  }
  if (/^WEBVTT\b/.test(trimmed)) return 'vtt';
  if (/^\d+\s*\r?\n\d{1,2}:\d{2}:\d{2}[,.]\d{3}\s*-->/.test(trimmed)) return 'srt';
  return 'text';
}

async function readBounded(body: ServiceResponse['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop ends the iterator, which closes the response.
    if (size > limit) {
      throw new ServiceError({
        kind: 'malformed',
        message: `The transcript exceeded ${Math.round(limit / (1024 * 1024))} MiB`,
        maybeDelivered: true,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
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
