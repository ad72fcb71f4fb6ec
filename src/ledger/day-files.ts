// Writing the day files: `<dir>/2026-11-24.jsonl`, one per UTC day, appended to and never
// rewritten. Each append is one write() of whole lines on a descriptor opened with O_APPEND, so
// the kernel places it at the end in one piece whatever other processes append at the same time;
// syncing it to disk (fdatasync) is done outside the lock, and one sync serves every append made
// before it. Files past their retention are removed.

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

/**
 * Per day file, this process's appends so far and how many of them a finished sync covers: a
 * sync writes out every byte of the file written before it began, whichever descriptor wrote it.
 */
const appendsMade = new Map<string, number>();
const appendsSynced = new Map<string, number>();

/** An append made, not yet on disk: `durable()` syncs it (and the new file's entry) and closes. */
export interface Appended {
  durable(): Promise<void>;
  /**
   * Syncs it within `withinMs`, or sooner as part of a later sync of the same file (several
   * appends, one sync), without holding the caller back; resolves when it is on disk.
   */
  durableSoon(withinMs: number): Promise<void>;
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
  const number = (appendsMade.get(path) ?? 0) + 1;
  appendsMade.set(path, number);
  const durable = async () => {
    const covers = appendsMade.get(path) ?? number;
    try {
      await fdatasyncAsync(fd);
    } finally {
      closeSync(fd);
    }
    appendsSynced.set(path, Math.max(appendsSynced.get(path) ?? 0, covers));
    // A new file's name must reach the disk too, or the file may vanish in a crash: the first
    // sync of each day file by this process syncs its directory as well (once a day).
    if (!namesSynced.has(path)) {
      await syncDirectory(dir);
      namesSynced.add(path);
    }
  };
  return {
    durable,
    durableSoon(withinMs) {
      return new Promise<void>((resolve) => setTimeout(resolve, withinMs)).then(() => {
        if ((appendsSynced.get(path) ?? 0) < number) return durable();
        closeSync(fd);
      });
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
