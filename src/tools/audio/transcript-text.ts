import type { TranscriptFormat } from '../../gateway/endpoints/audio.js';
import { formatCount } from '../../lib/text.js';
import { type Page, rangeText } from '../paging.js';

/** Formats whose body is worth more than its text (timestamps, segments): saved as files. */
export const SAVED_EXTENSION: Partial<Record<TranscriptFormat, string>> = {
  srt: 'srt',
  vtt: 'vtt',
  verbose_json: 'json',
};

export type TranscriptPage = Omit<Page, 'content'> & {
  text: string;
  model: string;
  format: TranscriptFormat;
  file_path: string | null;
};

/**
 * What to do after this part (read on: "this tool", never its name, which a client may change),
 * and what the reader should know about it (another format than asked; where the file is).
 */
export function transcriptNext(out: TranscriptPage, requested: TranscriptFormat): string {
  const notes: string[] = [];
  if (out.truncated) {
    notes.push(
      `${formatCount(out.total_length - out.end_index)} more characters: call this tool again with the same ` +
        `arguments and start_index=${out.next_start_index} (from cache, no new transcription).`,
    );
  }
  if (requested !== out.format && SAVED_EXTENSION[requested]) {
    notes.push(`Asked for ${requested}, but the provider answered ${out.format} (no timestamps).`);
  }
  if (out.file_path) {
    const what = SAVED_EXTENSION[out.format] ? `${out.format} transcript` : 'full transcript';
    notes.push(`The ${what} is saved at ${out.file_path}.`);
  }
  return notes.join(' ');
}

/** The result text: the part of the transcript, then its next step (see transcriptNext). */
export function transcriptMarkdown(out: TranscriptPage, next: string, fromCache: boolean): string {
  const head = `Transcript (${out.model}, ${rangeText(out)}${fromCache ? ', from cache' : ''}):`;
  const body = out.text.trim() ? out.text : '(no speech recognised)';
  return `${head}\n\n${body}${next ? `\n\n[${next}]` : ''}`;
}
