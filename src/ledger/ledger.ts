// The ledger of billed calls, shared by every server process of the user (SQLite, one file in
// GATEWAY_LEDGER_DIR) or of a team (PostgreSQL, GATEWAY_LEDGER_URL).
//
// A billed call is begun before its request leaves: in one database transaction that no other
// begin interleaves with, the ledger answers a duplicate from an earlier call, checks
// GATEWAY_LIMITS and the caller's GATEWAY_LIMITS_PER_USER and records the begin, with who called;
// the commit is on disk before the call may go. The call is ended with its outcome and amount. A
// begin that is never ended (its process was killed, or the machine went down) reads as `unknown`
// and still counts: it may have been billed.
//
// Failing to record is failing closed: a call the ledger cannot begin is not sent
// (LedgerUnavailable says why). Ending never fails the call it ends: the call has happened.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type BilledKind,
  DEFAULT_DUPLICATE_WINDOW_SECONDS,
  PERIOD_MS,
  periodSpan,
  REPORT_PERIODS,
  RETENTION_DAYS,
} from '../config/billed-kinds.js';
import type { Limit } from '../config/limits.js';
import type { Price } from '../config/prices.js';
import type { Logger } from '../lib/log.js';
import { withoutCredentials } from '../lib/urls.js';
import { codeOf, type Database, LedgerUnavailable, type Statements } from './database.js';
import {
  type CallState,
  type Crossing,
  crossingSentence,
  judge,
  type LimitRefusal,
  type LimitUse,
  limitUse,
  refusalSentence,
  type View,
} from './evaluate.js';
import { type CallFingerprint, callHash, firstWords } from './fingerprint.js';
import {
  callOf,
  type LedgerCall,
  type PersonUsage,
  type RecentJob,
  type ReportContext,
  recentJobsOf,
  type UsageReport,
  usageByPersonOf,
  usageOf,
} from './reports.js';
import * as sql from './sql.js';
import { openSqlite } from './sqlite.js';

export type { CallState, Crossing, LedgerCall, LimitRefusal, PersonUsage, RecentJob, UsageReport };
export { crossingSentence, LedgerUnavailable };

export interface LedgerOptions {
  /** GATEWAY_LEDGER_DIR: the SQLite ledger's folder, made (0700) if missing. */
  dir: string;
  /** GATEWAY_LEDGER_URL: a PostgreSQL database instead, shared across hosts. */
  url?: string;
  log: Logger;
  /** GATEWAY_LIMITS: everyone's calls together. */
  limits?: readonly Limit[];
  /** GATEWAY_LIMITS_PER_USER: each person's calls apart. */
  limitsPerUser?: readonly Limit[];
  prices?: readonly Price[];
  /** GATEWAY_DUPLICATE_WINDOW_SECONDS; 0 turns the duplicate guard off. */
  duplicateWindowSeconds?: number;
  /** Calls older than this are removed… */
  retentionDays?: number;
  /** …except this many recorded last, whatever their times (a wrong clock cannot push them out). */
  keptCalls?: number;
  /** A call not ended after this long reads as unknown even if its process lives on. */
  pendingBoundMs?: number;
  /** How long a begin waits for another process's transaction before the call is refused. */
  waitMs?: number;
  /** The SQLite ledger's clock instead of the kernel's (ms since the epoch); tests move it. */
  now?: () => number;
}

const DEFAULTS = {
  duplicateWindowSeconds: DEFAULT_DUPLICATE_WINDOW_SECONDS,
  retentionDays: RETENTION_DAYS,
  keptCalls: 10_000,
  pendingBoundMs: 2 * 3_600_000,
  waitMs: 5_000,
};

/** How often old calls are removed, at most. */
const SWEEP_EVERY_MS = 3_600_000;
/** Calls not ended that a usage report looks at one by one, at most. */
const OPEN_CALLS_READ = 10_000;
/** Longer job ids are not stored (the call's own result still carries them). */
const MAX_JOB_ID_BYTES = 2048;

/** Who calls: a person (an OAuth token's subject, or `local:<user>`) and the client they call through. */
export interface Person {
  id: string;
  client?: string;
}

/** A billed call about to be sent, and who it is for. */
export interface BillableCall extends CallFingerprint {
  kind: BilledKind;
  by: Person;
  /** The Idempotency-Key a video submit is sent with: a retry of an unknown outcome reuses it. */
  idempotencyKey?: string;
  /** The amount expected, when known before sending: video seconds asked for, characters to speak. */
  expected?: number;
  /** The argument that gives the amount, when the gateway does not report it on acceptance. */
  amountArgument?: string;
  /** Send even when an identical call is within the duplicate window (`allow_duplicate: true`). */
  allowDuplicate?: boolean;
}

