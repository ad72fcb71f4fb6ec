import type { TranscriptFormat } from '../../service/audio.js';
import { type Page, rangeText } from './paging.js';
import { formatCount } from './text.js';

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

/** The result text: the part of the transcript, how to read on, and where the file is. */
export function transcriptMarkdown(
  out: TranscriptPage,
  requested: TranscriptFormat,
  fromCache: boolean,
  toolName: string,
): string {
  const range = rangeText(out);
  const lines = [`Transcript (${out.model}, ${range}${fromCache ? ', from cache' : ''}):`, ''];
  lines.push(out.text.trim() ? out.text : '(no speech recognised)');
  if (out.truncated) {
    lines.push(
      '',
      `[Truncated: ${formatCount(out.total_length - out.end_index)} more characters. To continue, call ` +
        `${toolName} with the same arguments and start_index=${out.next_start_index} ` +
        '(served from cache, no new transcription).]',
    );
  }
  if (requested !== out.format && SAVED_EXTENSION[requested]) {
    lines.push('', `Asked for ${requested}, but the provider answered ${out.format} (no timestamps).`);
  }
  if (out.file_path) {
    const what = SAVED_EXTENSION[out.format] ? `${out.format} transcript` : 'full transcript';
    lines.push('', `The ${what} is saved at ${out.file_path}.`);
  }
  return lines.join('\n');
}

export function transcriptMime(path: string): string {
  if (path.endsWith('.srt')) return 'application/x-subrip';
  if (path.endsWith('.vtt')) return 'text/vtt';
  if (path.endsWith('.json')) return 'application/json';
  return 'text/plain';
}
