// The deterministic transcript and its renderings (json, text, verbose_json, srt, vtt).
import type { RecordedFile } from './types.js';

const LONG_TRANSCRIPT_MIN_BYTES = 100_000;
const LONG_TRANSCRIPT_MAX_CHARS = 200_000;
/** Pretend the audio is ~128 kbit/s, so a file's size gives a plausible duration. */
const BYTES_PER_SECOND = 16_000;

export interface TranscriptOptions {
  language?: string | undefined;
  prompt?: string | undefined;
}

export function transcriptText(file: RecordedFile, options: TranscriptOptions): string {
  let text = `Transcript of ${file.name} (${file.size} bytes)`;
  if (options.language) text += `, language ${options.language}`;
  if (options.prompt) text += `, prompt ${options.prompt}`;
  if (file.size < LONG_TRANSCRIPT_MIN_BYTES) return text;
  // Big uploads get a transcript long enough that clients must page or save it.
  const target = Math.min(Math.floor(file.size / 20), LONG_TRANSCRIPT_MAX_CHARS);
  const sentences = [`${text}.`];
  let length = sentences[0]?.length ?? 0;
  for (let n = 1; ; n += 1) {
    const sentence = ` Sentence ${n} of the transcript.`;
    if (length + sentence.length > target) break;
    sentences.push(sentence);
    length += sentence.length;
  }
  return sentences.join('');
}

export function audioDurationSeconds(size: number): number {
  return Math.max(1, Math.round((size / BYTES_PER_SECOND) * 100) / 100);
}

export interface Segment {
  id: number;
  start: number;
  end: number;
  text: string;
}

/** One segment per sentence, sharing the duration evenly. */
export function segmentsOf(text: string, duration: number): Segment[] {
  const sentences = text.split(/(?<=\.)\s+/).filter(Boolean);
  const step = duration / sentences.length;
  return sentences.map((sentence, index) => ({
    id: index,
    start: Math.round(index * step * 1000) / 1000,
    end: Math.round((index + 1) * step * 1000) / 1000,
    text: sentence,
  }));
}

function timestamp(seconds: number, separator: ',' | '.'): string {
  const totalMs = Math.round(seconds * 1000);
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor((totalMs % 3_600_000) / 60_000);
  const secs = Math.floor((totalMs % 60_000) / 1000);
  const ms = totalMs % 1000;
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(hours)}:${pad(minutes)}:${pad(secs)}${separator}${pad(ms, 3)}`;
}

export function toSrt(segments: Segment[]): string {
  return segments
    .map(
      (segment, index) =>
        `${index + 1}\n${timestamp(segment.start, ',')} --> ${timestamp(segment.end, ',')}\n${segment.text}\n`,
    )
    .join('\n');
}

export function toVtt(segments: Segment[]): string {
  const cues = segments.map(
    (segment) => `${timestamp(segment.start, '.')} --> ${timestamp(segment.end, '.')}\n${segment.text}\n`,
  );
  return `WEBVTT\n\n${cues.join('\n')}`;
}