export type BeginResult =
  /** Recorded and on disk: send the call, then end(id, …). `crossed`: the limits it takes past 80 % or 100 %. */
  | { status: 'go'; id: string; hash: string; crossed: Crossing[] }
  /** Over a limit: nothing may be sent. `sentence` says so for the result. */
  | { status: 'limited'; refusal: LimitRefusal; sentence: string }
  /**
   * An identical call within the duplicate window, newest first: accepted (answer with it, free),
   * pending (being sent right now) or unknown (retry with its idempotency key). Nothing recorded.
   */
  | { status: 'duplicate'; earlier: LedgerCall };

/** A begin recorded once its transaction commits: its row's number when the insert is answered. */
type Begun = { status: 'go'; seq: Promise<number>; crossed: Crossing[] };

/** What check() found: the call may be asked for and begun, or a limit refuses it now. */
export type CheckResult = { status: 'ok' } | { status: 'limited'; refusal: LimitRefusal; sentence: string };

/**
 * What became of a begun call: the job id of an accepted video submit, the amount as the gateway
 * reported it (video seconds, characters, audio seconds, tokens), why it was refused or declined,
 * the job's status when accepted, the file it saved (speech: a duplicate is answered with it).
 */
export interface CallEnd {
  outcome: sql.Outcome;
  jobId?: string;
  amount?: number;
  reason?: string;
  status?: string;
  file?: string;
}

/** A ledger opened only to report on it (Ledger.read). */
export type LedgerReader = Pick<Ledger, 'where' | 'usage' | 'usageByPerson' | 'exportCalls' | 'close'>;

export class Ledger {
  readonly sessionId = randomBytes(6).toString('base64url');
  private readonly host = hostname().slice(0, 255);
  private readonly limits: readonly Limit[];
  private readonly prices: readonly Price[];
  private readonly settings: typeof DEFAULTS;
  /** This process's begun calls not yet ended: their row numbers, by id. */
  private readonly inFlight = new Map<string, number>();
  /** The last status this process noted per job, so a poll that saw nothing new writes nothing. */
  private readonly noted = new Map<string, string>();
  private opened: Promise<Database> | undefined;
  private closed = false;
  private sweptAt = Number.NEGATIVE_INFINITY;
  /** A removal of old calls under way (close() waits for it). */
  private sweeping: Promise<void> = Promise.resolve();
  private startedAt = Date.now();
  /** Calls begun, for their ids. */
  private calls = 0;

  /** The ledger for a server: made on first use; a billed call it cannot record is not sent. */
  static open(options: LedgerOptions): Ledger {
    return new Ledger(options, false);
  }

  /**
   * The ledger as it stands, for a report (`gateway-tools-mcp usage`, doctor, `ledger export`):
   * nothing is made, removed or written, and a ledger not made yet reads as one with no calls.
   */
  static read(options: LedgerOptions): LedgerReader {
    return new Ledger(options, true);
  }

  private constructor(
    private readonly options: LedgerOptions,
    private readonly readOnly: boolean,
  ) {
    this.limits = [
      ...(options.limits ?? []),
      ...(options.limitsPerUser ?? []).map((limit) => ({ ...limit, perUser: true })),
    ];
    this.prices = options.prices ?? [];
    const given = (name: keyof typeof DEFAULTS) => [name, options[name] ?? DEFAULTS[name]];
    this.settings = Object.fromEntries(
      Object.keys(DEFAULTS).map((name) => given(name as keyof typeof DEFAULTS)),
    );
    if (!readOnly && this.limits.some((l) => l.subject === 'cost') && this.prices.length === 0)
      options.log.warn(
        'GATEWAY_LIMITS has a cost limit but GATEWAY_PRICES is empty: no call has a cost, so it never stops one',
      );
  }

  /** When this session began, by the ledger's clock once it is opened. */
  get sessionStartedAt(): number {
    return this.startedAt;
  }

  /** Where the ledger is: its folder, or the database URL without its password. */
  get where(): string {
    return this.options.url ? withoutCredentials(this.options.url) : this.options.dir;
  }

