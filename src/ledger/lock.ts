// The lock every process takes to check the limits and append a `begin`, so that no two
// processes both see room for one more call. It is held for that check and one append (well under
// a millisecond), never while a request is sent.
//
// A file created with O_EXCL (`wx`): creation is atomic on every local file system and on NFSv3+,
// and, unlike a `mkdir` lock, the same file holds who holds it (pid, host, a random nonce).
// Node has no flock(), so a holder that dies leaves its file behind; it is taken over when its
// pid is gone (same host) or when the file is older than a bound no real hold comes near.
//
// Taking over is the delicate part: two waiters may both find the same stale file, and the slower
// one must not delete the lock the faster one has just created. So a takeover happens only under
// a second lock file (`<lock>.break`), and deletes the lock only if it is still the very file
// that was found stale (same inode, same content). A breaker that died mid-takeover (a few
// syscalls) is removed by the same rules.

import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';

export interface LockOptions {
  /** A lock file older than this is taken over even if its holder seems alive. */
  staleMs: number;
  /** How long to wait for the lock before giving up. */
  waitMs: number;
  host: string;
  /** Told when a stale lock is taken over. */
  onTakeover?: (holder: string) => void;
}

/** The lock could not be had in time: another process holds it (and is alive). */
export class LockTimeout extends Error {
  override name = 'LockTimeout';
}

interface Found {
  text: string;
  ino: number;
  mtimeMs: number;
}

export class FileLock {
  private readonly breakPath: string;

  constructor(
    readonly path: string,
    private readonly options: LockOptions,
  ) {
    this.breakPath = `${path}.break`;
  }

  /** Waits for the lock; returns its release. Within one process, callers must take turns. */
  async acquire(): Promise<() => void> {
    const content = this.holderText();
    const deadline = Date.now() + this.options.waitMs;
    for (let attempt = 0; ; attempt++) {
      const fd = createExclusive(this.path, content);
      if (fd !== null) return () => this.release(fd);
      const found = read(this.path);
      if (found && this.isStale(found)) {
        this.breakStale(found);
        continue;
      }
      if (Date.now() > deadline) {
        throw new LockTimeout(
          `${this.path} has been held by ${describe(found)} for over ${this.options.waitMs} ms`,
        );
      }
      await pause(attempt);
    }
  }

  private holderText(): string {
    const holder = {
      pid: process.pid,
      host: this.options.host,
      nonce: randomBytes(8).toString('base64url'),
      at: new Date().toISOString(),
    };
    return `${JSON.stringify(holder)}\n`;
  }

  private release(fd: number): void {
    // Only our own file: after a takeover (we were stalled past the bound) it is someone else's.
    // The descriptor held open pins our file's inode, so no new file can have its number.
    try {
      const ours = fstatSync(fd);
      const there = statSync(this.path, { throwIfNoEntry: false });
      if (ours.nlink > 0 && there?.ino === ours.ino && there.dev === ours.dev) unlinkQuietly(this.path);
    } finally {
      closeSync(fd);
    }
  }

  private isStale(found: Found): boolean {
    if (Date.now() - found.mtimeMs > this.options.staleMs) return true;
    const holder = parseHolder(found.text);
    // An empty or partial file is a holder between creating it and writing its pid: young, so live.
    return holder !== null && holder.host === this.options.host && !processAlive(holder.pid);
  }

  private breakStale(stale: Found): void {
    const breaker = createExclusive(this.breakPath, this.holderText());
    if (breaker === null) {
      const breaker = read(this.breakPath);
      if (breaker && this.isStale(breaker)) unlinkQuietly(this.breakPath);
      return;
    }
    try {
      const now = read(this.path);
      if (now && now.ino === stale.ino && now.text === stale.text && now.mtimeMs === stale.mtimeMs) {
        unlinkQuietly(this.path);
        this.options.onTakeover?.(describe(stale));
      }
    } finally {
      closeSync(breaker);
      unlinkQuietly(this.breakPath);
    }
  }
}

/** Creates the file if it does not exist, and returns its descriptor (kept open); null if it does. */
function createExclusive(path: string, content: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  try {
    writeSync(fd, content);
  } catch (error) {
    closeSync(fd);
    unlinkQuietly(path);
    throw error;
  }
  return fd;
}

function read(path: string): Found | null {
  try {
    const { ino, mtimeMs } = statSync(path);
    return { text: readFileSync(path, 'utf8'), ino, mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function parseHolder(text: string): { pid: number; host: string } | null {
  try {
    const holder = JSON.parse(text) as { pid?: unknown; host?: unknown };
    return typeof holder.pid === 'number' && typeof holder.host === 'string'
      ? { pid: holder.pid, host: holder.host }
      : null;
  } catch {
    return null;
  }
}

function describe(found: Found | null): string {
  const holder = found && parseHolder(found.text);
  return holder ? `process ${holder.pid} on ${holder.host}` : 'a process that had not yet written its pid';
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * Holds last a fraction of a millisecond, so a waiter tries again at once a couple of times, then
 * every millisecond (the timer's finest step) for the first 50, then every few.
 */
function pause(attempt: number): Promise<void> {
  if (attempt < 2) return new Promise((resolve) => setImmediate(resolve));
  const ms = attempt < 50 ? 1 : 2 + 3 * Math.random();
  return new Promise((resolve) => setTimeout(resolve, ms));
}
