import { describe, expect, it } from 'vitest';
import { sniffImageMime } from '../../src/files/files.js';
import {
  MEDIA_TYPES,
  type MediaKind,
  mediaType,
  mediaTypeFor,
  savedExtension,
} from '../../src/files/media-types.js';
import { isTextMime, savedFileMime } from '../../src/files/saved-files.js';
import { sniffAudioMime } from '../../src/tools/audio/audio-sources.js';
import { audioExtension, declaredAudio } from '../../src/tools/audio/speech-format.js';

/** Every type, written out: the MIME type, its kind, and the extension a saved file gets. */
const EXPECTED: [string, MediaKind, string][] = [
  ['video/mp4', 'video', 'mp4'],
  ['video/webm', 'video', 'webm'],
  ['video/quicktime', 'video', 'mov'],
  ['video/x-matroska', 'video', 'mkv'],
  ['video/x-msvideo', 'video', 'avi'],
  ['video/mpeg', 'video', 'mpg'],
  ['video/mp2t', 'video', 'ts'],
  ['audio/mpeg', 'audio', 'mp3'],
  ['audio/wav', 'audio', 'wav'],
  ['audio/ogg', 'audio', 'ogg'],
  ['audio/flac', 'audio', 'flac'],
  ['audio/mp4', 'audio', 'm4a'],
  ['audio/aac', 'audio', 'aac'],
  ['audio/webm', 'audio', 'webm'],
  ['audio/pcm', 'audio', 'pcm'],
  ['audio/aiff', 'audio', 'aiff'],
  ['audio/x-caf', 'audio', 'caf'],
  ['audio/amr', 'audio', 'amr'],
  ['audio/x-ms-wma', 'audio', 'wma'],
  ['image/png', 'image', 'png'],
  ['image/jpeg', 'image', 'jpg'],
  ['image/gif', 'image', 'gif'],
  ['image/webp', 'image', 'webp'],
  ['text/plain', 'text', 'txt'],
  ['application/json', 'text', 'json'],
  ['application/x-subrip', 'text', 'srt'],
  ['text/vtt', 'text', 'vtt'],
];