  /**
   * Records a billed call before it is sent, after the duplicate guard and the limits, in one
   * transaction no other begin interleaves with. Throws LedgerUnavailable when it cannot record it.
   */
  async begin(call: BillableCall): Promise<BeginResult> {
    const hash = callHash(call);
    const row = this.newCall(call, hash);
    const windowMs = this.settings.duplicateWindowSeconds * 1000;
    // The look-up is sent before the clock is awaited and the insert is not awaited: PostgreSQL
    // then sends each with the statement beside it (database.ts).
    const result = await (await this.store()).transaction(
      async (tx): Promise<Exclude<BeginResult, { status: 'go' }> | Begun> => {
        const earlier =
          !call.allowDuplicate && windowMs > 0
            ? await sql.duplicateOf(tx, hash, windowMs, row.key, row.person)
            : null;
        const now = await tx.now();
        if (earlier) return { status: 'duplicate', earlier: callOf(earlier, this.reportContext(now)) };
        const judged = await this.limited(tx, now, call, row);
        if ('status' in judged) return judged;
        const seq = sql.insertCall(tx, row);
        seq.catch(() => undefined); // its failure fails the transaction
        return { status: 'go', seq, crossed: judged.crossed };
      },
      this.scopeOf(call.kind, hash),
    );
    this.sweepSoon();
    if (result.status !== 'go') return result;
    this.inFlight.set(row.id, await result.seq);
    return { status: 'go', id: row.id, hash, crossed: result.crossed };
  }

  /**
   * Whether the limits would refuse the call now, without holding a place for it: asked before
   * the user is asked to approve a call, so that no one approves what would be refused. A call
   * refused here is recorded as declined by its limit, as begin() records it.
   */
  async check(call: BillableCall): Promise<CheckResult> {
    const row = this.newCall(call, callHash(call));
    return (await this.store()).transaction(async (tx) => {
      const judged = await this.limited(tx, await tx.now(), call, row);
      return 'status' in judged ? judged : { status: 'ok' as const };
    });
  }

  /**
   * The refusal of a limit the call would pass, recorded as a call declined by it; else the
   * limits it takes past 80 % or 100 %.
   */
  private async limited(
    tx: Statements,
    now: number,
    call: BillableCall,
    row: sql.NewCall,
  ): Promise<{ crossed: Crossing[] } | Exclude<CheckResult, { status: 'ok' }>> {
    const { refusal, crossed } = await judge(this.view(tx, now, row.person), this.limits, call);
    if (!refusal) return { crossed };
    const reason = `limit ${refusal.limit.text}${refusal.limit.perUser ? ' per user' : ''}`;
    await sql.insertCall(tx, row, { ...NO_END, reason });
    return { status: 'limited' as const, refusal, sentence: refusalSentence(refusal, now) };
  }

  /** Records a call that was never begun as declined (the user said no): nothing was sent. */
  async decline(call: BillableCall, reason: string): Promise<void> {
    const row = this.newCall(call, callHash(call));
    const end = { ...NO_END, reason: reason.slice(0, 200) };
    await (await this.store()).transaction((tx) => sql.insertCall(tx, row, end), `call ${row.hash}`);
  }

  /**
   * What a begin decides about: the limits, when one counts calls of this kind (a cost limit counts
   * every kind), so it runs apart from every other such begin; else only whether it repeats an
   * earlier call, so it runs apart from those of the same hash alone.
   */
  private scopeOf(kind: BilledKind, hash: string): string | undefined {
    return this.limits.some((limit) => limit.subject === 'cost' || limit.subject === kind)
      ? undefined
      : `call ${hash}`;
  }

