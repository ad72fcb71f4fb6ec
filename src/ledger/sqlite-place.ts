// Where the SQLite ledger may live. A ledger is what stops a billed call, so a place that another
// user can change, or that SQLite cannot lock safely, is refused as ssh refuses a key file others
// can write: the folder and the database's files must be this user's and writable by no one
// else; a FIFO, device or folder where the database file should be is refused at once (opening
// one would hang or fail later); a network file system is refused, since SQLite's locks do not
// hold there (GATEWAY_LEDGER_URL is the ledger for several hosts); a full disk is said as full.

import { accessSync, constants, type Stats, statfsSync } from 'node:fs';
import { access, lstat, mkdir, stat, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { codeOf, LedgerUnavailable } from './database.js';

/** What is wrong with the ledger's place, and the fix, apart (doctor shows them on two lines). */
export class LedgerPlaceProblem extends LedgerUnavailable {
  constructor(
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${problem}: ${fix}.`);
  }
}

export const DATABASE_FILE = 'ledger.sqlite';
/** SQLite's own files beside the database in WAL mode. */
const COMPANIONS = ['-wal', '-shm', '-journal'];
/** Less free space than this is a full disk: a few commits, or the WAL's next growth, fail. */
const FULL_BELOW_BYTES = 1 << 20;

/** File systems on which SQLite's locks do not hold, by statfs magic number. */
const NETWORK_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x6969, 'NFS'],
  [0x517b, 'SMB'],
  [0xff534d42, 'CIFS'],
  [0xfe534d42, 'SMB2'],
  [0x00c36400, 'CephFS'],
  [0x0bd00bd0, 'Lustre'],
  [0x01161970, 'GFS2'],
  [0x5346414f, 'AFS'],
  [0x6b414653, 'AFS'],
  [0x01021997, '9P'],
  [0x47504653, 'GPFS'],
]);
/** FUSE: local (an encrypted folder) or remote (sshfs) alike; SQLite is safe on some, not others. */
const FUSE = 0x65735546;
const USE_POSTGRES = 'GATEWAY_LEDGER_URL to a PostgreSQL database';

export interface LedgerPlace {
  /** The database file is there, and not empty (an empty one is a ledger being made). */
  exists: boolean;
  /** Something to warn about that does not stop the ledger (a FUSE file system), and the fix. */
  warning?: { problem: string; fix: string };
}

/**
 * Checks the ledger's folder and database files, making the folder (0700) when `make` and it is
 * missing. Throws LedgerPlaceProblem with the fix.
 */
export async function checkLedgerPlace(dir: string, make: boolean): Promise<LedgerPlace> {
  const folder = await stat(dir).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw placeError(dir, error);
    if (!make) return null;
    await mkdir(dir, { recursive: true, mode: 0o700 }).catch(async (why: NodeJS.ErrnoException) => {
      throw placeError(dir, await whyNotMade(dir, why));
    });
    return stat(dir);
  });
  if (!folder) return { exists: false };
  if (!folder.isDirectory())
    throw new LedgerPlaceProblem(
      `The ledger's folder ${dir} is not a folder`,
      "set GATEWAY_LEDGER_DIR to a folder of this user's",
    );
  ownedAndPrivate(dir, folder, 'folder');
  const { type } = await statfs(dir).catch(() => ({ type: 0 }));
  const network = NETWORK_FILE_SYSTEMS.get(type);
  if (network)
    throw new LedgerPlaceProblem(
      `The ledger's folder ${dir} is on a ${network} file system`,
      `SQLite is not safe there; put GATEWAY_LEDGER_DIR on a local disk, or set ${USE_POSTGRES} to share one ledger across hosts`,
    );
  const full = make ? fullDisk(dir) : undefined;
  if (full) throw full;
  if (make) await access(dir, constants.W_OK).catch((error) => Promise.reject(placeError(dir, error)));
  let exists = false;
  for (const suffix of ['', ...COMPANIONS]) {
    const path = join(dir, DATABASE_FILE) + suffix;
    const found = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw placeError(path, error);
    });
    if (!found) continue;
    if (!found.isFile())
      throw new LedgerPlaceProblem(
        `The ledger's database file ${path} is ${kindOf(found)}, not a file`,
        `remove it (rm ${shellQuote(path)}) and the ledger is made anew`,
      );
    ownedAndPrivate(path, found, 'file');
    if (suffix === '') exists = found.size > 0; // an empty file is a ledger being made
  }
  if (type !== FUSE) return { exists };
  const problem = `the ledger's folder ${dir} is on a FUSE file system, where SQLite's locks may not hold if it reaches another machine (sshfs, a cloud drive)`;
  return {
    exists,
    warning: { problem, fix: `put GATEWAY_LEDGER_DIR on a local disk, or set ${USE_POSTGRES}` },
  };
}

