// The ledger of billed calls, shared by every server process of the user through one directory.
//
// A billed call is begun before its request leaves: under the directory's lock the ledger reads
// what other processes appended, answers a duplicate from an earlier call, checks GATEWAY_LIMITS
// and appends a `begin`; the lock is released and the line synced to disk before the call may go.
// The call is ended with its outcome and amount. A begin that is never ended (its process was
// killed, or the machine went down) reads as `unknown` and still counts: it may have been billed.
//
// Failing to record is failing closed: a call the ledger cannot begin is not sent
// (LedgerUnavailable says why). Ending never fails the call it ends: the call has happened.

import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../lib/log.js';
import { type Appended, appendLines, dayFiles, removeOldDayFiles } from './day-files.js';
import {
  type CallState,
  counts,
  type LimitRefusal,
  limitUse,
  refusal,
  refusalSentence,
  type View,
} from './evaluate.js';
import { type CallFingerprint, callHash, firstWords } from './fingerprint.js';
import {
  type BilledKind,
  DEFAULT_DUPLICATE_WINDOW_SECONDS,
  LONGEST_WINDOW_MS,
  MEASURE,
  RETENTION_DAYS,
} from './kinds.js';
import type { Limit } from './limits.js';
import { FileLock, LockTimeout, processAlive, removeDeadHolders } from './lock.js';
import type { Price } from './prices.js';
import { addRecord, DayCursor, LedgerIndex } from './reader.js';
import {
  type BeginRecord,
  type CallEntry,
  dayFileName,
  dayOf,
  type EndRecord,
  MAX_JOB_ID_BYTES,
  MAX_LINE_BYTES,
  type Outcome,
  recordLine,
  type StatusRecord,
} from './records.js';
import {
  callOf,
  type LedgerCall,
  type RecentJob,
  recentJobsOf,
  type UsageReport,
  usageOf,
} from './reports.js';
import { Tallies } from './tallies.js';

export type { CallState, LedgerCall, LimitRefusal, RecentJob, UsageReport };

export interface LedgerOptions {
  /** GATEWAY_LEDGER_DIR: made (0700) if missing. */
  dir: string;
  log: Logger;
  limits?: readonly Limit[];
  prices?: readonly Price[];
  /** GATEWAY_DUPLICATE_WINDOW_SECONDS; 0 turns the duplicate guard off. */
  duplicateWindowSeconds?: number;
  /** Day files older than this are removed. */
  retentionDays?: number;
  /** A day file this large takes no more begins: billed calls stop until the next UTC day. */
  maxDayFileBytes?: number;
  /** A begin without an end older than this reads as unknown even if its process lives on. */
  pendingBoundMs?: number;
  lockStaleMs?: number;
  lockWaitMs?: number;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
}

/** How soon the end of an accepted video job is on disk after the call returns. */
const END_SYNC_WITHIN_MS = 20;

export const LEDGER_DEFAULTS = {
  duplicateWindowSeconds: DEFAULT_DUPLICATE_WINDOW_SECONDS,
  retentionDays: RETENTION_DAYS,
  maxDayFileBytes: 16 * 1024 * 1024,
  pendingBoundMs: 2 * 3_600_000,
  lockStaleMs: 10_000,
  lockWaitMs: 20_000,
} as const;

/** A billed call about to be sent. */
export interface BillableCall extends CallFingerprint {
  kind: BilledKind;
  /** The Idempotency-Key a video submit is sent with: a retry of an unknown outcome reuses it. */
  idempotencyKey?: string;
  /** The amount expected, when known before sending: video seconds asked for, characters to speak. */
  expected?: number;
  /** Send even when an identical call is within the duplicate window (`allow_duplicate: true`). */
  allowDuplicate?: boolean;
}

