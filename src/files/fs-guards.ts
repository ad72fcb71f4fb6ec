// Checks that keep file reads and writes where the rules put them even when a directory entry is
// swapped for a symlink: by where a descriptor really points, and by where a directory really is.

import type { FileHandle } from 'node:fs/promises';
import { readlink, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { UserError } from '../lib/user-error.js';

/** Where an open descriptor points, per the kernel (Linux); null where that cannot be asked. */
export async function descriptorPath(handle: FileHandle): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  const target = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
  return target === null ? null : target.replace(/ \(deleted\)$/, '');
}

export function isInsideDir(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The output directory's real path. An output directory inside the working directory (the
 * default, ./gateway-output) must really be inside it: the working directory is often a cloned
 * repository, and a symlink it ships under that name must not send saved files (a transcript of
 * anyone's audio, say) to ~/.bashrc.d or any other place. An output directory configured
 * elsewhere is used wherever it leads.
 */
export async function realOutputDir(outputDir: string, workDir: string | undefined): Promise<string> {
  const real = await realpath(outputDir);
  if (workDir && isInsideDir(outputDir, workDir)) {
    const realWork = await realpath(workDir).catch(() => workDir);
    if (!isInsideDir(real, realWork)) {
      throw new UserError(
        `The output directory ${outputDir} leads outside the working directory (to ${real}) through a symlink, so nothing was saved. ` +
          'Remove the symlink, or set GATEWAY_OUTPUT_DIR to the directory you want.',
      );
    }
  }
  return real;
}
