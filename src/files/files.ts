// The two file rules of the product: local files are read only from inside the input roots
// (after resolving symlinks), and every saved file (output-files.ts) lands inside the output directory with a
// name that cannot collide. Both stream; nothing here holds a whole file in memory.

import { realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { UserError } from '../lib/user-error.js';
import { isInsideDir } from './fs-guards.js';
import type { MimeOf } from './media-types.js';

export interface InputFile {
  path: string;
  size: number;
  name: string;
}

export async function resolveInputFile(
  requested: string,
  roots: readonly string[],
  cwd: string,
  maxBytes: number,
): Promise<InputFile> {
  if (requested.includes('\0')) throw new UserError('The file path contains a NUL character.');
  if (roots.length === 0) throw new UserError(noWorkspace(cwd));
  const absolute = isAbsolute(requested) ? requested : resolve(cwd, requested);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    throw new UserError(`${unresolvable(requested, error)} Give a path inside ${roots.join(', ')}.`);
  }
  const realRoots = await Promise.all(roots.map((r) => realpath(r).catch(() => resolve(r))));
  if (!realRoots.some((root) => isInside(real, root))) {
    throw new UserError(
      `${requested} is outside the allowed input roots (${roots.join(', ')}). Move the file there or set GATEWAY_INPUT_ROOTS.`,
    );
  }
  const info = await stat(real);
  if (!info.isFile()) throw new UserError(`${requested} is not a regular file.`);
  if (info.size > maxBytes) {
    throw new UserError(`${requested} is ${formatBytes(info.size)}; the limit is ${formatBytes(maxBytes)}.`);
  }
  return { path: real, size: info.size, name: basename(real) };
}

/**
 * Without input roots (the server runs in / or the home directory, and the client shares no
 * roots) no local file is read: the whole disk is not the workspace.
 */
function noWorkspace(cwd: string): string {
  return (
    `Local files cannot be read here: the server runs in ${cwd}, which is not a project directory, and the client ` +
    "shares no workspace roots. Set GATEWAY_INPUT_ROOTS (in this server's settings in the client) to the " +
    'directories tools may read, or give the file as a URL or inline data instead.'
  );
}

/** Why a path cannot be resolved: "No such file" would be wrong for a symlink loop or a huge path. */
function unresolvable(requested: string, error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ELOOP':
      return `${requested} cannot be resolved: its symbolic links form a loop.`;
    case 'ENAMETOOLONG':
      return `The file path is too long (${requested.length} characters, starting "${requested.slice(0, 60)}").`;
    case 'EACCES':
      return `${requested} cannot be reached: permission denied.`;
    default:
      return `No such file: ${requested}.`;
  }
}

export const isInside = isInsideDir;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Detects common image types from their first bytes (never trust the extension alone). */
export function sniffImageMime(head: Buffer): MimeOf<'image'> | null {
  const ascii = (from: number, to: number) => head.subarray(from, to).toString('latin1');
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return null;
}
