// The lock every process takes to check the limits and append a `begin`, so that no two
// processes both see room for one more call. It is held for that check and one append (well under
// a millisecond), never while a request is sent.
//
// The lock is a name, `.lock`, that only one process at a time can create. Each process writes a
// holder file once (`.holder.<pid>.<nonce>`: pid, host, nonce) and takes the lock by hard-linking
// it to `.lock`: link() fails with EEXIST while another holds it, is atomic on local file systems
// and NFS alike, and leaves the holder readable in the lock itself. A link costs a tenth of
// creating and writing a file, and the lock is taken for every billed call. Where the file system
// has no hard links (FAT, some network shares) the lock is a file created with O_EXCL instead.
// (mkdir would do as well, but then who holds it needs a second file.)
//
// Node has no flock(), so a holder that dies leaves `.lock` behind; it is taken over when its pid
// is gone (same host) or when it was taken longer ago (its ctime) than a bound no real hold comes
// near. Taking over is the delicate part: two waiters may both find the same stale lock, and the
// slower one must not delete the lock the faster one has just taken. So a takeover happens only
// under a second lock (`.lock.break`, taken the same way), and deletes `.lock` only if it is still
// the very one found stale (same inode, content and ctime). A breaker that died mid-takeover (a
// few syscalls) is removed by the same rules. The one overlap left: a holder stopped (a debugger,
// SIGSTOP) past the bound resumes beside the process that took over.

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  type FSWatcher,
  fstatSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  watch,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface LockOptions {
  /** A lock taken longer ago than this is taken over even if its holder seems alive. */
  staleMs: number;
  /** How long to wait for the lock before giving up. */
  waitMs: number;
  /**
   * How soon a waiter tries again when it sees no release (default 1 ms for the first 50 tries,
   * then a few): releases are seen at once where the file system reports changes.
   */
  retryMs?: number;
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
  ctimeMs: number;
}

/** How often a waiter looks at who holds the lock, and whether that holder is gone. */
const LOOK_EVERY_MS = 10;

/** Errors that mean the file system has no hard links. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

export class FileLock {
  private readonly breakPath: string;
  private readonly dir: string;
  /** This process's holder file, once written; null where links are not to be had. */
  private holder: { path: string; ino: number } | null | undefined;

  constructor(
    readonly path: string,
    private readonly options: LockOptions,
  ) {
    this.breakPath = `${path}.break`;
    this.dir = dirname(path);
  }

  /** Waits for the lock; returns its release. Within one process, callers must take turns. */
  async acquire(): Promise<() => void> {
    const deadline = Date.now() + this.options.waitMs;
    const release = new ReleaseWatch(this.dir, basename(this.path), this.options.retryMs);
    let nextLook = 0;
    try {
      for (let attempt = 0; ; attempt++) {
        const taken = this.take(this.path);
        if (taken) return taken;
        // Watching from the first miss on, so a release after it is seen; then try once more.
        if (attempt === 0 && release.start()) continue;
        const now = Date.now();
        if (now >= nextLook) {
          // Who holds it, and whether they are gone: looked at every few milliseconds, not at every
          // try (a holder's hold is shorter than one look).
          nextLook = now + LOOK_EVERY_MS;
          const found = read(this.path);
          if (!found) continue; // released meanwhile
          if (this.isStale(found) && this.breakStale(found)) continue;
          if (now > deadline) {
            throw new LockTimeout(
              `${this.path} has been held by ${describe(found)} for over ${this.options.waitMs} ms`,
            );
          }
        }
        await release.wait(attempt);
      }
    } finally {
      release.stop();
    }
  }

  /** Removes this process's holder file (the lock is not held between calls). */
  close(): void {
    if (this.holder) unlinkQuietly(this.holder.path);
    this.holder = undefined;
  }

  /** Takes `path` if no one holds it; returns the release, or null when it is held. */
  private take(path: string): (() => void) | null {
    const holder = this.holderFile();
    if (holder) {
      try {
        linkSync(holder.path, path);
        // Ours while the name points at our holder's inode (a takeover replaces it).
        return () => {
          if (statSync(path, { throwIfNoEntry: false })?.ino === holder.ino) unlinkQuietly(path);
        };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') return null;
        if (code === 'ENOENT') {
          this.holder = undefined; // our holder file was removed: write it again next time
          return null;
        }
        if (!NO_LINKS.has(code)) throw error;
        this.holder = null;
      }
    }
    const fd = createExclusive(path, this.holderText());
    if (fd === null) return null;
    return () => releaseCreated(path, fd);
  }

  private holderFile(): { path: string; ino: number } | null {
    if (this.holder === undefined) {
      const path = join(this.dir, `.holder.${process.pid}.${randomBytes(6).toString('base64url')}`);
      writeFileSync(path, this.holderText(), { mode: 0o600 });
      this.holder = { path, ino: statSync(path).ino };
    }
    return this.holder;
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

  private isStale(found: Found): boolean {
    if (Date.now() - found.ctimeMs > this.options.staleMs) return true;
    const holder = parseHolder(found.text);
    // An empty or partial file is a holder between creating it and writing its pid: young, so live.
    return holder !== null && holder.host === this.options.host && !processAlive(holder.pid);
  }

  /** Removes the stale lock, under the breaker lock; false when another process is breaking it. */
  private breakStale(stale: Found): boolean {
    const release = this.take(this.breakPath);
    if (!release) {
      const other = read(this.breakPath);
      if (other && this.isStale(other)) unlinkQuietly(this.breakPath); // died mid-takeover
      return false;
    }
    try {
      const now = read(this.path);
      if (now && now.ino === stale.ino && now.text === stale.text && now.ctimeMs === stale.ctimeMs) {
        unlinkQuietly(this.path);
        this.options.onTakeover?.(describe(stale));
      }
      return true;
    } finally {
      release();
    }
  }
}

