// A 2026-07-28 confirmation pays for one call. The client carries it in a signed state that any
// process with the signing key takes, so the record that it was used must be where every such
// process looks: the shared store, not one process's memory. A replay sent to another replica, or
// to three at once, finds the row the first one inserted.

import { type SharedStore, USED_CONFIRMATIONS, withTables } from './tables.js';

/**
 * Marks the confirmation of flow `nonce` as used until `ttlMs` from now (by the database's clock);
 * false when some process marked it already. Expired marks are swept first, so the table holds at
 * most the confirmations of the last `ttlMs`.
 */
export async function spendConfirmation(store: SharedStore, nonce: string, ttlMs: number): Promise<boolean> {
  const db = await withTables(await store());
  await db.run(`DELETE FROM ${USED_CONFIRMATIONS} WHERE expires_at < $now`);
  const inserted = await db.run(
    `INSERT INTO ${USED_CONFIRMATIONS} (nonce, expires_at) VALUES ($nonce, $now + $ttl) ON CONFLICT (nonce) DO NOTHING`,
    { $nonce: nonce, $ttl: ttlMs },
  );
  return inserted === 1;
}
