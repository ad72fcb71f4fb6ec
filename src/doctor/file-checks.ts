import { randomBytes } from 'node:crypto';
import { rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Check } from './check.js';

/**
 * File checks for `doctor`. The output directory is not created here (the tools create it on
 * first save): a missing one is checked through its nearest existing parent, and every probe
 * file is removed again, so doctor leaves nothing behind.
 */
export async function checkOutputDir(dir: string): Promise<Check> {
  const fix = 'Set GATEWAY_OUTPUT_DIR to a directory you can write to, or fix its permissions.';
  const existing = await nearestExisting(dir);
  if (!existing.isDirectory) {
    const message = `Output directory ${dir} cannot be created: ${existing.path} is not a directory`;
    return { id: 'output_dir', status: 'fail', required: true, message, fix };
  }
  const problem = await probeWrite(existing.path);
  if (problem) {
    const message = `Output directory ${dir} is not writable (${existing.path}: ${problem})`;
    return { id: 'output_dir', status: 'fail', required: true, message, fix };
  }
  const message =
    existing.path === dir
      ? `Output directory writable: ${dir}`
      : `Output directory ${dir} does not exist yet; it will be created on the first save (${existing.path} is writable)`;
  return { id: 'output_dir', status: 'ok', required: true, message, fix: null };
}

export async function checkInputRoots(roots: readonly string[]): Promise<Check[]> {
  return Promise.all(
    roots.map(async (root): Promise<Check> => {
      const info = await stat(root).catch(() => null);
      if (info?.isDirectory()) {
        return { id: 'input_root', status: 'ok', required: false, message: `Input root: ${root}`, fix: null };
      }
      return {
        id: 'input_root',
        status: 'warn',
        required: false,
        message: `Input root ${root} ${info ? 'is not a directory' : 'does not exist'}: local files cannot be read from it`,
        fix: 'Fix GATEWAY_INPUT_ROOTS (comma-separated directories).',
      };
    }),
  );
}

async function nearestExisting(path: string): Promise<{ path: string; isDirectory: boolean }> {
  let current = path;
  for (;;) {
    const info = await stat(current).catch(() => null);
    if (info) return { path: current, isDirectory: info.isDirectory() };
    const parent = dirname(current);
    if (parent === current) return { path: current, isDirectory: false };
    current = parent;
  }
}

/** Writes and removes a probe file: access() can say yes on read-only mounts and ACLs. */
async function probeWrite(dir: string): Promise<string | null> {
  const probe = join(dir, `.gateway-tools-doctor-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(probe, '', { flag: 'wx' });
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}