describe('the media table', () => {
  it('holds each type once, with the kind and saved extension written out above', () => {
    expect(MEDIA_TYPES.map((t) => [t.mime, t.kind, t.extension])).toEqual(EXPECTED);
  });

  it('maps each MIME type to its saved extension and each extension back to its MIME type', () => {
    for (const [mime, kind, extension] of EXPECTED) {
      const type = mediaType(mime);
      expect(type?.mime, mime).toBe(mime);
      expect(savedExtension(type!), mime).toBe(extension);
      expect(mediaTypeFor(extension, kind)?.mime, extension).toBe(mime);
      expect(mediaTypeFor(`.${extension.toUpperCase()}`, kind)?.mime, extension).toBe(mime);
    }
  });

  it('reads every extension taken on input as its own type, within its kind', () => {
    for (const type of MEDIA_TYPES) {
      expect(type.extensions[0], type.mime).toBe(type.extension);
      for (const extension of type.extensions) {
        expect(mediaTypeFor(extension, type.kind)?.mime, extension).toBe(type.mime);
      }
    }
    expect(mediaTypeFor('mpga', 'audio')?.mime).toBe('audio/mpeg');
    expect(mediaTypeFor('mp4', 'audio')?.mime).toBe('audio/mp4');
    expect(mediaTypeFor('jpeg')?.mime).toBe('image/jpeg');
    expect(mediaTypeFor('exe')).toBeUndefined();
    expect(mediaTypeFor('')).toBeUndefined();
  });

  it('knows the other names senders use, and ignores case and parameters', () => {
    const aliases: [string, string][] = [
      ['audio/mp3', 'audio/mpeg'],
      ['audio/mpeg3', 'audio/mpeg'],
      ['audio/x-wav', 'audio/wav'],
      ['audio/wave', 'audio/wav'],
      ['audio/vnd.wave', 'audio/wav'],
      ['audio/opus', 'audio/ogg'],
      ['audio/x-flac', 'audio/flac'],
      ['audio/x-aac', 'audio/aac'],
      ['audio/l16', 'audio/pcm'],
      ['audio/x-aiff', 'audio/aiff'],
      ['Audio/OGG; codecs=opus', 'audio/ogg'],
      ['video/webm; codecs="vp9"', 'video/webm'],
    ];
    for (const [name, mime] of aliases) expect(mediaType(name)?.mime, name).toBe(mime);
    for (const unknown of ['audio/unknown', 'application/octet-stream', '', null, undefined]) {
      expect(mediaType(unknown), String(unknown)).toBeUndefined();
    }
  });

  it('saves Ogg as .ogg (Vorbis or Opus), and as .opus only when opus was asked for', () => {
    const ogg = mediaType('audio/ogg')!;
    expect(savedExtension(ogg)).toBe('ogg');
    expect(savedExtension(ogg, 'mp3')).toBe('ogg');
    expect(savedExtension(ogg, 'opus')).toBe('opus');
    expect(mediaTypeFor('opus')?.mime).toBe('audio/ogg');
    expect(mediaTypeFor('oga')?.mime).toBe('audio/ogg');
    expect(audioExtension('audio/ogg', 'mp3')).toBe('ogg');
    expect(audioExtension('audio/ogg', 'opus')).toBe('opus');
    expect(audioExtension('audio/opus', 'opus')).toBe('opus');
    expect(declaredAudio({ contentType: 'audio/ogg', format: undefined }, 'wav')).toEqual({
      mimeType: 'audio/ogg',
      extension: 'ogg',
    });
    expect(declaredAudio({ contentType: undefined, format: 'opus' }, 'mp3')).toEqual({
      mimeType: 'audio/ogg',
      extension: 'opus',
    });
    expect(declaredAudio({ contentType: undefined, format: 'm4a' }, 'mp3')).toEqual({
      mimeType: 'audio/mp4',
      extension: 'm4a',
    });
    expect(declaredAudio({ contentType: undefined, format: 'nonsense' }, 'flac')).toEqual({
      mimeType: 'audio/flac',
      extension: 'flac',
    });
  });

  it("serves a saved file with its extension's type: .mp4 and .webm alone are video", () => {
    const saved: [string, string][] = [
      ['speech-alloy-20250101-120000.mp3', 'audio/mpeg'],
      ['speech-kokoro-20250101-120000.opus', 'audio/ogg'],
      ['speech-kokoro-20250101-120000.ogg', 'audio/ogg'],
      ['speech-kokoro-20250101-120000.m4a', 'audio/mp4'],
      ['video-abc-20250101-120000.mp4', 'video/mp4'],
      ['video-abc-20250101-120000.webm', 'video/webm'],
      ['video-abc-20250101-120000.avi', 'video/x-msvideo'],
      ['talk-20250101-120000.srt', 'application/x-subrip'],
      ['talk-20250101-120000.json', 'application/json'],
      ['talk-20250101-120000.bin', 'application/octet-stream'],
      ['no-extension', 'application/octet-stream'],
    ];
    for (const [name, mime] of saved) expect(savedFileMime(name), name).toBe(mime);
    for (const [mime, kind] of EXPECTED) expect(isTextMime(mime), mime).toBe(kind === 'text');
  });

  it('names every sniffed container and image with a type the table holds', () => {
    const heads = [
      Buffer.from('ID3\x04', 'latin1'),
      Buffer.from('RIFF\0\0\0\0AVI LIST', 'latin1'),
      Buffer.from('#!AMR\n', 'latin1'),
      Buffer.from('caff\0\x01\0\0', 'latin1'),
      Buffer.from([0x00, 0x00, 0x01, 0xba]),
      Buffer.from([0x30, 0x26, 0xb2, 0x75]),
    ];
    for (const head of heads) {
      const sniffed = sniffAudioMime(head);
      expect(sniffed, head.toString('hex')).not.toBeNull();
      expect(mediaType(sniffed)?.kind, head.toString('hex')).toMatch(/^(audio|video)$/);
    }
    const gif = sniffImageMime(Buffer.from('GIF89a', 'latin1'));
    expect(mediaType(gif)?.kind).toBe('image');
  });
});
