// The tables the server processes sharing a ledger keep beside it: what they must agree on besides
// billed calls. They live in the ledger's own database (SQLite for the processes of one host,
// PostgreSQL for a fleet), so that a fleet runs nothing more than its replicas and that database.
// The SQL is written once for both: TEXT and BIGINT mean the same to each, `$now` is the
// database's clock (ms), and a row is claimed by INSERT … ON CONFLICT DO NOTHING, which both make
// atomic. Each table has a bound: rows expire by the database's clock, and the cache has a byte
// bound besides.

import type { Database } from '../ledger/database.js';

export const USED_CONFIRMATIONS = 'gateway_shared_used_confirmations';
export const CACHE = 'gateway_shared_cache';
export const KEYS = 'gateway_shared_keys';
export const OUTPUT_MARKERS = 'gateway_shared_output_markers';

const SCHEMA = [
  // A 2026-07-28 confirmation once used (its flow's nonce), until its signed state expires.
  `CREATE TABLE IF NOT EXISTS ${USED_CONFIRMATIONS} (nonce TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS ${USED_CONFIRMATIONS}_expires ON ${USED_CONFIRMATIONS} (expires_at)`,
  // Pages and transcripts: value NULL is a claim (one process is loading it; the others wait).
  `CREATE TABLE IF NOT EXISTS ${CACHE} (space TEXT NOT NULL, key TEXT NOT NULL, value TEXT,
    bytes BIGINT NOT NULL, stored_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, PRIMARY KEY (space, key))`,
  `CREATE INDEX IF NOT EXISTS ${CACHE}_expires ON ${CACHE} (expires_at)`,
  // Random keys made once by whichever process came first (the round states' signing key).
  `CREATE TABLE IF NOT EXISTS ${KEYS} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  // Each process's output folder, by the marker file it wrote there: whether others see it.
  `CREATE TABLE IF NOT EXISTS ${OUTPUT_MARKERS} (marker TEXT PRIMARY KEY, host TEXT NOT NULL,
    folder TEXT NOT NULL, seen_at BIGINT NOT NULL)`,
];

const made = new WeakMap<Database, Promise<void>>();

/**
 * The database, its shared tables made on first use. Made in a transaction: PostgreSQL's CREATE
 * TABLE IF NOT EXISTS is not safe against another process's at the same moment, and the
 * transaction's lock makes the processes take turns.
 */
export async function withTables(db: Database): Promise<Database> {
  let making = made.get(db);
  if (!making) {
    making = db.transaction(async (tx) => {
      for (const statement of SCHEMA) await tx.run(statement);
    });
    made.set(db, making);
    making.catch(() => made.delete(db));
  }
  await making;
  return db;
}

/** Where the shared state is: the ledger's database, opened (and its tables made) on first use. */
export type SharedStore = () => Promise<Database>;