export type BeginResult =
  /** Recorded and on disk: send the call, then end(id, …). */
  | { status: 'go'; id: string; hash: string }
  /** Over a limit: nothing may be sent. `sentence` says so for the result. */
  | { status: 'limited'; refusal: LimitRefusal; sentence: string }
  /**
   * An identical call within the duplicate window, newest first: accepted (answer with it, free),
   * pending (being sent right now) or unknown (retry with its idempotency key). Nothing recorded.
   */
  | { status: 'duplicate'; earlier: LedgerCall };

/** What became of a begun call. */
export interface CallEnd {
  outcome: Outcome;
  /** The job id of an accepted video submit. */
  jobId?: string;
  /** As the gateway reported it: video seconds, characters, audio seconds, tokens. */
  amount?: number;
  /** Why it was refused or declined, in a few words. */
  reason?: string;
  /** The job's status when accepted (queued, in_progress…). */
  status?: string;
  /** The file the call saved (speech), so a duplicate can be answered with it. */
  file?: string;
}

/** The ledger cannot record a billed call, so the call is not sent: the message says why. */
export class LedgerUnavailable extends Error {
  override name = 'LedgerUnavailable';
}

/** A ledger opened only to report on it (Ledger.read). */
export type LedgerReader = Pick<Ledger, 'dir' | 'usage' | 'check' | 'close'>;

export class Ledger {
  readonly sessionId = randomBytes(6).toString('base64url');
  readonly sessionStartedAt: number;
  private readonly host = hostname().slice(0, 255);
  private readonly index: LedgerIndex;
  private readonly lock: FileLock;
  private readonly now: () => number;
  private readonly limits: readonly Limit[];
  private readonly prices: readonly Price[];
  private readonly settings: Required<Omit<LedgerOptions, 'limits' | 'prices' | 'now' | 'log' | 'dir'>>;
  /** This process's begun calls not yet ended, with their kinds. */
  private readonly inFlight = new Map<string, BilledKind>();
  private readonly warned = new Set<string>();
  private turn: Promise<unknown> = Promise.resolve();
  /** Ends being synced to disk (close() waits for them). */
  private readonly syncing = new Set<Promise<void>>();
  private sweptDay = '';
  /** Calls begun, for their ids. */
  private calls = 0;

  static open(options: LedgerOptions): Ledger {
    try {
      mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new LedgerUnavailable(
        `The ledger of billed calls cannot be made in ${options.dir} (${codeOf(error)}): set GATEWAY_LEDGER_DIR to a directory this user can write.`,
      );
    }
    return new Ledger(options, false);
  }

  /**
   * The ledger as it stands, for a report (`gateway-tools-mcp usage`, doctor): nothing is made,
   * removed or written, and a directory that does not exist reads as a ledger with no calls.
   */
  static read(options: LedgerOptions): LedgerReader {
    return new Ledger(options, true);
  }

  private constructor(
    private readonly options: LedgerOptions,
    /** Opened by read(): old day files and dead lock holders are left for the servers to remove. */
    private readonly readOnly: boolean,
  ) {
    this.now = options.now ?? Date.now;
    this.sessionStartedAt = this.now();
    this.limits = options.limits ?? [];
    this.prices = options.prices ?? [];
    this.settings = {
      duplicateWindowSeconds: options.duplicateWindowSeconds ?? LEDGER_DEFAULTS.duplicateWindowSeconds,
      retentionDays: options.retentionDays ?? LEDGER_DEFAULTS.retentionDays,
      maxDayFileBytes: options.maxDayFileBytes ?? LEDGER_DEFAULTS.maxDayFileBytes,
      pendingBoundMs: options.pendingBoundMs ?? LEDGER_DEFAULTS.pendingBoundMs,
      lockStaleMs: options.lockStaleMs ?? LEDGER_DEFAULTS.lockStaleMs,
      lockWaitMs: options.lockWaitMs ?? LEDGER_DEFAULTS.lockWaitMs,
    };
    this.index = new LedgerIndex(options.dir, this.damaged, new Tallies(this.prices, this.sessionId));
    this.lock = new FileLock(join(options.dir, '.lock'), {
      staleMs: this.settings.lockStaleMs,
      waitMs: this.settings.lockWaitMs,
      host: this.host,
      onTakeover: (holder) => options.log.warn(`ledger: took over the lock of ${options.dir} from ${holder}`),
    });
    if (!readOnly && this.limits.some((l) => l.subject === 'cost') && this.prices.length === 0) {
      options.log.warn(
        'GATEWAY_LIMITS has a cost limit but GATEWAY_PRICES is empty: no call has a cost, so it never stops one',
      );
    }
  }

