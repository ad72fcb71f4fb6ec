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

import { BILLED_KINDS, type BilledKind, type Measure } from './kinds.js';

/** A line's largest size, newline included: appends of up to this many bytes are never split. */
export const MAX_LINE_BYTES = 4095;
/** Longer job ids are not stored (the call's own result still carries them). */
export const MAX_JOB_ID_BYTES = 2048;
const MAX_FILE_BYTES = 1024;

export const OUTCOMES = ['accepted', 'refused', 'unknown', 'declined'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface BeginRecord {
  type: 'begin';
  id: string;
  /** ISO time, UTC. */
  at: string;
  pid: number;
  host: string;
  /** The server process's random session id (pids are reused). */
  session: string;
  kind: BilledKind;
  tool: string;
  model: string;
  /** callHash() of the purchase: how a duplicate is recognised. */
  hash: string;
  /** The prompt's or text's first words. */
  words: string;
  /** The Idempotency-Key of a video submit. */
  key?: string;
  /** The amount expected, when known before sending. */
  expected?: number;
  unit: Measure;
}

export interface EndRecord {
  type: 'end';
  id: string;
  at: string;
  outcome: Outcome;
  job?: string;
  /** As the gateway reported it. */
  amount?: number;
  unit?: Measure;
  reason?: string;
  status?: string;
  file?: string;
}

export interface StatusRecord {
  type: 'status';
  at: string;
  job: string;
  status: string;
}

export type LedgerRecord = BeginRecord | EndRecord | StatusRecord;

/** One billed call as the files tell it so far: its begin, and its end once written. */
export interface CallEntry {
  id: string;
  begin?: BeginRecord;
  end?: EndRecord;
  /** When it was begun, in ms (the begin's `at`, parsed once). */
  beganAt: number;
  /** The day file its earliest record came from. */
  day: string;
}

/** What each field of a record must be: a string of at most n characters, a number, one of a list, a time. */
type Field =
  | { text: number; min?: number }
  | { number: 'int' | 'any' }
  | { oneOf: readonly string[] }
  | 'time';
type Shape = Record<string, { field: Field; optional?: true }>;

const need = (field: Field) => ({ field });
const may = (field: Field) => ({ field, optional: true as const });
const MEASURES: readonly Measure[] = ['seconds', 'chars', 'tokens', 'calls'];

// Checked by hand rather than with a schema library: this runs for every line every process
// appends, under the lock, and a generic validator costs several times the rest of a check.
const SHAPES: Record<LedgerRecord['type'], Shape> = {
  begin: {
    id: need({ text: 64, min: 1 }),
    at: need('time'),
    pid: need({ number: 'int' }),
    host: need({ text: 255 }),
    session: need({ text: 64 }),
    kind: need({ oneOf: BILLED_KINDS }),
    tool: need({ text: 64 }),
    model: need({ text: 256 }),
    hash: need({ text: 128 }),
    words: need({ text: 256 }),
    key: may({ text: 256 }),
    expected: may({ number: 'any' }),
    unit: need({ oneOf: MEASURES }),
  },
  end: {
    id: need({ text: 64, min: 1 }),
    at: need('time'),
    outcome: need({ oneOf: OUTCOMES }),
    job: may({ text: MAX_JOB_ID_BYTES }),
    amount: may({ number: 'any' }),
    unit: may({ oneOf: MEASURES }),
    reason: may({ text: 200 }),
    status: may({ text: 64 }),
    file: may({ text: MAX_FILE_BYTES }),
  },
  status: {
    at: need('time'),
    job: need({ text: MAX_JOB_ID_BYTES, min: 1 }),
    status: need({ text: 64 }),
  },
};

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function fits(value: unknown, field: Field): boolean {
  if (field === 'time')
    return typeof value === 'string' && TIME.test(value) && !Number.isNaN(Date.parse(value));
  if ('text' in field)
    return typeof value === 'string' && value.length <= field.text && value.length >= (field.min ?? 0);
  if ('oneOf' in field) return typeof value === 'string' && field.oneOf.includes(value);
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= 0 &&
    (field.number === 'any' || Number.isInteger(value))
  );
}

function isRecord(value: Record<string, unknown>, shape: Shape): boolean {
  for (const [name, { field, optional }] of Object.entries(shape)) {
    const v = value[name];
    if (v === undefined ? !optional : !fits(v, field)) return false;
  }
  return true;
}

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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'damaged';
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return 'damaged';
  const shape = SHAPES[type as LedgerRecord['type']];
  // A newer version's record type: not damage, just not this version's business.
  if (!Object.hasOwn(SHAPES, type) || !shape) return null;
  return isRecord(value as Record<string, unknown>, shape) ? (value as LedgerRecord) : 'damaged';
}

/** The UTC day a time falls on, as day files are named: `2026-11-24`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

export function dayFileName(day: string): string {
  return `${day}.jsonl`;
}
