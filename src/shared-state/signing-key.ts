// A random key made once and kept in the shared store, so that every process sharing the store
// signs with the same one without a secret handed to each (the round states of 2026-07-28 calls).
// Whoever can read the store can read it; such a reader can already read every billed call.

import { randomBytes } from 'node:crypto';
import { KEYS, type SharedStore, withTables } from './tables.js';

/** The key named `name`: the one in the store, or a new one put there by the first to ask. */
export async function sharedKey(store: SharedStore, name: string): Promise<Buffer> {
  const db = await withTables(await store());
  await db.run(`INSERT INTO ${KEYS} (name, value) VALUES ($name, $value) ON CONFLICT (name) DO NOTHING`, {
    $name: name,
    $value: randomBytes(32).toString('base64'),
  });
  const [row] = await db.query(`SELECT value FROM ${KEYS} WHERE name = $name`, { $name: name });
  if (typeof row?.value !== 'string') throw new Error(`the shared key ${name} could not be read back`);
  return Buffer.from(row.value, 'base64');
}