  get dir(): string {
    return this.options.dir;
  }

  /**
   * Records a billed call before it is sent, after the duplicate guard and the limits, under the
   * lock every process takes for this. Throws LedgerUnavailable when it cannot record it.
   */
  async begin(call: BillableCall): Promise<BeginResult> {
    const hash = callHash(call);
    const begun = await this.inTurn(() => this.beginLocked(call, hash)).catch((error) => {
      // A file system error (unreadable file, no space): the call cannot be recorded, so not sent.
      throw (error as NodeJS.ErrnoException).code ? unavailable(this.dir, error) : error;
    });
    if (!('appended' in begun)) return begun.result;
    try {
      await begun.appended.durable();
    } catch (error) {
      await this.end(begun.result.id, { outcome: 'declined', reason: 'ledger not synced' });
      throw new LedgerUnavailable(
        `Not sent, and nothing billed: the ledger of billed calls in ${this.dir} cannot be written to disk (${codeOf(error)}).`,
      );
    }
    return begun.result;
  }

  private async beginLocked(
    call: BillableCall,
    hash: string,
  ): Promise<
    { result: BeginResult } | { result: Extract<BeginResult, { status: 'go' }>; appended: Appended }
  > {
    this.refresh(); // the bulk of what is new, read before waiting for the lock
    let release: () => void;
    try {
      release = await this.lock.acquire();
    } catch (error) {
      if (!(error instanceof LockTimeout)) throw unavailable(this.dir, error);
      throw new LedgerUnavailable(
        `Not sent, and nothing billed: the ledger of billed calls is busy (${error.message}). Try again shortly.`,
      );
    }
    try {
      const now = this.now();
      this.readNew(now);
      if (!call.allowDuplicate) {
        const earlier = this.duplicateOf(hash, call.idempotencyKey, now);
        if (earlier) return { result: { status: 'duplicate', earlier } };
      }
      const day = dayOf(now);
      const begin = this.beginRecord(call, hash, now);
      const held = refusal(this.view(now), this.limits, call);
      if (held) {
        const sentence = refusalSentence(held, now);
        this.recordRefusal(day, begin, held);
        return { result: { status: 'limited', refusal: held, sentence } };
      }
      const line = recordLine(begin);
      if (this.index.sizeOf(day) + line.length > this.settings.maxDayFileBytes) {
        throw new LedgerUnavailable(
          `Not sent, and nothing billed: today's ledger of billed calls (${join(this.dir, dayFileName(day))}) is full, ` +
            `which takes tens of thousands of calls: look for a loop. Billed calls resume at 00:00 UTC.`,
        );
      }
      let appended: Appended;
      try {
        appended = appendLines(this.dir, day, line);
      } catch (error) {
        throw unavailable(this.dir, error);
      }
      this.index.addOwn([begin], day, line);
      this.inFlight.set(begin.id, call.kind);
      return { result: { status: 'go', id: begin.id, hash }, appended };
    } finally {
      release();
    }
  }

  /** A call's id: this ledger's random prefix and a count, unique across processes and restarts. */
  private nextId(): string {
    this.calls++;
    return `${this.sessionId}${this.calls.toString(36)}`;
  }

