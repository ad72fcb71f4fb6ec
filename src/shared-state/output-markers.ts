// Whether the replicas sharing a ledger also share their output folder. A file one replica saved
// is read by another (resources/read) only when both save to one folder on a shared volume; nothing
// else tells a replica that the others' folders are not its own. So each HTTP server writes a
// marker file of its own into its output folder and records it in the shared store; doctor then
// looks for every other replica's marker in its own folder: one it cannot see is a folder apart.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { NOT_SYNCED } from '../ledger/database.js';
import { OUTPUT_MARKERS, type SharedStore, withTables } from './tables.js';

/** The name a marker file starts with: a dotfile, which no tool's saved files look like. */
const PREFIX = '.gateway-tools-replica-';
/** A marker not refreshed for this long belongs to a replica that is gone. */
const GONE_MS = 24 * 3_600_000;

export interface OutputMarker {
  /** Refreshes the marker's record (a running replica stays seen); never throws. */
  refresh(): Promise<void>;
  /** Removes the file and the record. */
  remove(): Promise<void>;
}

/** Writes this process's marker into `folder` and records it. */
export async function markOutputFolder(store: SharedStore, folder: string): Promise<OutputMarker> {
  const marker = `${PREFIX}${randomBytes(9).toString('base64url')}`;
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(join(folder, marker), '', { mode: 0o600 });
  const record = async () => {
    const db = await withTables(await store());
    await db.run(
      `INSERT INTO ${OUTPUT_MARKERS} (marker, host, folder, seen_at) VALUES ($marker, $host, $folder, $now)
        ON CONFLICT (marker) DO UPDATE SET seen_at = excluded.seen_at`,
      { $marker: marker, $host: hostname(), $folder: folder },
      NOT_SYNCED,
    );
    await db.run(
      `DELETE FROM ${OUTPUT_MARKERS} WHERE seen_at < $now - $gone`,
      { $gone: GONE_MS * 7 },
      NOT_SYNCED,
    );
  };
  await record();
  return {
    refresh: () => record().catch(() => undefined),
    async remove() {
      rmSync(join(folder, marker), { force: true });
      const db = await withTables(await store());
      await db.run(`DELETE FROM ${OUTPUT_MARKERS} WHERE marker = $marker`, { $marker: marker }, NOT_SYNCED);
    },
  };
}

/** The replicas seen lately whose output folder is not `folder` (their marker is not in it). */
export async function foldersApart(
  store: SharedStore,
  folder: string,
): Promise<{ host: string; folder: string }[]> {
  const db = await withTables(await store());
  const rows = await db.query(
    `SELECT marker, host, folder FROM ${OUTPUT_MARKERS} WHERE seen_at > $now - $gone`,
    {
      $gone: GONE_MS,
    },
  );
  return rows
    .filter((row) => !existsSync(join(folder, String(row.marker))))
    .map((row) => ({ host: String(row.host), folder: String(row.folder) }));
}