/**
 * Removes the holder files of processes that are gone (this host) or of any older than a day:
 * those a killed process left behind.
 */
export function removeDeadHolders(dir: string, host: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('.holder.')) continue;
    const path = join(dir, name);
    const found = read(path);
    if (!found) continue;
    const holder = parseHolder(found.text);
    const gone = holder !== null && holder.host === host && !processAlive(holder.pid);
    if (gone || Date.now() - found.ctimeMs > 86_400_000) unlinkQuietly(path);
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

/** Removes a created lock if it is still ours: the descriptor held open pins its inode number. */
function releaseCreated(path: string, fd: number): void {
  try {
    const ours = fstatSync(fd);
    const there = statSync(path, { throwIfNoEntry: false });
    if (ours.nlink > 0 && there?.ino === ours.ino && there.dev === ours.dev) unlinkQuietly(path);
  } finally {
    closeSync(fd);
  }
}

function read(path: string): Found | null {
  try {
    const { ino, ctimeMs } = statSync(path);
    return { text: readFileSync(path, 'utf8'), ino, ctimeMs };
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
 * Wakes a waiter when the lock's name is removed (the holder released it), through the file
 * system's change events (inotify, FSEvents, ReadDirectoryChangesW), so the next holder takes it
 * within a fraction of a millisecond. Events can be missed or never come (network file systems
 * report only this host's changes), so a waiter also tries again on a timer: every millisecond
 * for the first 50 tries, then every few.
 */
class ReleaseWatch {
  private watcher: FSWatcher | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly dir: string,
    private readonly name: string,
    private readonly retryMs?: number,
  ) {}

  /** Starts watching; false where the directory cannot be watched (the timer alone then). */
  start(): boolean {
    try {
      this.watcher = watch(this.dir, { persistent: false }, (_event, changed) => {
        if (changed === null || changed === this.name) this.wake?.();
      });
      this.watcher.on('error', () => this.stop());
      return true;
    } catch {
      return false;
    }
  }

  wait(attempt: number): Promise<void> {
    const ms = this.retryMs ?? (attempt < 50 ? 1 : 2 + 3 * Math.random());
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.woken(resolve), ms);
      this.wake = () => {
        clearTimeout(timer);
        this.woken(resolve);
      };
    });
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private woken(resolve: () => void): void {
    this.wake = null;
    resolve();
  }
}