  private beginRecord(call: BillableCall, hash: string, now: number): BeginRecord {
    const key = call.idempotencyKey && call.idempotencyKey.length <= 256 ? call.idempotencyKey : undefined;
    const expected = call.expected !== undefined && Number.isFinite(call.expected) && call.expected >= 0;
    return {
      type: 'begin',
      id: this.nextId(),
      at: new Date(now).toISOString(),
      pid: process.pid,
      host: this.host,
      session: this.sessionId,
      kind: call.kind,
      tool: call.tool.slice(0, 64),
      model: call.model.slice(0, 256),
      hash,
      words: firstWords(call.text),
      ...(key ? { key } : {}),
      ...(expected ? { expected: call.expected } : {}),
      unit: MEASURE[call.kind],
    };
  }

  /** A refused call is recorded as not sent (begin and end in one append), unless the day is full. */
  private recordRefusal(day: string, begin: BeginRecord, held: LimitRefusal): void {
    const end: EndRecord = {
      type: 'end',
      id: begin.id,
      at: begin.at,
      outcome: 'declined',
      reason: `limit ${held.limit.text}`,
    };
    const lines = Buffer.concat([recordLine(begin), recordLine(end)]);
    if (this.index.sizeOf(day) + lines.length > this.settings.maxDayFileBytes) return;
    try {
      appendLines(this.dir, day, lines).drop();
      this.index.addOwn([begin, end], day, lines);
    } catch (error) {
      this.options.log.warn(`ledger: could not record a refused call (${codeOf(error)})`);
    }
  }

  /**
   * Records what became of a begun call. Never throws: the call has happened, and a failure to
   * record it leaves its begin, which reads as unknown and still counts.
   */
  async end(id: string, result: CallEnd): Promise<void> {
    const kind = this.inFlight.get(id);
    const now = this.now();
    let job = result.jobId;
    if (job !== undefined && Buffer.byteLength(job) > MAX_JOB_ID_BYTES) {
      this.options.log.warn(`ledger: job id of call ${id} is too long to record; it is listed without it`);
      job = undefined;
    }
    const file =
      result.file !== undefined && Buffer.byteLength(result.file) <= 1024 ? result.file : undefined;
    const amount =
      result.amount !== undefined && Number.isFinite(result.amount) && result.amount >= 0
        ? result.amount
        : undefined;
    const record: EndRecord = {
      type: 'end',
      id,
      at: new Date(now).toISOString(),
      outcome: result.outcome,
      ...(job !== undefined ? { job } : {}),
      ...(amount !== undefined ? { amount, ...(kind ? { unit: MEASURE[kind] } : {}) } : {}),
      ...(result.reason ? { reason: result.reason.slice(0, 200) } : {}),
      ...(result.status ? { status: result.status.slice(0, 64) } : {}),
      ...(file ? { file } : {}),
    };
    try {
      const day = dayOf(now);
      const line = endLine(record);
      const appended = appendLines(this.dir, day, line);
      this.index.addOwn([record], day, line);
      // A job's id should survive a crash: it is how the job is found again. It is synced within
      // END_SYNC_WITHIN_MS, without holding the call back (or with the next begin's sync, when
      // that comes first). An end lost in a crash before then leaves the begin, which reads as
      // unknown, counts, and is listed with its idempotency key: the safe side.
      if (job !== undefined) this.syncLater(appended, id);
      else appended.drop();
    } catch (error) {
      this.options.log.warn(
        `ledger: could not record the end of call ${id} (${codeOf(error)}); it is listed as unknown`,
      );
    } finally {
      this.inFlight.delete(id);
    }
  }

  private syncLater(appended: Appended, id: string): void {
    const synced = appended
      .durableSoon(END_SYNC_WITHIN_MS)
      .catch((error) =>
        this.options.log.warn(`ledger: could not sync the end of call ${id} to disk (${codeOf(error)})`),
      )
      .finally(() => this.syncing.delete(synced));
    this.syncing.add(synced);
  }

