import { constants } from 'node:fs';
import { type FileHandle, open, realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UserError } from '../lib/user-error.js';
import { formatBytes, type InputFile, isInside, resolveInputFile } from './files.js';
import { descriptorPath } from './fs-guards.js';

export interface OpenedInputFile extends InputFile {
  handle: FileHandle;
  mtimeMs: number;
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Opens a local file for reading under the input-root rule, closing the gap between checking a
 * path and opening it. resolveInputFile checks the real path; between that check and an open by
 * name, a process that can write inside a root could swap a directory for a symlink (and the
 * open would read a file outside the roots) or a file for a FIFO (and the open would block).
 * So the file is opened once, without following a final symlink and without blocking, checked
 * through its descriptor (a regular file, within the size limit), and confirmed to lie inside a
 * root: on Linux by asking the kernel where the open descriptor really points
 * (/proc/self/fd/N), which no swap after the open can change; elsewhere by confirming that the
 * checked real path still leads to the very same file (a narrower, best-effort check).
 * Everything is then read through that descriptor.
 */
export async function openInputFile(
  requested: string,
  roots: readonly string[],
  cwd: string,
  maxBytes: number,
): Promise<OpenedInputFile> {
  const checked = await resolveInputFile(requested, roots, cwd, maxBytes);
  let handle: FileHandle;
  try {
    handle = await open(checked.path, OPEN_FLAGS);
  } catch (error) {
    throw openError(requested, error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UserError(`${requested} is not a regular file.`);
    if (info.size > maxBytes) {
      throw new UserError(
        `${requested} is ${formatBytes(info.size)}; the limit is ${formatBytes(maxBytes)}.`,
      );
    }
    const where = await descriptorPath(handle);
    if (where !== null) {
      const realRoots = await Promise.all(roots.map((r) => realpath(r).catch(() => resolve(r))));
      if (!realRoots.some((root) => isInside(where, root))) throw changed(requested);
    } else {
      const now = await realpath(checked.path).then(
        (again) => (again === checked.path ? stat(again) : null),
        () => null,
      );
      if (!now || now.dev !== info.dev || now.ino !== info.ino) throw changed(requested);
    }
    return { ...checked, size: info.size, mtimeMs: info.mtimeMs, handle };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads at most `limit` bytes from the start of an open file (it may have grown since its stat). */
export async function readUpTo(handle: FileHandle, limit: number): Promise<Buffer> {
  const buffer = Buffer.alloc(limit);
  let filled = 0;
  while (filled < limit) {
    const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

function changed(requested: string): UserError {
  return new UserError(`${requested} changed while it was being opened, so it was not read; try again.`);
}

function openError(requested: string, error: unknown): UserError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return changed(requested);
  if (code === 'ENOENT') return new UserError(`No such file: ${requested}.`);
  if (code === 'EACCES' || code === 'EPERM')
    return new UserError(`${requested} cannot be read (permission denied).`);
  return new UserError(`${requested} cannot be opened (${code ?? 'error'}).`);
}