function ownedAndPrivate(path: string, stats: Stats, what: 'folder' | 'file'): void {
  const uid = process.getuid?.();
  if (uid === undefined) return; // Windows: no owner or mode bits to check
  if (stats.uid !== uid)
    throw new LedgerPlaceProblem(
      `The ledger's ${what} ${path} belongs to another user (uid ${stats.uid}), who could change what it records`,
      `use a GATEWAY_LEDGER_DIR of this user's (uid ${uid}), or chown it to this user`,
    );
  if ((stats.mode & 0o022) !== 0)
    throw new LedgerPlaceProblem(
      `The ledger's ${what} ${path} can be written by other users (mode ${(stats.mode & 0o777).toString(8)}), who could change what it records`,
      `chmod go-w ${shellQuote(path)}`,
    );
}

/** The problem when the ledger's folder is on a full disk. */
export function fullDisk(dir: string): LedgerPlaceProblem | undefined {
  const free = (() => {
    try {
      const { bavail, bsize } = statfsSync(dir);
      return bavail * bsize;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  })();
  if (free >= FULL_BELOW_BYTES) return undefined;
  return new LedgerPlaceProblem(
    `The ledger of billed calls at ${dir} is on a full disk (${Math.floor(free / 1024)} KiB free), so no billed call can be recorded or sent`,
    `free space on that disk (df ${shellQuote(dir)} shows it), or set GATEWAY_LEDGER_DIR to a folder on another disk`,
  );
}

/** The problem when the ledger's folder is on a read-only file system. */
export function readOnlyFolder(dir: string): LedgerPlaceProblem | undefined {
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    if (codeOf(error) === 'EROFS') return placeError(dir, error);
  }
  return undefined;
}

/**
 * Why a folder could not be made: a recursive mkdir on a read-only file system says ENOENT, so
 * the nearest folder that exists is asked whether it can be written.
 */
async function whyNotMade(dir: string, error: NodeJS.ErrnoException): Promise<unknown> {
  if (error.code !== 'ENOENT') return error;
  for (let parent = dirname(dir); parent !== dirname(parent); parent = dirname(parent)) {
    if (await stat(parent).catch(() => null))
      return access(parent, constants.W_OK).then(
        () => error,
        (denied: unknown) => denied,
      );
  }
  return error;
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return stats.isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
}

const WHY: Record<string, string> = {
  EROFS: 'is on a read-only file system',
  EACCES: 'cannot be written by this user',
  EPERM: 'cannot be written by this user',
  ENOTDIR: 'lies below a file, not a folder',
};

/** A file system error at the ledger's place, in words. */
export function placeError(path: string, error: unknown, code = codeOf(error)): LedgerPlaceProblem {
  return new LedgerPlaceProblem(
    `The ledger of billed calls at ${path} ${WHY[code] ?? `cannot be used (${code})`}`,
    'set GATEWAY_LEDGER_DIR to a folder this user can write on a local disk',
  );
}

function shellQuote(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