  /** Records a video job's state as last seen (a poll), for recentJobs(). Never throws. */
  async noteJobStatus(jobId: string, status: string): Promise<void> {
    try {
      this.refresh();
      if (this.index.statuses.get(jobId)?.status === status) return;
      if (Buffer.byteLength(jobId) > MAX_JOB_ID_BYTES) return;
      const now = this.now();
      const record: StatusRecord = {
        type: 'status',
        at: new Date(now).toISOString(),
        job: jobId,
        status: status.slice(0, 64),
      };
      const day = dayOf(now);
      const line = recordLine(record);
      appendLines(this.dir, day, line).drop();
      this.index.addOwn([record], day, line);
    } catch (error) {
      this.options.log.warn(`ledger: could not record the status of job ${jobId} (${codeOf(error)})`);
    }
  }

  /**
   * Whether a call would fit the limits now, without recording anything: for previews (doctor,
   * usage). begin() checks again under the lock.
   */
  async check(
    kind: BilledKind,
    model: string,
    expected?: number,
  ): Promise<{ ok: true } | { ok: false; refusal: LimitRefusal; sentence: string }> {
    this.readForReport();
    const now = this.now();
    const held = refusal(this.view(now), this.limits, {
      kind,
      model,
      ...(expected !== undefined ? { expected } : {}),
    });
    return held ? { ok: false, refusal: held, sentence: refusalSentence(held, now) } : { ok: true };
  }

  /** Video submits of every process, newest first, reading older day files only as far as needed. */
  async recentJobs(limit = 20): Promise<RecentJob[]> {
    this.readForReport();
    const entries = new Map([...this.index.entries].map(([id, entry]) => [id, { ...entry }]));
    const statuses = new Map(this.index.statuses);
    const context = this.reportContext();
    let jobs = recentJobsOf(entries.values(), statuses, context, limit);
    const followed = this.followedDays(this.now());
    for (const day of dayFiles(this.dir)) {
      if (jobs.length >= limit) break;
      if (followed.includes(day)) continue;
      const cursor = new DayCursor(join(this.dir, dayFileName(day)), this.damaged);
      try {
        cursor.readNew((record) => addRecord(entries, statuses, record, day));
      } finally {
        cursor.close();
      }
      jobs = recentJobsOf(entries.values(), statuses, context, limit);
    }
    return jobs;
  }

  /** Calls per kind in the last hour, day and this session; the limits; the latest calls. */
  async usage(latest = 10): Promise<UsageReport> {
    this.readForReport();
    const now = this.now();
    const view = this.view(now);
    return usageOf(
      this.index.entries.values(),
      {
        ...this.reportContext(),
        now,
        dir: this.dir,
        sessionStartedAt: this.sessionStartedAt,
        pricesSet: this.prices.length > 0,
      },
      this.limits.map((limit) => limitUse(view, limit)),
      latest,
    );
  }

  /** Waits for begins under way and ends being synced, and removes this process's lock holder file. */
  async close(): Promise<void> {
    await this.turn;
    await Promise.all(this.syncing);
    this.lock.close();
    this.index.close();
  }

  /** refresh(), with a file system error said as LedgerUnavailable. */
  private readForReport(): void {
    try {
      this.refresh();
    } catch (error) {
      if (!(error as NodeJS.ErrnoException).code) throw error;
      throw new LedgerUnavailable(
        `The ledger of billed calls in ${this.dir} cannot be read (${codeOf(error)}); check GATEWAY_LEDGER_DIR.`,
      );
    }
  }

  private refresh(): void {
    const now = this.now();
    const today = dayOf(now);
    if (today !== this.sweptDay && !this.readOnly) {
      this.sweptDay = today;
      try {
        const removed = removeOldDayFiles(this.dir, now, this.settings.retentionDays);
        if (removed.length)
          this.options.log.debug(`ledger: removed ${removed.join(', ')} (older than retention)`);
        removeDeadHolders(this.dir, this.host);
      } catch (error) {
        this.options.log.warn(
          `ledger: could not remove old day files or dead lock holders (${codeOf(error)})`,
        );
      }
    }
    this.readNew(now);
    // Only a day file that is not there can hide a folder that is a file (see assertFolder).
    if (this.index.sizeOf(today) === 0) assertFolder(this.dir);
  }

