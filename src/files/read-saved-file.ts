import { constants } from 'node:fs';
import { type FileHandle, open, realpath, stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { BlobResourceContents, TextResourceContents } from '@modelcontextprotocol/server';
import { formatBytes } from './files.js';
import { descriptorPath, isInsideDir } from './fs-guards.js';
import { isTextMime } from './saved-files.js';

/**
 * The largest file resources/read sends. The whole answer is one JSON-RPC message (a blob grows
 * by a third as base64, and is held while it is sent), so this bounds the memory one read takes.
 */
export const MAX_RESOURCE_BYTES = 32 * 1024 * 1024;

/** Why a saved file cannot be read: it is not there (or not the server's to give), or too big. */
export class SavedFileError extends Error {
  constructor(
    readonly kind: 'not-found' | 'too-big',
    message: string,
  ) {
    super(message);
  }
}

// Never follow a final symlink; never block on a FIFO planted under a saved file's name.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
/** A multiple of 3, so that the chunks' base64 joins into the file's base64. */
const CHUNK_BYTES = 3 * 64 * 1024;

/**
 * Reads a file the server saved, streamed from disk into the answer: only a regular file that
 * really lies in `dir` (checked through the open descriptor, as input files are), at most
 * MAX_RESOURCE_BYTES, as text for text types and base64 otherwise.
 */
export async function readSavedFile(
  path: string,
  dir: string,
  uri: string,
  mimeType: string,
): Promise<TextResourceContents | BlobResourceContents> {
  const handle = await open(path, OPEN_FLAGS).catch(() => {
    throw notFound(uri);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile() || !(await liesIn(handle, path, dir, info))) throw notFound(uri);
    if (info.size > MAX_RESOURCE_BYTES) {
      throw new SavedFileError(
        'too-big',
        `${uri} is ${formatBytes(info.size)}, over the ${formatBytes(MAX_RESOURCE_BYTES)} that resources/read sends; ` +
          'read it where it was saved (the tool result gives its path on the server), or use the URL it came from.',
      );
    }
    const text = isTextMime(mimeType);
    const decoder = new StringDecoder('utf8');
    const parts: string[] = [];
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(info.size, 1)));
    for (let position = 0; position < info.size; ) {
      const { bytesRead } = await handle.read(
        buffer,
        0,
        Math.min(buffer.length, info.size - position),
        position,
      );
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      parts.push(text ? decoder.write(chunk) : chunk.toString('base64'));
      position += bytesRead;
    }
    if (text) return { uri, mimeType, text: parts.join('') + decoder.end() };
    return { uri, mimeType, blob: parts.join('') };
  } finally {
    await handle.close();
  }
}

/** Whether the open file is in `dir`: where the kernel says the descriptor points (Linux), else by identity. */
async function liesIn(
  handle: FileHandle,
  path: string,
  dir: string,
  info: { dev: number; ino: number },
): Promise<boolean> {
  const realDir = await realpath(dir).catch(() => null);
  if (realDir === null) return false;
  const where = await descriptorPath(handle);
  if (where !== null) return isInsideDir(where, realDir);
  const again = await realpath(path).catch(() => null);
  if (again === null || !isInsideDir(again, realDir)) return false;
  const now = await stat(again).catch(() => null);
  return now !== null && now.dev === info.dev && now.ino === info.ino;
}

function notFound(uri: string): SavedFileError {
  return new SavedFileError(
    'not-found',
    `Resource not found: ${uri} (this server's resources are the files its tools saved in the output directory; server processes read each other's saved files only when they share GATEWAY_OUTPUT_DIR)`,
  );
}
