// POST /v1/audio/transcriptions: a streamed multipart upload, and the transcript in any format.
import type { Readable } from 'node:stream';
import { bodyReadError } from '../body-errors.js';
import type { ServiceClient } from '../client.js';
import { assertParsable, parseJsonBody, readText } from '../http-body.js';
import { asArray, asNumber, asObject, asString, shownText } from '../normalize.js';
import { multipartBody } from './multipart.js';

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
  /** Seconds of audio, when the provider said (verbose_json's `duration`): what it bills. */
  seconds: number | null;
}

/** A transcript bigger than this is not a transcript; refuse it rather than hold it. */
const MAX_TRANSCRIPT_BYTES = 32 * 1024 * 1024;
/**
 * The gateway allows transcriptions 300 s: five times GATEWAY_TIMEOUT_MS is that at the default,
 * and shrinks with it, so a lowered timeout also bounds a hung transcription.
 */
export const TRANSCRIBE_TIMEOUT_FACTOR = 5;

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
  const timeoutMs = client.timeoutMs * TRANSCRIBE_TIMEOUT_FACTOR;
  const res = await client.stream({
    method: 'POST',
    path: '/v1/audio/transcriptions',
    body: body.stream,
    contentType: body.contentType,
    headers: { 'content-length': String(body.length) },
    signal,
    // An upload stream cannot be replayed, so it is sent once.
    retry: 'submit',
    timeoutMs,
    model: req.model,
  });
  const raw = shownText(
    client.clean(
      await readText(res.body, MAX_TRANSCRIPT_BYTES, signal).catch((error) => {
        throw bodyReadError(error, 'the transcript', timeoutMs, (t) => client.scrub(t), signal);
      }),
    ),
  );
  assertParsable(raw);
  const contentType = res.headers['content-type'];
  // A body labelled JSON that does not parse is a cut or broken answer, not a plain-text transcript.
  if (/json/i.test(contentType ?? '')) parseJsonBody(raw, client.scrub.bind(client));
  const delivered = deliveredFormat(raw, contentType, format);
  return {
    raw,
    text: shownText(transcriptText(raw, contentType, delivered)),
    format: delivered,
    seconds: delivered === 'verbose_json' ? audioSeconds(raw) : null,
  };
}

function audioSeconds(raw: string): number | null {
  try {
    const seconds = asNumber(asObject(JSON.parse(raw)).duration);
    return seconds !== undefined && seconds >= 0 ? seconds : null;
  } catch {
    return null;
  }
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
