import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';
import { downloadToTemp } from '../../files/download.js';
import { formatBytes, resolveInputFile } from '../../files/files.js';
import { openInputFile, readUpTo } from '../../files/input-files.js';
import { type MediaType, type MimeOf, mediaType, mediaTypeFor } from '../../files/media-types.js';
import { UserError } from '../../lib/user-error.js';
import type { ToolContext } from '../define.js';

/**
 * The audio to transcribe, from exactly one of a local file (under the input roots), a URL
 * (downloaded to a temporary file first) or base64 data. `key` identifies the audio before any
 * download, so a cached transcript is found without fetching the URL again.
 */
export interface AudioSource {
  key: string;
  /** A short name for messages and saved file names. */
  name: string;
  /** Produces the upload (downloading a URL now); call `cleanup` when done. */
  open(onBytes?: (bytes: number, total: number | undefined) => void): Promise<OpenedAudio>;
}

export interface OpenedAudio {
  filename: string;
  contentType: string;
  size: number;
  stream: () => Readable;
  cleanup(): Promise<void>;
}

export interface SourceArgs {
  file_path?: string | undefined;
  url?: string | undefined;
  data_base64?: string | undefined;
}

export const MAX_BASE64_BYTES = 20 * 1024 * 1024;
/** Enough for every signature the sniffer reads (an MPEG transport stream's second packet starts at 188). */
const HEAD_BYTES = 512;

export async function audioSource(args: SourceArgs, ctx: ToolContext): Promise<AudioSource> {
  const given = (['file_path', 'url', 'data_base64'] as const).filter((k) => args[k] !== undefined);
  if (given.length !== 1) {
    throw new UserError(
      given.length === 0
        ? 'Give the audio as exactly one of file_path (a local file), url (http/https) or data_base64.'
        : `Give exactly one of file_path, url or data_base64, not ${given.join(' and ')}.`,
    );
  }
  const maxBytes = ctx.runtime.config.maxUploadMb * 1024 * 1024;
  if (args.file_path !== undefined) return fileSource(args.file_path, maxBytes, ctx);
  if (args.url !== undefined) return urlSource(args.url, maxBytes, ctx);
  return base64Source(args.data_base64 ?? '');
}

async function fileSource(requested: string, maxBytes: number, ctx: ToolContext): Promise<AudioSource> {
  const { inputRoots, baseDir } = await ctx.workspace();
  const file = await resolveInputFile(requested, inputRoots, baseDir, maxBytes);
  if (file.size === 0) throw new UserError(`${requested} is empty: there is no audio to transcribe.`);
  const { mtimeMs } = await stat(file.path);
  return {
    key: `file:${file.path}:${file.size}:${mtimeMs}`,
    name: file.name,
    async open() {
      // Checked again and opened once: every byte read below comes through this descriptor.
      const opened = await openInputFile(requested, inputRoots, baseDir, maxBytes);
      try {
        if (opened.size === 0) throw new UserError(`${requested} is empty: there is no audio to transcribe.`);
        const type = containerOf(await readUpTo(opened.handle, HEAD_BYTES), requested);
        return {
          ...uploadType(file.name, type),
          size: opened.size,
          // Read exactly the size announced in the multipart length, even if the file grows meanwhile.
          stream: () => opened.handle.createReadStream({ start: 0, end: opened.size - 1, autoClose: false }),
          cleanup: () => opened.handle.close(),
        };
      } catch (error) {
        await opened.handle.close();
        throw error;
      }
    },
  };
}

function urlSource(url: string, maxBytes: number, ctx: ToolContext): AudioSource {
  const name = decodeName(basename(new URL(url).pathname)) || 'audio';
  return {
    key: `url:${url}`,
    name,
    async open(onBytes) {
      const download = await downloadToTemp(url, ctx.runtime.service.client, maxBytes, ctx.signal, (n) =>
        onBytes?.(n, undefined),
      );
      try {
        const type = containerOf(await readHead(download.path), url);
        // After a redirect the final URL usually carries the real file name.
        const finalName = decodeName(basename(new URL(download.finalUrl).pathname)) || name;
        return {
          ...uploadType(finalName, type),
          size: download.size,
          stream: () => createReadStream(download.path),
          cleanup: download.cleanup,
        };
      } catch (error) {
        await download.cleanup();
        throw error;
      }
    },
  };
}

function base64Source(data: string): AudioSource {
  // The data: URL's own media type is not needed: the bytes say what they are.
  const match = /^data:(?:[\w.+-]+\/[\w.+-]+)?(?:;[^,]*)?,/i.exec(data);
  const payload = (match ? data.slice(match[0].length) : data).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload)) {
    throw new UserError('data_base64 is not valid base64 (or a data: URL holding base64).');
  }
  const bytes = Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
  if (bytes.length === 0) throw new UserError('data_base64 is empty: there is no audio to transcribe.');
  if (bytes.length > MAX_BASE64_BYTES) {
    throw new UserError(
      `data_base64 holds ${formatBytes(bytes.length)}; the limit is ${formatBytes(MAX_BASE64_BYTES)}. Save the audio under the input roots and pass file_path.`,
    );
  }
  const type = containerOf(bytes.subarray(0, HEAD_BYTES), 'data_base64');
  const key = `base64:${createHash('sha256').update(bytes).digest('hex')}`;
  return {
    key,
    name: 'audio',
    async open() {
      return {
        ...uploadType('audio', type),
        size: bytes.length,
        stream: () => Readable.from([bytes]),
        cleanup: async () => undefined,
      };
    },
  };
}

