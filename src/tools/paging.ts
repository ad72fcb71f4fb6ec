import { z } from 'zod';
import { formatCount } from '../lib/text.js';

export interface Page {
  content: string;
  start_index: number;
  end_index: number;
  total_length: number;
  truncated: boolean;
  next_start_index: number | null;
}

/**
 * Slices a long text into pages by character offset. A page prefers to end at a line break near
 * its limit so the model does not get half a sentence; nothing is lost because the next page
 * starts exactly where this one ended.
 */
export function pageOf(text: string, startIndex: number, maxLength: number): Page {
  const total = text.length;
  const start = Math.min(startIndex, total);
  let end = Math.min(start + maxLength, total);
  if (end < total) {
    const newline = text.lastIndexOf('\n', end - 1);
    if (newline >= start + Math.floor(maxLength * 0.8)) end = newline + 1;
    // Never split a surrogate pair.
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff && end > start + 1) end -= 1;
  }
  return {
    content: text.slice(start, end),
    start_index: start,
    end_index: end,
    total_length: total,
    truncated: end < total,
    next_start_index: end < total ? end : null,
  };
}

const DEFAULT_MAX_LENGTH = 16_000;

/** The paging arguments of every tool that returns long text in parts (web_fetch, audio_transcribe). */
export const pagingInput = {
  max_length: z
    .number()
    .int()
    .min(100)
    .max(100_000)
    .default(DEFAULT_MAX_LENGTH)
    .describe('Characters per part'),
  start_index: z.number().int().min(0).default(0),
};

/** The paging fields of their results (see Page). */
export const pagingOutput = {
  start_index: z.number().int(),
  end_index: z.number().int(),
  total_length: z.number().int(),
  truncated: z.boolean(),
  next_start_index: z.number().int().nullable(),
};

/** "12,345 characters", or "characters 0–16,000 of 60,013" for a part. */
export function rangeText(p: Pick<Page, 'start_index' | 'end_index' | 'total_length' | 'truncated'>): string {
  return p.start_index === 0 && !p.truncated
    ? `${formatCount(p.total_length)} characters`
    : `characters ${formatCount(p.start_index)}–${formatCount(p.end_index)} of ${formatCount(p.total_length)}`;
}