  /** Reads what other processes appended since the last read. */
  private readNew(now: number): void {
    this.index.refresh(this.followedDays(now), (entry) => entry.begin?.session === this.sessionId);
  }

  /** The days whose files hold every call a limit or the duplicate guard can see: today and yesterday. */
  private followedDays(now: number): string[] {
    const first = dayOf(now - LONGEST_WINDOW_MS);
    const today = dayOf(now);
    return first === today ? [today] : [first, today];
  }

  private duplicateOf(hash: string, key: string | undefined, now: number): LedgerCall | null {
    const windowMs = this.settings.duplicateWindowSeconds * 1000;
    if (windowMs <= 0) return null;
    let found: CallEntry | undefined;
    for (const entry of this.index.withHash(hash)) {
      const begin = entry.begin;
      if (!begin || !(entry.beganAt > now - windowMs)) continue;
      // A retry with the same idempotency key is how an unknown outcome is resolved safely.
      if (key !== undefined && begin.key === key) continue;
      if (!counts(this.stateOf(entry))) continue;
      if (!found || begin.at > (found.begin as BeginRecord).at) found = entry;
    }
    return found ? callOf(found, this.reportContext()) : null;
  }

  private readonly stateOf = (entry: CallEntry): CallState => {
    if (entry.end) return entry.end.outcome;
    const begin = entry.begin;
    if (!begin) return 'unknown';
    if (begin.session === this.sessionId) return this.inFlight.has(entry.id) ? 'pending' : 'unknown';
    if (this.now() - entry.beganAt > this.settings.pendingBoundMs) return 'unknown';
    if (begin.host === this.host && !processAlive(begin.pid)) return 'unknown';
    return 'pending';
  };

  private view(now: number): View {
    return {
      entries: this.index.entries,
      quick: this.index.tallies,
      stateOf: this.stateOf,
      sessionId: this.sessionId,
      prices: this.prices,
      now,
    };
  }

  private reportContext() {
    return { stateOf: this.stateOf, prices: this.prices, sessionId: this.sessionId };
  }

  /** Damaged lines are reported once each, however often their file is read. */
  private readonly damaged = (file: string, offset: number, why: string): void => {
    const key = `${file}:${offset}`;
    if (this.warned.has(key)) return;
    if (this.warned.size > 10_000) this.warned.clear();
    this.warned.add(key);
    this.options.log.warn(
      offset < 0
        ? `ledger: ${file} ${why}`
        : `ledger: skipped a damaged line in ${file} at byte ${offset} (${why})`,
    );
  };

  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const next = this.turn.then(run, run);
    this.turn = next.catch(() => undefined);
    return next;
  }
}

/** The end as one line: the job id comes first, so what else does not fit is left out. */
function endLine(record: EndRecord): Buffer {
  const fitted = { ...record };
  for (const optional of ['file', 'reason', 'status'] as const) {
    if (Buffer.byteLength(JSON.stringify(fitted)) < MAX_LINE_BYTES) break;
    delete fitted[optional];
  }
  return recordLine(fitted);
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
}

function unavailable(dir: string, error: unknown): LedgerUnavailable {
  return new LedgerUnavailable(
    `Not sent, and nothing billed: the ledger of billed calls in ${dir} cannot be written (${codeOf(error)}); ` +
      'check the disk and the permissions of GATEWAY_LEDGER_DIR.',
  );
}

/**
 * The ledger's folder is a folder, or does not exist yet. Checked apart from the day files, as
 * Node 24 (unlike Node 20) reads a path below a file as missing where `throwIfNoEntry: false` is asked.
 */
function assertFolder(dir: string): void {
  try {
    if (!statSync(dir).isDirectory()) {
      throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
