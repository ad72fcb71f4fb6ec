import { mediaType, mediaTypeFor, mimeEssence, savedExtension } from '../../files/media-types.js';
import type { SpeechAudio, SpeechFormat } from '../../gateway/endpoints/audio.js';
import { sniffAudioMime } from './audio-sources.js';

/**
 * What audio the gateway really sent. Providers may ignore the format asked for (9router's openai
 * always answers mp3), and a gateway may label the bytes with the format asked for rather than the
 * one delivered, so the first bytes decide when they name a container; what the gateway declared
 * otherwise. Types and extensions come from the media table (files/media-types.ts).
 */
export interface DeliveredAudio {
  mimeType: string;
  /** The file extension, and the format reported: mp3, wav, opus, ogg, aac, flac, pcm, m4a, webm, ... */
  extension: string;
}

/** Enough for the signature of every format speech is delivered in. */
const HEAD_BYTES = 12;

export function deliveredAudio(head: Buffer, declared: DeliveredAudio, asked: SpeechFormat): DeliveredAudio {
  const sniffed = sniffAudioMime(head);
  if (!sniffed) return declared;
  // An MPEG frame sync is only two bits patterns; raw PCM samples can start the same way.
  if (head[0] === 0xff && declared.extension === 'pcm') return declared;
  const extension = audioExtension(sniffed, asked);
  return extension === declared.extension ? declared : { mimeType: sniffed, extension };
}

/** What the gateway said it sent: the format a JSON answer named, else its Content-Type. */
export function declaredAudio(
  audio: Pick<SpeechAudio, 'contentType' | 'format'>,
  asked: SpeechFormat,
): DeliveredAudio {
  const named = audio.format === undefined ? undefined : mediaTypeFor(audio.format, 'audio');
  if (named) return { mimeType: named.mime, extension: savedExtension(named, audio.format) };
  const mimeType = normalizeAudioMime(audio.contentType, asked);
  return { mimeType, extension: audioExtension(mimeType, asked) };
}

/**
 * The declared type by its registered name (`audio/mpeg` for the `audio/mp3` 9router sends); an
 * audio type the table does not know as it came; the type of the format asked for when the
 * gateway declared none (or only application/octet-stream).
 */
export function normalizeAudioMime(contentType: string | undefined, asked: SpeechFormat): string {
  const known = mediaType(contentType);
  if (known) return known.mime;
  const essence = mimeEssence(contentType);
  if (essence.startsWith('audio/')) return essence;
  return mediaTypeFor(asked, 'audio')?.mime ?? 'application/octet-stream';
}

/**
 * The file extension for audio of this type: the one asked for when it names the type (Ogg asked
 * for as opus stays .opus), else the type's own; the format asked for when the type is unknown.
 */
export function audioExtension(mime: string, asked: SpeechFormat): string {
  const type = mediaType(mime);
  return type ? savedExtension(type, asked) : asked;
}

/**
 * The first bytes of a stream, and the whole stream again. The source is read only as far as the
 * head needs; abandoning the returned stream releases the source.
 */
export async function peekHead(
  source: AsyncIterable<Uint8Array>,
): Promise<{ head: Buffer; body: AsyncIterable<Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]();
  const taken: Uint8Array[] = [];
  let size = 0;
  let done = false;
  try {
    while (size < HEAD_BYTES) {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        break;
      }
      taken.push(next.value);
      size += next.value.length;
    }
  } catch (error) {
    await Promise.resolve(iterator.return?.()).catch(() => undefined);
    throw error;
  }
  async function* body(): AsyncIterable<Uint8Array> {
    try {
      yield* taken;
      if (done) return;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      done = true;
    } finally {
      if (!done) await iterator.return?.();
    }
  }
  return { head: Buffer.concat(taken).subarray(0, HEAD_BYTES), body: body() };
}
