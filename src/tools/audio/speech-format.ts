import { audioExtension, type SpeechFormat } from '../../gateway/endpoints/audio.js';
import { sniffAudioMime } from './audio-sources.js';

/**
 * What audio the gateway really sent. Providers may ignore the format asked for (9router's openai
 * always answers mp3), and a gateway may label the bytes with the format asked for rather than the
 * one delivered, so the first bytes decide when they name a container; the Content-Type otherwise.
 */
export interface DeliveredAudio {
  mimeType: string;
  /** The file extension, and the format reported: mp3, wav, opus, aac, flac, pcm, m4a, webm. */
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
