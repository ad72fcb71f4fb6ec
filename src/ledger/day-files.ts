// Writing the day files: `<dir>/2026-11-24.jsonl`, one per UTC day, appended to and never
// rewritten. Each append is one write() of whole lines on a descriptor opened with O_APPEND, so
// the kernel places it at the end in one piece whatever other processes append at the same time;
// syncing it to disk (fdatasync) is done outside the lock. Files past their retention are removed.

import {
  close,
  closeSync,
  fdatasync,
  fsync,
  open,
  openSync,
  readdirSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DAY_FILE, dayFileName, dayOf } from './records.js';

const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const openAsync = promisify(open);

/** Day files whose directory entry this process has synced. */
const namesSynced = new Set<string>();

/** An append made, not yet on disk: `durable()` syncs it (and the new file's entry) and closes. */
export interface Appended {
  durable(): Promise<void>;
  /** Closes without syncing (for lines whose loss in a crash costs nothing). */
  drop(): void;
}

/** Appends `lines` (whole lines, newline-terminated) to the day's file in one write(). */
export function appendLines(dir: string, day: string, lines: Buffer): Appended {
  const path = join(dir, dayFileName(day));
  const fd = openSync(path, 'a', 0o600);
  try {
    const written = writeSync(fd, lines);
    // A short write (a full disk) leaves a torn line, which readers skip; the call must not go on.
    if (written !== lines.length) throw new Error(`only ${written} of ${lines.length} bytes were written`);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return {
    async durable() {
      try {
        await fdatasyncAsync(fd);
      } finally {
        closeSync(fd);
      }
      // A new file's name must reach the disk too, or the file may vanish in a crash: the first
      // sync of each day file by this process syncs its directory as well (once a day).
      if (!namesSynced.has(path)) {
        await syncDirectory(dir);
        namesSynced.add(path);
      }
    },
    drop() {
      closeSync(fd);
    },
  };
}

async function syncDirectory(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = await openAsync(dir, 'r');
  } catch {
    return; // Windows cannot open a directory; its file system orders metadata itself.
  }
  try {
    await fsyncAsync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the file's own data is synced regardless.
  } finally {
    await closeAsync(fd);
  }
}

/** Removes the day files older than `days` days; returns their names. */
export function removeOldDayFiles(dir: string, now: number, days: number): string[] {
  const oldestKept = dayOf(now - days * 86_400_000);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const day = DAY_FILE.exec(name)?.[1];
    if (!day || day >= oldestKept) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return removed;
}

/** The day files present, newest first. */
export function dayFiles(dir: string): string[] {
  return readdirSync(dir)
    .map((name) => DAY_FILE.exec(name)?.[1])
    .filter((day): day is string => day !== undefined)
    .sort()
    .reverse();
}
