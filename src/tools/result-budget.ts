import type { CallToolResult } from '@modelcontextprotocol/server';
import { formatCount } from '../lib/text.js';

/**
 * The one budget for what a tool result may hold. Whatever the gateway answers (a 6 MB page
 * title, a thousand models, an endless answer), every field that comes from it is capped where
 * the result is made, and says so when cut; the registry then holds every result, as sent, to
 * `resultBytes` (boundResult). A client reads every answer this server sends.
 */
export const RESULT_BUDGET = {
  /** A whole result as sent (JSON, UTF-8), inline audio included. */
  resultBytes: 1024 * 1024,
  /** Titles, names, ids, statuses, providers, models, voices. */
  name: 300,
  /** URLs: a longer one is no usable URL (signed URLs stay well under it). */
  url: 4096,
  /** A search result's snippet. */
  snippet: 1000,
  /** A search provider's answer; an error or reason given by the gateway. */
  answer: 4000,
  /** A model's answer (ask_model, web_fetch with prompt). */
  modelText: 100_000,
  /** Models listed per capability (list_models). */
  models: 300,
} as const;

/** `text` cut to `max` characters, saying how much was cut; unchanged when it fits. */
export function capped(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}… [cut: ${formatCount(text.length - end)} more characters]`;
}

/** A nullable field, capped. */
export function cappedOrNull(text: string | null | undefined, max: number): string | null {
  return text == null ? null : capped(text, max);
}

/**
 * The result as sent, within `maxBytes`: inline binary content goes first (the file is on
 * disk), then the longest strings are cut, wherever they are (text or structured content), each
 * saying so. Only a result that still does not fit (which no tool makes) becomes a short error.
 */
export function boundResult(
  result: CallToolResult,
  maxBytes: number = RESULT_BUDGET.resultBytes,
): CallToolResult {
  // Nearly every result is far below the budget: a bound on its size spares serializing it.
  if (sizeBound(result) <= maxBytes) return result;
  let size = jsonBytes(result);
  if (size <= maxBytes) return result;
  const out = structuredClone(result);
  const isBinary = (c: CallToolResult['content'][number]) => c.type === 'audio' || c.type === 'image';
  if (out.content.some(isBinary)) {
    out.content = [
      ...out.content.filter((c) => !isBinary(c)),
      {
        type: 'text',
        text: '[Inline media left out: the result would exceed its size budget; use the file.]',
      },
    ];
    size = jsonBytes(out);
  }
  // The long strings are cut to one common length (a page in both forms keeps the same part in
  // each); a few rounds absorb what the proportional cut misjudges.
  for (let round = 0; size > maxBytes && round < 8; round++) {
    const slots = stringSlots(out).map((slot) => ({ ...slot, bytes: jsonBytes(slot.value) }));
    const level = commonLevel(
      slots.map((s) => s.bytes),
      maxBytes - (size - slots.reduce((sum, s) => sum + s.bytes, 0)),
    );
    for (const slot of slots) {
      if (slot.bytes <= level) continue;
      const keep = Math.floor((slot.value.length * level) / slot.bytes);
      slot.set(cutForBudget(slot.value, Math.min(keep, slot.value.length - 1)));
    }
    size = jsonBytes(out);
  }
  if (size <= maxBytes) return out;
  return {
    content: [{ type: 'text', text: `The result was too large to send (${formatCount(size)} bytes).` }],
    isError: true,
  };
}

function cutForBudget(text: string, keep: number): string {
  const end = keep > 0 && isHighSurrogate(text.charCodeAt(keep - 1)) ? keep - 1 : Math.max(0, keep);
  return `${text.slice(0, end)}\n[cut: ${formatCount(text.length - end)} more characters over the result's size budget]`;
}

interface Slot {
  value: string;
  set(value: string): void;
}

/** Room each cut string takes for its note, in bytes. */
const NOTE_BYTES = 100;

/**
 * The largest length (in bytes) every string longer than it can be cut to so that all strings
 * fit `room` bytes, each cut one with its note.
 */
function commonLevel(sizes: number[], room: number): number {
  let low = 0;
  let high = Math.max(0, ...sizes);
  const total = (level: number) => sizes.reduce((sum, b) => sum + (b > level ? level + NOTE_BYTES : b), 0);
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (total(mid) <= room) low = mid;
    else high = mid;
  }
  return low;
}

/** Every string in the text blocks and the structured content, with a way to replace it. */
function stringSlots(result: CallToolResult): Slot[] {
  const slots: Slot[] = [];
  for (const block of result.content) {
    if (block.type === 'text') slots.push({ value: block.text, set: (v) => (block.text = v) });
  }
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (typeof value === 'string') slots.push({ value, set: (v) => (record[key] = v) });
      else walk(value);
    }
  };
  walk(result.structuredContent);
  return slots;
}

/**
 * More bytes than the result's JSON can take: a character takes at most 6 (an escape such as
 * \u0001), and every value and key some punctuation.
 */
function sizeBound(value: unknown): number {
  if (typeof value === 'string') return value.length * 6 + 2;
  if (value === null || typeof value !== 'object') return 32;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (const item of value) bytes += sizeBound(item) + 1;
    return bytes;
  }
  for (const key in value) bytes += key.length * 6 + 4 + sizeBound((value as Record<string, unknown>)[key]);
  return bytes;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
