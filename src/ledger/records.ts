// The ledger's lines: one JSON object per line, in files a person can read (`jq`, `grep`, an
// editor). Three record types:
//
//   begin   a billed call about to be sent (written, and synced to disk, before it leaves)
//   end     what became of it: accepted (with the job id), refused, unknown or declined, and the
//           amount the gateway reported
//   status  the last known state of a video job, keyed by its job id
//
// A line never holds a secret, the prompt or the text: only a hash that recognises a duplicate
// and the first words. Every line fits one write() of under 4 KiB, so appends from several
// processes never interleave.

import { z } from 'zod';
import { BILLED_KINDS } from './kinds.js';

/** A line's largest size, newline included: appends of up to this many bytes are never split. */
export const MAX_LINE_BYTES = 4095;
/** Longer job ids are not stored (the call's own result still carries them). */
export const MAX_JOB_ID_BYTES = 2048;
const MAX_FILE_BYTES = 1024;

export const OUTCOMES = ['accepted', 'refused', 'unknown', 'declined'] as const;
export type Outcome = (typeof OUTCOMES)[number];

const text = (max: number) => z.string().max(max);
const time = z.iso.datetime({ offset: true });

const beginSchema = z.object({
  type: z.literal('begin'),
  id: text(64).min(1),
  at: time,
  pid: z.number().int().nonnegative(),
  host: text(255),
  session: text(64),
  kind: z.enum(BILLED_KINDS),
  tool: text(64),
  model: text(256),
  hash: text(128),
  words: text(256),
  key: text(256).optional(),
  expected: z.number().nonnegative().optional(),
  unit: text(16),
});

const endSchema = z.object({
  type: z.literal('end'),
  id: text(64).min(1),
  at: time,
  outcome: z.enum(OUTCOMES),
  job: text(MAX_JOB_ID_BYTES).optional(),
  amount: z.number().nonnegative().optional(),
  unit: text(16).optional(),
  reason: text(200).optional(),
  status: text(64).optional(),
  file: text(MAX_FILE_BYTES).optional(),
});

const statusSchema = z.object({
  type: z.literal('status'),
  at: time,
  job: text(MAX_JOB_ID_BYTES).min(1),
  status: text(64),
});

export type BeginRecord = z.infer<typeof beginSchema>;
export type EndRecord = z.infer<typeof endSchema>;
export type StatusRecord = z.infer<typeof statusSchema>;
export type LedgerRecord = BeginRecord | EndRecord | StatusRecord;

const recordSchema = z.discriminatedUnion('type', [beginSchema, endSchema, statusSchema]);
const KNOWN_TYPES = new Set(['begin', 'end', 'status']);

/** A record as one line, newline included; throws if it would not fit one atomic append. */
export function recordLine(record: LedgerRecord): Buffer {
  const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
  if (line.length > MAX_LINE_BYTES) throw new Error(`a ledger record of ${line.length} bytes is too long`);
  return line;
}

/**
 * What a line holds: a record (null for a record type this version does not know, read past),
 * and what was damaged, if anything.
 */
export interface ParsedLine {
  record: LedgerRecord | null;
  damage?: string;
}

/**
 * Reads one line. A line may be damaged: the end of a write cut short (a full disk, a crash)
 * followed by the next process's whole record on the same line. The record after the damage is
 * recovered, so one torn write costs no other call its entry.
 */
export function parseLine(line: string): ParsedLine {
  const whole = parseRecord(line);
  if (whole !== 'damaged') return { record: whole };
  const start = line.lastIndexOf('{"type":"');
  if (start > 0) {
    const tail = parseRecord(line.slice(start));
    if (tail !== 'damaged') return { record: tail, damage: `${start} damaged bytes before a whole record` };
  }
  return { record: null, damage: 'not a whole record' };
}

function parseRecord(line: string): LedgerRecord | null | 'damaged' {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'damaged';
  }
  const type = (value as { type?: unknown } | null)?.type;
  // A newer version's record type: not damage, just not this version's business.
  if (typeof type === 'string' && !KNOWN_TYPES.has(type)) return null;
  const parsed = recordSchema.safeParse(value);
  return parsed.success ? parsed.data : 'damaged';
}

/** The UTC day a time falls on, as day files are named: `2026-11-24`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

export function dayFileName(day: string): string {
  return `${day}.jsonl`;
}
