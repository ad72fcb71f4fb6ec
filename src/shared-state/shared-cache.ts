// A cache every process sharing the store reads: what one paid for (a page, a transcript), the
// others take instead of paying again. Values are JSON (PostgreSQL's text holds no NUL, JSON
// escapes it), keyed by a digest (an index entry has a size limit; a URL may be long), expiring by
// the database's clock, and bounded in bytes: storing one evicts the oldest past the bound,
// keeping the newest whatever its size.
//
// A load is claimed first: a row without a value, inserted by one process only. The others wait
// for its value instead of loading (and paying) too; a claim whose process failed is deleted, and
// one whose process died ends at its deadline, after which another process claims it.

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { NOT_SYNCED, type Statements } from '../ledger/database.js';
import { CACHE, type SharedStore, withTables } from './tables.js';

export interface SharedCacheOptions {
  /** What the cache holds (`pages`, `transcripts`): one table holds every space. */
  space: string;
  ttlMs: number;
  /** The most bytes (of JSON) the space keeps. */
  maxBytes: number;
  /** How long a claim holds: longer than a load may take. */
  claimMs?: number;
}

type Writes = Pick<Statements, 'query' | 'run'>;
const CLAIM_MS = 3 * 60_000;
/** How often a process waiting for another's load looks again: at most this late. */
const POLL_MS = [10, 20, 50, 100, 200];

export class SharedCache<T> {
  constructor(
    private readonly store: SharedStore,
    private readonly options: SharedCacheOptions,
  ) {}

  /** The value stored under `key`, if any and not expired. */
  async get(key: string): Promise<T | undefined> {
    const found = await this.read(await this.db(), digest(key));
    return found.kind === 'value' ? found.value : undefined;
  }

  /** Stores `value` under `key`, for every process. */
  async set(key: string, value: T): Promise<void> {
    const db = await this.db();
    const id = digest(key);
    const json = JSON.stringify(value);
    const params = {
      $space: this.options.space,
      $key: id,
      $value: json,
      $bytes: Buffer.byteLength(json),
      $ttl: this.options.ttlMs,
    };
    await db.run(
      `INSERT INTO ${CACHE} (space, key, value, bytes, stored_at, expires_at)
        VALUES ($space, $key, $value, $bytes, $now, $now + $ttl)
        ON CONFLICT (space, key) DO UPDATE SET value = $value, bytes = $bytes, stored_at = $now, expires_at = $now + $ttl`,
      params,
    );
    await this.sweep(id);
  }

  /** Forgets every value of this space, for every process. */
  async clear(): Promise<void> {
    await (await this.db()).run(`DELETE FROM ${CACHE} WHERE space = $space`, { $space: this.options.space });
  }

  /**
   * The value under `key`, or `load`'s, loaded by one process only: while one loads, the others
   * wait for its value (up to its claim's deadline). A load that fails is not stored, and its
   * claim is given up for the next caller.
   */
  async getOrLoad(key: string, load: () => Promise<T>): Promise<T> {
    let db: Writes;
    try {
      db = await this.db();
    } catch {
      // No store to share through (the ledger's database cannot be opened): a billed load then
      // says why itself, and an unbilled one is done here alone.
      return load();
    }
    const id = digest(key);
    const claimMs = this.options.claimMs ?? CLAIM_MS;
    const giveUpAt = performance.now() + 2 * claimMs;
    for (let attempt = 0; ; attempt++) {
      const found = await this.read(db, id);
      // Bounded: a claim ends at its deadline; past twice that, the store is not working as a
      // cache should, and the value is loaded here rather than waited for without end.
      if (found.kind === 'claimed' && performance.now() > giveUpAt) return load();
      if (found.kind === 'value') return found.value;
      if (found.kind === 'none') {
        // A claim past its deadline (its process died) or an expired value is taken away first.
        await db.run(`DELETE FROM ${CACHE} WHERE space = $space AND key = $key AND expires_at <= $now`, {
          $space: this.options.space,
          $key: id,
        });
        const claimed = await db.run(
          `INSERT INTO ${CACHE} (space, key, value, bytes, stored_at, expires_at)
            VALUES ($space, $key, NULL, 0, $now, $now + $claim) ON CONFLICT (space, key) DO NOTHING`,
          { $space: this.options.space, $key: id, $claim: claimMs },
        );
        if (claimed === 1) return this.loadClaimed(key, id, load);
        continue; // another process claimed it a moment before: wait for its value
      }
      await sleep(POLL_MS[Math.min(attempt, POLL_MS.length - 1)]);
    }
  }

  private async loadClaimed(key: string, id: string, load: () => Promise<T>): Promise<T> {
    let value: T;
    try {
      value = await load();
    } catch (error) {
      await this.release(id);
      throw error;
    }
    // Not kept for the others if the store fails now: they load again, and this caller still has it.
    await this.set(key, value).catch(() => this.release(id));
    return value;
  }

  private async release(id: string): Promise<void> {
    const db = await this.db();
    await db
      .run(`DELETE FROM ${CACHE} WHERE space = $space AND key = $key AND value IS NULL`, {
        $space: this.options.space,
        $key: id,
      })
      .catch(() => undefined); // a claim left behind ends at its deadline
  }

  /** A stored value, a claim someone holds, or nothing usable. */
  private async read(
    db: Writes,
    id: string,
  ): Promise<{ kind: 'value'; value: T } | { kind: 'claimed' } | { kind: 'none' }> {
    const [row] = await db.query(
      `SELECT value FROM ${CACHE} WHERE space = $space AND key = $key AND expires_at > $now`,
      { $space: this.options.space, $key: id },
    );
    if (!row) return { kind: 'none' };
    if (typeof row.value !== 'string') return { kind: 'claimed' };
    return { kind: 'value', value: JSON.parse(row.value) as T };
  }

  /** Expired rows out, then the oldest values past the byte bound (never the one just stored). */
  private async sweep(kept: string): Promise<void> {
    const db = await this.db();
    await db.run(`DELETE FROM ${CACHE} WHERE expires_at <= $now`);
    await db.run(
      `DELETE FROM ${CACHE} WHERE space = $space AND key <> $key AND key IN (
        SELECT key FROM (
          SELECT key, SUM(bytes) OVER (ORDER BY stored_at DESC, key DESC) AS running
          FROM ${CACHE} WHERE space = $space AND value IS NOT NULL) AS newest
        WHERE running > $max)`,
      { $space: this.options.space, $key: kept, $max: this.options.maxBytes },
    );
  }

  /** The store, its writes not synced on their own: a value lost with the machine is loaded again. */
  private async db(): Promise<Writes> {
    const db = await withTables(await this.store());
    return {
      query: (sql, params) => db.query(sql, params),
      run: (sql, params) => db.run(sql, params, NOT_SYNCED),
    };
  }
}

function digest(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}