  /**
   * Records what became of a begun call. Never throws: the call has happened, and a failure to
   * record it leaves its begin, which reads as unknown and still counts.
   */
  async end(id: string, result: CallEnd): Promise<void> {
    const seq = this.inFlight.get(id);
    if (seq === undefined) return;
    const job = result.jobId && Buffer.byteLength(result.jobId) <= MAX_JOB_ID_BYTES ? result.jobId : null;
    if (result.jobId && !job)
      this.options.log.warn(`ledger: job id of call ${id} is too long to record; it is listed without it`);
    const end: sql.CallEndRow = {
      outcome: result.outcome,
      job,
      amount: amountOrNull(result.amount),
      reason: result.reason?.slice(0, 200) ?? null,
      status: result.status?.slice(0, 64) ?? null,
      file: result.file !== undefined && Buffer.byteLength(result.file) <= 1024 ? result.file : null,
    };
    try {
      await sql.endCall(await this.store(), seq, end);
    } catch (error) {
      this.options.log.warn(
        `ledger: could not record the end of call ${id} (${codeOf(error)}); it is listed as unknown`,
      );
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** Records a video job's state as last seen (a poll), for recentJobs(). Never throws. */
  async noteJobStatus(jobId: string, status: string): Promise<void> {
    const state = status.slice(0, 64);
    if (this.noted.get(jobId) === state || Buffer.byteLength(jobId) > MAX_JOB_ID_BYTES) return;
    try {
      await sql.noteStatus(await this.store(), jobId, state);
      if (this.noted.size > 1_000) this.noted.clear();
      this.noted.set(jobId, state);
    } catch (error) {
      this.options.log.warn(`ledger: could not record the status of job ${jobId} (${codeOf(error)})`);
    }
  }

  /** Video submits of every process (of one person's, when given), newest first. */
  async recentJobs(limit = 20, person?: string): Promise<RecentJob[]> {
    const db = await this.store();
    const now = await db.now();
    const only = { videos: true, person: person === undefined ? undefined : personKey(person) };
    const rows = await sql.latestCalls(db, limit, only);
    const statuses = await sql.jobStatuses(
      db,
      rows.flatMap((row) => (row.job ? [row.job] : [])),
    );
    return recentJobsOf(rows, statuses, this.reportContext(now));
  }

  /**
   * Calls per kind in the last hour, day and this session, everyone's and `person`'s own; the
   * limits (per-person ones as `person`'s, left out without a person); the latest calls.
   */
  async usage(latest = 10, whose?: string): Promise<UsageReport> {
    const person = whose === undefined ? undefined : personKey(whose);
    const db = await this.store();
    const now = await db.now();
    const ctx = this.reportContext(now);
    // Calls not ended are counted as billed; those no longer being sent are also unknown.
    const unknownOpen = { all: { hour: 0, day: 0, session: 0 }, mine: { hour: 0, day: 0, session: 0 } };
    for (const open of await sql.openCalls(
      db,
      Math.min(now - PERIOD_MS.day, this.startedAt),
      OPEN_CALLS_READ,
    )) {
      if (ctx.stateOf(open) !== 'unknown') continue;
      for (const period of REPORT_PERIODS)
        if (period === 'session' ? open.session === this.sessionId : open.beganAt > now - PERIOD_MS[period]) {
          unknownOpen.all[period]++;
          if (open.person === person) unknownOpen.mine[period]++;
        }
    }
    const view = this.view(db, now, person ?? '');
    const limits = this.limits.filter((limit) => !limit.perUser || person !== undefined);
    const inputs = {
      rows: await sql.usageRows(db, now, this.sessionId, person ?? null),
      unknownOpen,
      latest: await sql.latestCalls(db, latest, { person }),
      limits: await usesOf(view, limits),
    };
    const pricesSet = this.prices.length > 0;
    const about = {
      now,
      dir: this.where,
      sessionStartedAt: this.startedAt,
      pricesSet,
      person: person ?? null,
    };
    return usageOf(inputs, { ...ctx, ...about });
  }

  /**
   * Each person's counted calls in the last 24 hours and this calendar month, and their use of
   * each GATEWAY_LIMITS_PER_USER limit: for whoever runs the service.
   */
  async usageByPerson(): Promise<PersonUsage[]> {
    const db = await this.store();
    const now = await db.now();
    const [day, month] = [now - PERIOD_MS.day, (periodSpan('month', now) as { start: number }).start];
    const rows = await sql.personRows(db, Math.min(day, month), day, month);
    const people = [...new Set(rows.map((row) => row.person))].sort();
    const perUser = this.limits.filter((limit) => limit.perUser);
    const uses: LimitUse[][] = [];
    for (const person of people) uses.push(await usesOf(this.view(db, now, person), perUser));
    return usageByPersonOf(people, rows, uses, this.prices);
  }

  /**
   * Every call (of one person, or everyone's) begun at or after `since`, oldest first, a page at
   * a time, as reports show them.
   */
  async exportCalls(
    since: number,
    onPage: (calls: LedgerCall[]) => Promise<void> | void,
    person?: string,
  ): Promise<void> {
    const db = await this.store();
    const ctx = this.reportContext(await db.now());
    await sql.exportPages(db, since, person ?? null, (rows) => onPage(rows.map((row) => callOf(row, ctx))));
  }

  /** Waits for writes under way, and closes the database. Later calls are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.sweeping;
    await (await this.opened?.catch(() => undefined))?.close();
  }

  /**
   * The ledger's database, for what the server processes sharing it share besides billed calls
   * (used confirmations, caches): one store, so that a fleet needs nothing more to run.
   */
  database(): Promise<Database> {
    return this.store();
  }

  /**
   * The database, opened on first use (a failed opening is tried again by the next call):
   * PostgreSQL when GATEWAY_LEDGER_URL names one, else SQLite's file in GATEWAY_LEDGER_DIR.
   */
  private store(): Promise<Database> {
    if (this.closed)
      return Promise.reject(
        new LedgerUnavailable('The ledger of billed calls is closed: the server is stopping.'),
      );
    if (this.opened) return this.opened;
    const { url, dir, log, now } = this.options;
    const common = { log, waitMs: this.settings.waitMs, readOnly: this.readOnly };
    const opening = (async () => {
      const db = url
        ? await (await import('./postgres.js')).openPostgres({ url, ...common })
        : await openSqlite({ dir, ...common, ...(now ? { now } : {}) });
      // The session's own period is timed by the ledger's clock, as its calls are.
      this.startedAt = await db.now();
      return db;
    })();
    this.opened = opening;
    opening.catch(() => {
      if (this.opened === opening) this.opened = undefined;
    });
    return opening;
  }

  /** Removes calls past their retention, at most once an hour, after the call that asked. */
  private sweepSoon(): void {
    if (this.readOnly || this.closed || Date.now() - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = Date.now();
    this.sweeping = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      if (this.closed) return;
      try {
        const retention = this.settings.retentionDays * PERIOD_MS.day;
        const removed = await sql.removeOld(await this.store(), retention, this.settings.keptCalls);
        if (removed) this.options.log.debug(`ledger: removed ${removed} calls older than the retention`);
      } catch (error) {
        this.options.log.warn(`ledger: could not remove old calls (${codeOf(error)})`);
      }
    });
  }

  /** A call's id: this ledger's random prefix and a count, unique across processes and restarts. */
  private newCall(call: BillableCall, hash: string): sql.NewCall {
    const { kind, idempotencyKey: key } = call;
    return {
      id: `${this.sessionId}${(++this.calls).toString(36)}`,
      session: this.sessionId,
      pid: process.pid,
      host: this.host,
      person: personKey(call.by.id),
      client: call.by.client?.slice(0, 256) ?? null,
      kind,
      tool: call.tool.slice(0, 64),
      model: call.model.slice(0, 256),
      hash,
      words: firstWords(call.text),
      key: key && key.length <= 256 ? key : null,
      expected: amountOrNull(call.expected),
    };
  }

  private stateOf(row: sql.CallRow, now: number): CallState {
    if (row.outcome) return row.outcome;
    if (row.session === this.sessionId) return this.inFlight.has(row.id) ? 'pending' : 'unknown';
    if (now - row.beganAt > this.settings.pendingBoundMs) return 'unknown';
    return row.host === this.host && !processAlive(row.pid) ? 'unknown' : 'pending';
  }

  private view(db: Statements, now: number, person: string): View {
    return { db, sessionId: this.sessionId, person, prices: this.prices, now };
  }

  private reportContext(now: number): ReportContext {
    return { stateOf: (row) => this.stateOf(row, now), prices: this.prices, sessionId: this.sessionId };
  }
}

/** The ledger's options from the settings. */
export function ledgerOptions(
  config: Pick<Required<LedgerOptions>, 'limits' | 'limitsPerUser' | 'prices' | 'duplicateWindowSeconds'> & {
    ledgerDir: string;
    ledgerUrl?: string | undefined;
  },
  log: Logger,
): LedgerOptions {
  const { ledgerDir: dir, ledgerUrl: url, limits, limitsPerUser, prices, duplicateWindowSeconds } = config;
  return { dir, ...(url ? { url } : {}), limits, limitsPerUser, prices, duplicateWindowSeconds, log };
}

const NO_END: sql.CallEndRow = {
  outcome: 'declined',
  job: null,
  amount: null,
  reason: null,
  status: null,
  file: null,
};

/** A person as the ledger keeps them. '' is everyone's tally (sql.ts): no person is called that. */
const personKey = (id: string) => id.slice(0, 256) || '?';

const amountOrNull = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n >= 0 ? n : null);

/**
 * Each limit's use, read one after another: read at once, they had a fresh process's PostgreSQL
 * pool open a connection for each (about 20 ms more for a report than the reads themselves).
 */
async function usesOf(view: View, limits: readonly Limit[]): Promise<LimitUse[]> {
  const uses: LimitUse[] = [];
  for (const limit of limits) uses.push(await limitUse(view, limit));
  return uses;
}

/** Whether a process of this host still runs (EPERM: it does, as another user's). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
