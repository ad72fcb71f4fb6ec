// Reading the day files into memory, incrementally: each file's read position is remembered and
// only bytes appended since are parsed, so checking a limit costs a stat and a short read.
// Damaged lines are skipped with a warning (through the caller), never a crash; a last line
// without its newline is kept back until it is complete (another process may be writing it).

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  type CallEntry,
  dayFileName,
  type LedgerRecord,
  MAX_LINE_BYTES,
  parseLine,
  type StatusRecord,
} from './records.js';
import type { Tallies } from './tallies.js';

/** A damaged line: the file, the byte it starts at (-1: the whole file), what is wrong. */
export type DamageReport = (file: string, offset: number, why: string) => void;

/** Reads one file from where the last read stopped. */
export class DayCursor {
  /** Bytes read so far: complete lines plus the held-back fragment. */
  private readTo = 0;
  private fragment = Buffer.alloc(0);
  /** The file as opened, with its inode: a file replaced under the same name is read anew. */
  private file: { fd: number; ino: number } | null = null;
  private lookedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly path: string,
    private readonly damaged: DamageReport,
    /** Lines this process appended and already knows: read past without parsing them again. */
    private readonly known: Set<string> = new Set(),
  ) {}

  /** The file's size as last read: what has been appended to it, damaged lines included. */
  get size(): number {
    return this.readTo;
  }

  /**
   * Parses what has been appended since the last read; a missing file has no records.
   * `atMostEveryMs`: look at the file no more often than this.
   */
  readNew(onRecord: (record: LedgerRecord) => void, atMostEveryMs = 0): void {
    if (atMostEveryMs > 0) {
      const now = performance.now();
      if (now - this.lookedAt < atMostEveryMs) return;
      this.lookedAt = now;
    }
    // One stat when nothing is new (the common case), and no exception for a missing file.
    const stat = statSync(this.path, { throwIfNoEntry: false });
    if (this.file && this.file.ino !== stat?.ino) {
      this.close();
      if (stat && this.readTo > 0) this.restart('was replaced (edited by hand?)');
    }
    const size = stat?.size ?? 0;
    if (size === this.readTo) return;
    if (size < this.readTo) this.restart('shrank (edited by hand?)');
    // Kept open between reads; the name is looked up again each time (the stat above).
    this.file ??= { fd: openSync(this.path, 'r'), ino: stat?.ino ?? 0 };
    while (this.readTo < size) {
      const chunk = Buffer.allocUnsafe(Math.min(size - this.readTo, READ_CHUNK));
      const got = readSync(this.file.fd, chunk, 0, chunk.length, this.readTo);
      if (got === 0) break;
      this.consume(chunk.subarray(0, got), onRecord);
    }
  }

  close(): void {
    if (this.file) closeSync(this.file.fd);
    this.file = null;
  }

  /** Reads the file again from the start: records merge by id, so none counts twice. */
  private restart(why: string): void {
    this.damaged(this.path, -1, `${why}; it is read again from the start`);
    this.readTo = 0;
    this.fragment = Buffer.alloc(0);
  }

  private consume(chunk: Buffer, onRecord: (record: LedgerRecord) => void): void {
    const data = this.fragment.length > 0 ? Buffer.concat([this.fragment, chunk]) : chunk;
    const dataStart = this.readTo - this.fragment.length;
    this.readTo += chunk.length;
    let start = 0;
    for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, start)) {
      const line = data.toString('utf8', start, newline);
      // A line this process appended was added to the index then: it is read past.
      if (!this.known.delete(line) && line.trim()) {
        const parsed = parseLine(line);
        if (parsed.damage) this.damaged(this.path, dataStart + start, parsed.damage);
        if (parsed.record) onRecord(parsed.record);
      }
      start = newline + 1;
    }
    this.fragment = Buffer.from(data.subarray(start));
    // No write is longer than a line: this much without a newline is damage, not a write under way.
    if (this.fragment.length > 2 * MAX_LINE_BYTES) {
      this.damaged(this.path, dataStart + start, 'a run of bytes with no line end');
      this.fragment = Buffer.alloc(0);
    }
  }
}

const READ_CHUNK = 1 << 20;
/** How often a past day's file (yesterday's, while the last 24 hours reach into it) is looked at. */
const PAST_DAY_LOOK_MS = 1_000;

