// How the ledger recognises a call without keeping it: a hash over what makes two calls the same
// purchase, and the prompt's first words for a person (or an agent) to tell jobs apart.

import { createHash } from 'node:crypto';
import { withoutControlChars } from '../lib/text.js';

/** What makes two billed calls the same purchase. Never a key, token or other secret. */
export interface CallFingerprint {
  tool: string;
  model: string;
  /** The prompt or the text. */
  text: string;
  /** What the call is made from: image or video URLs, a file's content hash, a job id. */
  inputs?: Readonly<Record<string, unknown>>;
  /** Options that change what is made: duration, voice, format, size… (not waits or keys). */
  options?: Readonly<Record<string, unknown>>;
}

/** 128 bits of SHA-256, in hex: enough to tell purchases apart, short in a line. */
export function callHash(call: CallFingerprint): string {
  const canonical = canonicalJson([call.tool, call.model, call.text, call.inputs ?? {}, call.options ?? {}]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

const MAX_WORDS = 8;
const MAX_CHARS = 60;

/** The text's first words, at most 8 of them and 60 characters, marked with … when cut. */
export function firstWords(text: string): string {
  const words = withoutControlChars(text).split(/\s+/).filter(Boolean);
  let shown = words.slice(0, MAX_WORDS).join(' ');
  let cut = words.length > MAX_WORDS;
  if ([...shown].length > MAX_CHARS) {
    shown = [...shown]
      .slice(0, MAX_CHARS - 1)
      .join('')
      .trimEnd();
    cut = true;
  }
  return cut ? `${shown}…` : shown;
}

/** JSON with object keys sorted, so the same options in another order hash the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
