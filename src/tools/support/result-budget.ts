import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatCount } from './text.js';

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
  for (let round = 0; size > maxBytes && round < 32; round++) {
    const slot = longestString(out);
    if (!slot) break;
    const bytes = jsonBytes(slot.value);
    // Characters to keep, in proportion, with room for the note (never more than it had).
    const keep = Math.floor((slot.value.length * Math.max(0, bytes - (size - maxBytes) - 200)) / bytes);
    slot.set(cutForBudget(slot.value, Math.min(keep, slot.value.length - 1)));
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

/** The longest string in the text blocks and the structured content. */
function longestString(result: CallToolResult): Slot | undefined {
  let best: Slot | undefined;
  const consider = (value: unknown, set: (v: string) => void) => {
    if (typeof value === 'string' && value.length > (best?.value.length ?? 0)) best = { value, set };
  };
  for (const block of result.content) {
    if (block.type === 'text') consider(block.text, (v) => (block.text = v));
  }
  const walk = (node: unknown) => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        consider(item, (v) => (node[i] = v));
        walk(item);
      });
    } else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        consider(record[key], (v) => (record[key] = v));
        walk(record[key]);
      }
    }
  };
  walk(result.structuredContent);
  return best;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
