import { type FileHandle, mkdir, open, realpath, rm, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type CancelSignal, toAbortSignal } from '../../cancel.js';
import { gcPacer } from '../../service/transfer-gc.js';
import { assertCreatedInside, isInsideDir, realOutputDir } from './fs-guards.js';
import { UserError } from './results.js';

/**
 * The two file rules of the product: local files are read only from inside the input roots
 * (after resolving symlinks), and every saved file lands inside the output directory with a
 * name that cannot collide. Both stream; nothing here holds a whole file in memory.
 */
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

/** A fresh, collision-free path inside the output directory (the file is created empty). */
export async function createOutputPath(outputDir: string, stem: string, extension: string): Promise<string> {
  const { path, handle } = await createOutputFile(outputDir, stem, extension);
  await handle.close();
  return path;
}

/**
 * Creates a new, empty file in the output directory under a collision-free name and keeps it
 * open. `wx` (O_CREAT|O_EXCL) never opens an existing file or follows a symlink planted under
 * that name, and writing through the returned handle (never reopening the path) means a file
 * swapped for a symlink after creation cannot redirect the write outside the directory.
 * `workDir`: the working directory, whose symlinks may not lead the output directory out of it.
 */
export async function createOutputFile(
  outputDir: string,
  stem: string,
  extension: string,
  workDir?: string,
): Promise<{ path: string; handle: FileHandle }> {
  await mkdir(outputDir, { recursive: true });
  const realDir = await realOutputDir(outputDir, workDir);
  const safeStem = sanitizeStem(stem);
  const ext =
    extension
      .replace(/[^a-z0-9]/gi, '')
      .slice(0, 8)
      .toLowerCase() || 'bin';
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  for (let n = 0; n < 1000; n++) {
    const name = `${safeStem}-${stamp}${n === 0 ? '' : `-${n}`}.${ext}`;
    const path = join(outputDir, name);
    try {
      const handle = await open(path, 'wx');
      await assertCreatedInside(handle, realDir);
      return { path, handle };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new UserError(`Could not find a free file name in ${outputDir}.`);
}

export interface SavedFile {
  path: string;
  bytes: number;
}

/**
 * Streams `source` into a new file in the output directory. Stops (and removes the partial file)
 * past `maxBytes` or when `signal` aborts.
 */
export async function saveStream(
  source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
  target: { outputDir: string; stem: string; extension: string; workDir?: string },
  maxBytes: number,
  signal?: CancelSignal,
): Promise<SavedFile> {
  const { path, handle } = await createOutputFile(
    target.outputDir,
    target.stem,
    target.extension,
    target.workDir,
  );
  let bytes = 0;
  const pace = gcPacer();
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      pace(chunk.length);
      if (bytes > maxBytes) callback(new UserError(`The file exceeds the ${formatBytes(maxBytes)} limit.`));
      else callback(null, chunk);
    },
  });
  try {
    await pipeline(source, limiter, handle.createWriteStream(), { signal: toAbortSignal(signal) });
    return { path, bytes };
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(path, { force: true });
    throw error;
  }
}

function sanitizeStem(stem: string): string {
  const cleaned = basename(stem, extname(stem))
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return cleaned || 'file';
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Detects common image types from their first bytes (never trust the extension alone). */
export function sniffImageMime(head: Buffer): string | null {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (
    head.subarray(0, 6).toString('latin1') === 'GIF87a' ||
    head.subarray(0, 6).toString('latin1') === 'GIF89a'
  )
    return 'image/gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return null;
}
