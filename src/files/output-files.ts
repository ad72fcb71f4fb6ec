// Saving into the output directory. A file is written under a hidden temporary name and appears
// under its real, collision-free name only once it is complete: a call that fails, is cancelled
// or is cut short by the process ending leaves no truncated file that looks finished, and no
// temporary one either (removed on every exit, see exit-cleanup.ts).
//
// The temporary file is created exclusively (`wx`: never an existing file, never a symlink
// planted under that name) and written only through its descriptor. It is published with a hard
// link, which never replaces an existing name, and the published name is checked to be that very
// file; a file system without hard links gets a rename after a check that the name is free.

import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, rename, rm, statfs } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UserError } from '../lib/user-error.js';
import { byteLimiter } from './byte-limit.js';
import { removeOnExit } from './exit-cleanup.js';
import { formatBytes } from './files.js';
import { descriptorPath, realOutputDir } from './fs-guards.js';

export interface SavedFile {
  path: string;
  bytes: number;
}

export interface OutputTarget {
  outputDir: string;
  stem: string;
  extension: string;
  /** The working directory, whose symlinks may not lead the output directory out of it. */
  workDir?: string;
}

/** Less free space than this in the output directory refuses a billed call before it is sent. */
const MIN_FREE_BYTES = 16 * 1024 * 1024;

/**
 * Makes sure files can be saved in the output directory: it exists (created if need be), is a
 * directory inside the working directory when it is under it, takes a new file, and has room.
 * Called before a billed call, so nothing is paid for that could not be saved.
 */
export async function prepareOutputDir(outputDir: string, workDir?: string): Promise<void> {
  const dir = await openOutputDir(outputDir, workDir).catch((error: unknown) => {
    throw error instanceof UserError ? new UserError(`${error.message} Nothing was sent.`) : error;
  });
  await dir.close();
}

/**
 * The output directory, held open. Names are reached through the held descriptor
 * (`/proc/self/fd/<n>/<name>` on Linux), so a directory swapped for a symlink after it was
 * checked cannot send a file elsewhere; other systems go by the checked real path.
 */
interface OutputDir {
  at(name: string): string;
  /** Where `name` is, by path: for removal at exit, when the descriptor is gone. */
  realPath(name: string): string;
  close(): Promise<void>;
}

async function openOutputDir(outputDir: string, workDir: string | undefined): Promise<OutputDir> {
  let handle: FileHandle | undefined;
  try {
    await mkdir(outputDir, { recursive: true });
    const realDir = await realOutputDir(outputDir, workDir);
    handle = await open(realDir, constants.O_RDONLY | constants.O_DIRECTORY);
    const held = await descriptorPath(handle);
    if (held !== null && held !== realDir) throw changedMeanwhile();
    const fd = handle.fd;
    const dir: OutputDir = {
      at: (name) => (held === null ? join(realDir, name) : `/proc/self/fd/${fd}/${name}`),
      realPath: (name) => join(realDir, name),
      close: () => (handle as FileHandle).close(),
    };
    const probeName = `.gateway-tools-probe-${randomUUID()}`;
    const forget = removeOnExit(dir.realPath(probeName));
    await (await open(dir.at(probeName), 'wx')).close();
    await rm(dir.at(probeName), { force: true });
    forget();
    const { bavail, bsize } = await statfs(realDir);
    if (bavail * bsize < MIN_FREE_BYTES) throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
    return dir;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    if (error instanceof UserError) throw error;
    throw new UserError(
      `The output directory ${outputDir} cannot take new files (${writeProblem(error)}). ` +
        'Fix it, or set GATEWAY_OUTPUT_DIR to a writable directory with free space.',
    );
  }
}

/**
 * Streams `source` into a new file in the output directory. Stops past `maxBytes` or when
 * `signal` aborts; on any failure nothing is left behind.
 */
export async function saveStream(
  source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
  target: OutputTarget,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<SavedFile> {
  const dir = await openOutputDir(target.outputDir, target.workDir);
  const name = `.gateway-tools-${randomUUID()}.partial`;
  const temporary = dir.at(name);
  const forget = removeOnExit(dir.realPath(name));
  const limiter = byteLimiter(
    maxBytes,
    () => new UserError(`The file exceeds the ${formatBytes(maxBytes)} limit.`),
  );
  try {
    const handle = await open(temporary, 'wx');
    const { ino, dev } = await handle.stat();
    // The write stream closes the descriptor once everything is written (or on failure).
    await pipeline(source, limiter, handle.createWriteStream(), { signal });
    const finalName = await publish(temporary, dir, target, { ino, dev });
    return { path: join(target.outputDir, finalName), bytes: limiter.bytes };
  } catch (error) {
    await rm(temporary, { force: true });
    throw asWriteError(error, target.outputDir);
  } finally {
    forget();
    await dir.close();
  }
}

/** Saves a text (a transcript) as a new file in the output directory. */
export async function saveText(text: string, target: OutputTarget): Promise<string> {
  const bytes = Buffer.byteLength(text);
  return (await saveStream(Readable.from([Buffer.from(text)]), target, bytes)).path;
}

/** Gives the complete temporary file its final, collision-free name, and returns that name. */
async function publish(
  temporary: string,
  dir: OutputDir,
  target: OutputTarget,
  id: { ino: number; dev: number },
): Promise<string> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  const stem = sanitizeStem(target.stem);
  const ext =
    target.extension
      .replace(/[^a-z0-9]/gi, '')
      .slice(0, 8)
      .toLowerCase() || 'bin';
  for (let n = 0; n < 1000; n++) {
    const name = `${stem}-${stamp}${n === 0 ? '' : `-${n}`}.${ext}`;
    const path = dir.at(name);
    if (!(await linkOrMove(temporary, path))) continue;
    const published = await lstat(path).catch(() => null);
    if (!published?.isFile() || published.ino !== id.ino || published.dev !== id.dev) {
      await rm(path, { force: true });
      throw changedMeanwhile();
    }
    await rm(temporary, { force: true });
    return name;
  }
  throw new UserError(`Could not find a free file name in ${target.outputDir}.`);
}

/** False when `path` is taken. */
async function linkOrMove(temporary: string, path: string): Promise<boolean> {
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'ENOENT') throw changedMeanwhile();
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
  }
  // No hard links here (some network and FAT file systems): rename, which would replace a file
  // that appeared under the name in between; the name is checked first.
  if (
    await lstat(path).then(
      () => true,
      () => false,
    )
  )
    return false;
  await rename(temporary, path).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? changedMeanwhile() : error;
  });
  return true;
}

function changedMeanwhile(): UserError {
  return new UserError(
    'The output directory changed while a file was being saved in it, so nothing was saved.',
  );
}

function sanitizeStem(stem: string): string {
  const cleaned = basename(stem, extname(stem))
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return cleaned || 'file';
}

const WRITE_PROBLEMS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'it is not a directory',
  EEXIST: 'a file is in the way',
  EIO: 'an input/output error',
};

function writeProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const what = WRITE_PROBLEMS[code];
  return what ? `${what}, ${code}` : code || String((error as Error).message ?? error);
}

/** A file system failure while saving, told as such (never as a bug); other errors unchanged. */
function asWriteError(error: unknown, outputDir: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (!code || !(code in WRITE_PROBLEMS)) return error;
  return new UserError(`Could not save the file in ${outputDir} (${writeProblem(error)}).`);
}
