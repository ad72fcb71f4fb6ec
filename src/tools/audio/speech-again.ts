// The same speech asked for again within the duplicate window (same text, model, voice and
// format): answered with the file the earlier call saved, when it is still there, instead of
// paying for the speech twice. An identical call still being made is not made a second time: the
// agent is told to wait for its file.

import { lstat } from 'node:fs/promises';
import { extname } from 'node:path';
import { isInsideDir } from '../../files/fs-guards.js';
import { readSavedFile } from '../../files/read-saved-file.js';
import { savedFileMime, savedFileUri } from '../../files/saved-files.js';
import { UserError } from '../../lib/user-error.js';
import { clockTime, type LedgerCall } from '../billing.js';
import type { ToolContext } from '../define.js';

/** A speech file as the result shows it. */
export interface SpeechFile {
  path: string;
  bytes: number;
  mimeType: string;
  /** The file's extension: the format delivered. */
  extension: string;
  /** The audio, when it is to be attached inline and small enough. */
  inline: Buffer | null;
}

/**
 * The earlier call's file, when it is still in this client's output directory; null when the
 * speech must be made again. Throws the refusal when the identical call is still being made.
 */
export async function earlierSpeech(
  earlier: LedgerCall,
  inlineUpTo: number | null,
  ctx: ToolContext,
): Promise<(SpeechFile & { note: string }) | null> {
  if (earlier.state === 'pending') {
    throw new UserError(
      `Not sent, and nothing billed: the same speech (text, model, voice and format) is being made right now ` +
        `(begun at ${clockTime(earlier.at)}). Wait for that call's file, or call again with allow_duplicate: true to pay for another.`,
    );
  }
  const path = earlier.file;
  if (earlier.state !== 'accepted' || !path) return null;
  const { outputDir } = await ctx.workspace();
  const info = await lstat(path).catch(() => null);
  if (!info?.isFile() || info.size === 0 || !isInsideDir(path, outputDir)) return null;
  const mimeType = savedFileMime(path);
  let inline: Buffer | null = null;
  if (inlineUpTo !== null && info.size <= inlineUpTo) {
    const read = await readSavedFile(path, outputDir, savedFileUri(path), mimeType).catch(() => null);
    inline = read && 'blob' in read ? Buffer.from(read.blob, 'base64') : null;
  }
  return {
    path,
    bytes: info.size,
    mimeType,
    extension: extname(path).slice(1),
    inline,
    note:
      `Nothing was sent or billed: the same speech (text, model, voice and format) was made at ${clockTime(earlier.at)}, ` +
      'and this is its file. To pay for a new one, call again with allow_duplicate: true.',
  };
}