/**
 * The filename and type sent to the provider, which often goes by the extension. The type is what
 * the bytes are. A name keeps its extension when that names the type, or any audio type (a tag
 * can hide the codec from the first bytes: FLAC or AAC behind an ID3 tag); any other name gets the
 * type's extension added.
 */
function uploadType(name: string, type: MediaType): { filename: string; contentType: string } {
  const ext = extname(name).slice(1).toLowerCase();
  const named = type.extensions.includes(ext) || mediaTypeFor(ext, 'audio') !== undefined;
  return { filename: named ? name : `${name}.${type.extension}`, contentType: type.mime };
}

/** Audio and video containers, from their first bytes; null for anything else. */
export function sniffAudioMime(head: Buffer): MimeOf<'audio' | 'video'> | null {
  const ascii = (from: number, to: number) => head.subarray(from, to).toString('latin1');
  const riff = ascii(0, 4) === 'RIFF' ? ascii(8, 12) : '';
  if (ascii(0, 3) === 'ID3') return 'audio/mpeg';
  if (riff === 'WAVE') return 'audio/wav';
  if (riff === 'AVI ') return 'video/x-msvideo';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  if (ascii(4, 8) === 'ftyp') return 'audio/mp4';
  if (ascii(0, 4) === 'FORM' && /^AIF[FC]$/.test(ascii(8, 12))) return 'audio/aiff';
  if (ascii(0, 4) === 'caff') return 'audio/x-caf';
  if (ascii(0, 5) === '#!AMR') return 'audio/amr';
  if (head.subarray(0, 4).equals(ASF)) return 'audio/x-ms-wma';
  if (head.subarray(0, 4).equals(EBML)) return 'audio/webm';
  if (head.subarray(0, 3).equals(MPEG_PACK) && (head[3] === 0xba || head[3] === 0xb3)) return 'video/mpeg';
  if (head[0] === 0x47 && head[188] === 0x47) return 'video/mp2t';
  return mpegFrame(head);
}

/**
 * A bare MPEG audio frame header: 11 sync bits, then for MP3 (layer III or II) a bitrate and
 * sample rate that exist, or for AAC's ADTS framing 12 sync bits and layer 00. Checked that far
 * because a UTF-16 byte-order mark (FF FE) is a sync too: it reads as the layer I no file uses.
 */
function mpegFrame(head: Buffer): MimeOf<'audio'> | null {
  const [sync, flags, rates] = [head[0], head[1] ?? 0, head[2] ?? 0];
  if (sync !== 0xff || (flags & 0xe0) !== 0xe0) return null;
  if ((flags & 0xf6) === 0xf0) return 'audio/aac';
  const layer = (flags >> 1) & 0x03;
  const version = (flags >> 3) & 0x03;
  const bitrate = rates >> 4;
  const sampleRate = (rates >> 2) & 0x03;
  const mp3 = (layer === 1 || layer === 2) && version !== 1 && bitrate !== 0x0f && sampleRate !== 0x03;
  return mp3 ? 'audio/mpeg' : null;
}

const ASF = Buffer.from([0x30, 0x26, 0xb2, 0x75]);
const EBML = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);
const MPEG_PACK = Buffer.from([0x00, 0x00, 0x01]);

const CONTAINERS = 'mp3, wav, m4a/mp4, ogg/opus, flac, webm/mkv, aac, aiff, caf, amr, wma, avi or mpeg';

/**
 * Only audio (and video) containers are uploaded, known by their first bytes: anything else (a
 * `.env` file, source code, a log, whatever its name) is refused before it leaves the machine.
 * The message never quotes the file.
 */
function containerOf(head: Buffer, what: string): MediaType {
  const type = mediaType(sniffAudioMime(head));
  if (type) return type;
  const kind = looksLikeText(head) ? 'it looks like text, not audio' : 'its first bytes are no audio format';
  throw new UserError(`${what} was not sent: ${kind}. Give an audio or video file (${CONTAINERS}).`);
}

/** For the wording only: mostly printable UTF-8. */
function looksLikeText(head: Buffer): boolean {
  const text = head.toString('utf8').replace(/\uFFFD{1,3}$/, '');
  return text.length > 0 && text.replace(UNPRINTABLE, '').length / text.length > 0.9;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: counting control characters is the point
const UNPRINTABLE = /[\u0000-\u0008\u000e-\u001f\u007f\uFFFD]/g;

async function readHead(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  return readUpTo(handle, HEAD_BYTES).finally(() => handle.close());
}

/** A URL's file name, decoded (as it came when it does not decode), safe for messages and uploads. */
function decodeName(name: string): string {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // a malformed escape: the name as it came
  }
  return decoded.replace(/[^\w.+-]+/g, '_').slice(-100);
}
