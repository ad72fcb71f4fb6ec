// GET /files/video/<id>.mp4: the finished video, like a CDN URL (no auth). By default a real one
// (media/clip.mp4: 2 s of VP9 in MP4, 320×180, from ffmpeg's testsrc2), so the demo and the views
// play it; with ?bytes=N, N bytes generated as they are sent (an MP4 header, then filler), so a
// 500 MB download costs no more memory than a small one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorReply, type Reply, type Sink } from './http-util.js';

/** The finished video a job gives by default: a real, decodable clip. */
export const CLIP = readFileSync(join(import.meta.dirname, 'media/clip.mp4'));
export const CLIP_SECONDS = 2;
const MAX_VIDEO_BYTES = 16 * 1024 ** 3;
const BLOCK_SIZE = 64 * 1024;

/** The repeating filler; its period (256) divides the block size, so every block is identical. */
const FILLER_BLOCK = Buffer.alloc(BLOCK_SIZE);
for (let index = 0; index < BLOCK_SIZE; index += 1) FILLER_BLOCK[index] = (index * 31 + 7) & 0xff;

/** An MP4 `ftyp` box, so the file starts like a real video. */
const MP4_HEADER = Buffer.from([
  0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32, 0x00, 0x00, 0x00, 0x00, 0x6d, 0x70,
  0x34, 0x32, 0x69, 0x73, 0x6f, 0x6d,
]);

const FIRST_BLOCK = Buffer.concat([MP4_HEADER, FILLER_BLOCK.subarray(MP4_HEADER.length)]);

export function videoFilePath(id: string, bytes: number | undefined): string {
  const path = `/files/video/${id}.mp4`;
  return bytes === undefined ? path : `${path}?bytes=${bytes}`;
}

/** The exact bytes a download of `size` bytes carries (for tests that compare content). */
export function videoFileBytes(size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let offset = 0; offset < size; offset += BLOCK_SIZE) {
    (offset === 0 ? FIRST_BLOCK : FILLER_BLOCK).copy(out, offset, 0, Math.min(BLOCK_SIZE, size - offset));
  }
  return out;
}

/** The SHA-256 (hex) of a download of `size` bytes, computed block by block (for huge sizes). */
export function videoFileSha256(size: number): string {
  const hash = createHash('sha256');
  for (let offset = 0; offset < size; offset += BLOCK_SIZE) {
    const block = offset === 0 ? FIRST_BLOCK : FILLER_BLOCK;
    hash.update(block.subarray(0, Math.min(BLOCK_SIZE, size - offset)));
  }
  return hash.digest('hex');
}

export function videoFileReply(query: Record<string, string>): Reply {
  const requested = query.bytes;
  if (requested === undefined) {
    return {
      kind: 'stream',
      status: 200,
      contentType: 'video/mp4',
      contentLength: CLIP.length,
      produce: async (sink: Sink) => void (await sink.write(CLIP)),
    };
  }
  const size = Number(requested);
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_VIDEO_BYTES) {
    return errorReply(400, { message: `Invalid bytes: ${requested}` });
  }
  return {
    kind: 'stream',
    status: 200,
    contentType: 'video/mp4',
    contentLength: size,
    produce: async (sink: Sink) => {
      for (let offset = 0; offset < size; offset += BLOCK_SIZE) {
        const block = offset === 0 ? FIRST_BLOCK : FILLER_BLOCK;
        if (!(await sink.write(block.subarray(0, Math.min(BLOCK_SIZE, size - offset))))) return;
      }
    },
  };
}
