// Where the SQLite ledger may live. A ledger is what stops a billed call, so a place that another
// user can change, or that SQLite cannot lock safely, is refused as ssh refuses a key file others
// can write: the folder and the database's files must be this user's and writable by no one
// else; a FIFO, device or folder where the database file should be is refused at once (opening
// one would hang or fail later); a network file system is refused, since SQLite's locks do not
// hold there (GATEWAY_LEDGER_URL is the ledger for several hosts).

import { constants, type Stats } from 'node:fs';
import { access, lstat, mkdir, stat, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { codeOf, LedgerUnavailable } from './store.js';

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

/**
 * File systems on which SQLite's locking is not safe, by statfs magic number: the same database
 * reached from several machines, or through a layer that does not pass locks on.
 */
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

const ADVICE_URL =
  'SQLite is not safe there; put GATEWAY_LEDGER_DIR on a local disk, or set GATEWAY_LEDGER_URL to a PostgreSQL database to share one ledger across hosts';

export interface LedgerPlace {
  /** The database file is there, and not empty (an empty one is a ledger being made). */
  exists: boolean;
  /** Something to warn about that does not stop the ledger (a FUSE file system), and the fix. */
  warning?: { problem: string; fix: string };
}

/**
 * Checks the ledger's folder and database file, making the folder (0700) when `make` and it is
 * missing. Throws LedgerPlaceProblem with the fix.
 */
export async function checkLedgerPlace(dir: string, make: boolean): Promise<LedgerPlace> {
  let folder = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw placeError(dir, error);
  });
  if (!folder) {
    if (!make) return { exists: false };
    await mkdir(dir, { recursive: true, mode: 0o700 }).catch(async (error: NodeJS.ErrnoException) => {
      throw placeError(dir, await whyNotMade(dir, error));
    });
    folder = await stat(dir);
  }
  if (!folder.isDirectory())
    throw new LedgerPlaceProblem(
      `The ledger's folder ${dir} is not a folder`,
      "set GATEWAY_LEDGER_DIR to a folder of this user's",
    );
  assertOwnedAndPrivate(dir, folder, 'folder', `chmod go-w ${shellQuote(dir)}`);
  const warning = await localWarning(dir);
  if (make) {
    await access(dir, constants.W_OK).catch((error: NodeJS.ErrnoException) => {
      throw placeError(dir, error);
    });
  }
  const database = join(dir, DATABASE_FILE);
  let exists = false;
  for (const suffix of ['', ...COMPANIONS]) {
    const path = database + suffix;
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
    assertOwnedAndPrivate(path, found, 'file', `chmod go-w ${shellQuote(path)}`);
    if (suffix === '') exists = found.size > 0; // an empty file is a ledger being made
  }
  return warning ? { exists, warning } : { exists };
}

function assertOwnedAndPrivate(path: string, stats: Stats, what: 'folder' | 'file', chmod: string): void {
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
      chmod,
    );
}

/** Refuses a network file system; a FUSE one is a warning. */
async function localWarning(dir: string): Promise<LedgerPlace['warning']> {
  const type = await statfs(dir).then(
    (s) => s.type,
    () => undefined,
  );
  const name = type === undefined ? undefined : NETWORK_FILE_SYSTEMS.get(type);
  if (name)
    throw new LedgerPlaceProblem(`The ledger's folder ${dir} is on a ${name} file system`, ADVICE_URL);
  if (type === FUSE)
    return {
      problem: `the ledger's folder ${dir} is on a FUSE file system, where SQLite's locks may not hold if it reaches another machine (sshfs, a cloud drive)`,
      fix: 'put GATEWAY_LEDGER_DIR on a local disk, or set GATEWAY_LEDGER_URL to a PostgreSQL database',
    };
  return undefined;
}

/**
 * Why a folder could not be made: a recursive mkdir on a read-only file system says ENOENT, so
 * the nearest folder that exists is asked whether it can be written.
 */
async function whyNotMade(dir: string, error: NodeJS.ErrnoException): Promise<unknown> {
  if (error.code !== 'ENOENT') return error;
  for (let parent = dirname(dir); parent !== dirname(parent); parent = dirname(parent)) {
    const found = await stat(parent).catch(() => null);
    if (!found) continue;
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
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** A file system error at the ledger's place, in words. */
export function placeError(path: string, error: unknown): LedgerPlaceProblem {
  const code = codeOf(error);
  const why =
    code === 'EROFS'
      ? 'is on a read-only file system'
      : code === 'EACCES' || code === 'EPERM'
        ? 'cannot be written by this user'
        : code === 'ENOTDIR'
          ? 'lies below a file, not a folder'
          : code === 'ENOSPC'
            ? 'is on a full disk'
            : `cannot be used (${code})`;
  return new LedgerPlaceProblem(
    `The ledger of billed calls at ${path} ${why}`,
    'set GATEWAY_LEDGER_DIR to a folder this user can write on a local disk',
  );
}

function shellQuote(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