/** The calls and job states read so far from the files being followed. */
export class LedgerIndex {
  readonly entries = new Map<string, CallEntry>();
  /** The last known state of each video job, by job id. */
  readonly statuses = new Map<string, StatusRecord>();
  private readonly cursors = new Map<string, DayCursor>();
  /** Begun calls by their hash, for the duplicate guard. */
  private readonly byHash = new Map<string, CallEntry[]>();
  /** Lines this process appended, until they are read back from the file. */
  private readonly ownLines = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly damaged: DamageReport,
    /** The running tallies of the calls, kept up with every record added. */
    readonly tallies: Tallies,
  ) {}

  /**
   * Reads what is new in the given days' files. Files of other days stop being followed, and
   * their calls are forgotten unless `keep` says otherwise (this session's own calls).
   */
  refresh(days: readonly string[], keep: (entry: CallEntry) => boolean): void {
    for (const day of [...this.cursors.keys()]) {
      if (days.includes(day)) continue;
      this.cursors.get(day)?.close();
      this.cursors.delete(day);
      for (const [id, entry] of this.entries) if (entry.day === day && !keep(entry)) this.entries.delete(id);
      for (const [job, status] of this.statuses) if (status.at.slice(0, 10) <= day) this.statuses.delete(job);
      this.byHash.clear();
      for (const entry of this.entries.values()) this.hashed(entry);
      this.tallies.rebuild(this.entries.values());
      // Own lines not read back yet are parsed then, and merge with the records already known.
      this.ownLines.clear();
    }
    for (const day of days) {
      let cursor = this.cursors.get(day);
      if (!cursor) {
        cursor = new DayCursor(join(this.dir, dayFileName(day)), this.damaged, this.ownLines);
        this.cursors.set(day, cursor);
      }
      // Only a process whose clock is behind still appends to a past day's file.
      const past = day !== days[days.length - 1];
      cursor.readNew((record) => this.add(record, day), past ? PAST_DAY_LOOK_MS : 0);
    }
  }

  /** Closes the files being followed (they are opened again when next read). */
  close(): void {
    for (const cursor of this.cursors.values()) cursor.close();
  }

  /** Adds a record read from a file. */
  add(record: LedgerRecord, day: string): void {
    const known = record.type === 'status' ? undefined : this.entries.get(record.id);
    if (known) this.tallies.changing(known);
    const entry = addRecord(this.entries, this.statuses, record, day);
    if (!entry) return;
    this.tallies.changed(entry);
    if (record.type === 'begin') this.hashed(entry);
  }

  /**
   * Adds records this process has just appended as `lines`: known at once, however soon their
   * day stops being followed, and not parsed again when read back from the file.
   */
  addOwn(records: readonly LedgerRecord[], day: string, lines: Buffer): void {
    for (const record of records) this.add(record, day);
    if (this.ownLines.size > 10_000) this.ownLines.clear(); // read back as any other line then
    for (const line of lines.toString('utf8').split('\n')) if (line) this.ownLines.add(line);
  }

  /** The begun calls with this hash. */
  withHash(hash: string): readonly CallEntry[] {
    return this.byHash.get(hash) ?? [];
  }

  /** How many bytes a followed day's file holds, as last read. */
  sizeOf(day: string): number {
    return this.cursors.get(day)?.size ?? 0;
  }

  private hashed(entry: CallEntry): void {
    const hash = entry.begin?.hash;
    if (hash === undefined) return;
    const same = this.byHash.get(hash);
    if (!same) this.byHash.set(hash, [entry]);
    else if (!same.includes(entry)) same.push(entry);
  }
}

/** Adds a record to the calls and job states it belongs to; returns its call (none for a status). */
export function addRecord(
  entries: Map<string, CallEntry>,
  statuses: Map<string, StatusRecord>,
  record: LedgerRecord,
  day: string,
): CallEntry | undefined {
  if (record.type === 'status') {
    const known = statuses.get(record.job);
    if (!known || known.at <= record.at) statuses.set(record.job, record);
    return undefined;
  }
  let entry = entries.get(record.id);
  if (!entry) {
    entry = { id: record.id, day, beganAt: Number.NaN };
    entries.set(record.id, entry);
  }
  if (record.type === 'begin') {
    entry.begin = record;
    entry.beganAt = Date.parse(record.at);
  } else entry.end = record;
  return entry;
}
