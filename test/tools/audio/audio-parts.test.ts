import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/config/config.js';
import { deliveredFormat, transcriptText } from '../../../src/gateway/endpoints/audio.js';
import { sniffAudioMime } from '../../../src/tools/audio/audio-sources.js';
import { audioExtension, normalizeAudioMime } from '../../../src/tools/audio/speech-format.js';
import { resolveSpeechId, speechModels } from '../../../src/tools/audio/speech-ids.js';
import { TranscriptCache } from '../../../src/tools/audio/transcript-cache.js';

/** The tts list as 9router gives it: provider/model, no voice. */
const MODELS = ['openai/tts-1', 'openai/tts-1-hd', 'selfhosted-tts/kokoro', 'openrouter/openai/tts-1'];
/** A gateway that lists voices instead. */
const VOICES = ['openai/tts-1/alloy', 'openai/tts-1/nova', 'edge-tts/en-US-AriaNeural'];

const sent = (requested: string, voice: string | undefined, listed: readonly string[] | null) =>
  resolveSpeechId(requested, voice, listed)?.id ?? null;

describe('speech ids (provider/model/voice, from a list of provider/model)', () => {
  it('adds the voice asked for, or a known default, or leaves it to the provider', () => {
    expect(sent('openai/tts-1', 'echo', MODELS)).toBe('openai/tts-1/echo');
    expect(sent('openai/tts-1', undefined, MODELS)).toBe('openai/tts-1/alloy');
    expect(sent('openai/tts-1-hd/nova', undefined, MODELS)).toBe('openai/tts-1-hd/nova');
    expect(sent('selfhosted-tts/kokoro', 'bf_emma', MODELS)).toBe('selfhosted-tts/kokoro/bf_emma');
    const kokoro = resolveSpeechId('selfhosted-tts/kokoro', undefined, MODELS);
    expect(kokoro).toMatchObject({
      id: 'selfhosted-tts/kokoro',
      model: 'selfhosted-tts/kokoro',
      voice: null,
    });
    expect(kokoro?.notes.join(' ')).toMatch(/selfhosted-tts uses its own default voice/);
    // A listed model of three parts is still a model: the voice goes after it.
    expect(sent('openrouter/openai/tts-1', 'nova', MODELS)).toBe('openrouter/openai/tts-1/nova');
    expect(sent('openrouter/openai/tts-1/nova', undefined, MODELS)).toBe('openrouter/openai/tts-1/nova');
  });

  it('lets a separate voice replace the one in the id, and says so', () => {
    const replaced = resolveSpeechId('openai/tts-1/alloy', 'nova', MODELS);
    expect(replaced).toMatchObject({ id: 'openai/tts-1/nova', model: 'openai/tts-1', voice: 'nova' });
    expect(replaced?.notes.join(' ')).toContain('nova replaces alloy');
    expect(resolveSpeechId('openai/tts-1/alloy', 'alloy', MODELS)?.notes).toEqual([]);
  });

  it('refuses anything whose provider/model part is not listed exactly', () => {
    for (const [model, voice] of [
      ['openai/gpt-4o', undefined],
      ['openai/gpt-4o', 'nova'],
      ['openai/gpt-4o/alloy', undefined],
      ['openai/whisper-1', undefined],
      ['openai/alloy', undefined],
      ['openai', 'alloy'],
      ['openai/tts', 'alloy'],
      ['openai/tts-1/alloy/x', undefined],
    ] as const) {
      expect(resolveSpeechId(model, voice, MODELS), `${model} ${voice}`).toBeNull();
    }
  });

  it('reads a list of voices too: listed ids, sibling voices, and the first voice of a model', () => {
    expect(sent('openai/tts-1/nova', undefined, VOICES)).toBe('openai/tts-1/nova');
    expect(sent('openai/tts-1/alloy', 'nova', VOICES)).toBe('openai/tts-1/nova');
    expect(sent('openai/tts-1/shimmer', undefined, VOICES)).toBe('openai/tts-1/shimmer');
    expect(sent('openai/tts-1', 'echo', VOICES)).toBe('openai/tts-1/echo');
    expect(resolveSpeechId('openai/tts-1', undefined, VOICES)?.notes.join(' ')).toContain(
      'using openai/tts-1/alloy, the first listed voice of openai/tts-1',
    );
    expect(sent('edge-tts/en-US-AriaNeural', undefined, VOICES)).toBe('edge-tts/en-US-AriaNeural');
    expect(sent('openai/tts-1-hd', 'alloy', VOICES)).toBeNull();
    expect(speechModels(VOICES)).toEqual(['openai/tts-1 (voices alloy, nova)', 'edge-tts/en-US-AriaNeural']);
    expect(speechModels(MODELS)).toEqual(MODELS);
  });

  it('composes the same way when the gateway has no list', () => {
    expect(sent('openai/tts-1', 'nova', null)).toBe('openai/tts-1/nova');
    expect(sent('openai/tts-1', undefined, null)).toBe('openai/tts-1/alloy');
    expect(sent('openai/tts-1/alloy', 'nova', null)).toBe('openai/tts-1/nova');
    expect(sent('groq/whisper-large-v3', undefined, null)).toBe('groq/whisper-large-v3');
  });
});

describe('audio formats', () => {
  it('treats audio/mp3 as audio/mpeg and picks extensions from what was sent', () => {
    expect(normalizeAudioMime('audio/mp3', 'mp3')).toBe('audio/mpeg');
    expect(normalizeAudioMime('application/octet-stream', 'flac')).toBe('audio/flac');
    expect(audioExtension('audio/mpeg', 'wav')).toBe('mp3');
    expect(audioExtension('audio/x-wav', 'mp3')).toBe('wav');
    expect(audioExtension('audio/unknown', 'aac')).toBe('aac');
  });

  it('sniffs common containers from their first bytes', () => {
    const cases: [Buffer, string | null][] = [
      [Buffer.from('ID3\x04', 'latin1'), 'audio/mpeg'],
      [Buffer.from([0xff, 0xfb, 0x90, 0x00]), 'audio/mpeg'],
      [Buffer.from([0xff, 0xf1, 0x50, 0x80]), 'audio/aac'],
      [Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'), 'audio/wav'],
      [Buffer.from('OggS\0', 'latin1'), 'audio/ogg'],
      [Buffer.from('fLaC', 'latin1'), 'audio/flac'],
      [Buffer.from('\0\0\0\x20ftypM4A ', 'latin1'), 'audio/mp4'],
      [Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), 'audio/webm'],
      [Buffer.from('hello'), null],
      // A UTF-16 byte-order mark has the MPEG sync bits, as layer I: text, not audio.
      [Buffer.from([0xff, 0xfe, 0x41, 0x00]), null],
      [Buffer.from('FORM\0\0\0\0AIFF', 'latin1'), 'audio/aiff'],
    ];
    for (const [head, mime] of cases) expect(sniffAudioMime(head), head.toString('hex')).toBe(mime);
  });

  it('knows what a transcript body really is, whatever was asked', () => {
    const srt = '1\n00:00:00,000 --> 00:00:01,500\nHello there.\n';
    const vtt = 'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n';
    expect(deliveredFormat(srt, 'text/plain', 'srt')).toBe('srt');
    expect(deliveredFormat(vtt, 'text/vtt', 'vtt')).toBe('vtt');
    expect(deliveredFormat('{"text":"Hello"}', 'application/json', 'srt')).toBe('json');
    expect(deliveredFormat('{"text":"Hi","segments":[]}', 'application/json', 'json')).toBe('verbose_json');
    expect(deliveredFormat('Hello there.', 'text/plain', 'text')).toBe('text');
    expect(deliveredFormat('', 'text/plain', 'srt')).toBe('srt');
    expect(transcriptText(srt, 'text/plain', 'srt')).toBe('Hello there.');
    expect(transcriptText(vtt, 'text/vtt', 'vtt')).toBe('Hello there.');
  });
});

describe('transcript cache', () => {
  const entry = (text: string) => ({
    text,
    model: 'm',
    format: 'json' as const,
    filePath: null,
    sourceName: 'a',
  });

  it('is bounded by entries and characters, keeping the newest, least recently used out first', () => {
    const cache = new TranscriptCache(60_000, 2, 100);
    cache.set('a', entry('a'));
    cache.set('b', entry('b'));
    expect(cache.get('a')?.text).toBe('a'); // a is now the most recent
    cache.set('c', entry('c'));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.text).toBe('a');
    cache.set('huge', entry('x'.repeat(500)));
    expect(cache.size).toBe(1);
    expect(cache.get('huge')?.text.length).toBe(500);
  });

  it('forgets entries after their time', () => {
    const cache = new TranscriptCache(0);
    cache.set('a', entry('a'));
    expect(cache.get('a')).toBeUndefined();
  });

  it('keys on every part, including absent ones', () => {
    expect(TranscriptCache.key(['f', 'm', undefined])).not.toBe(TranscriptCache.key(['f', 'm', 'undefined']));
  });
});

describe('upload limit setting', () => {
  it('defaults to 100 MiB and is bounded', () => {
    expect(parseCommandLine([], {}, '/p').config.maxUploadMb).toBe(100);
    expect(parseCommandLine(['--max-upload-mb', '300'], {}, '/p').config.maxUploadMb).toBe(300);
    expect(() => parseCommandLine([], { GATEWAY_MAX_UPLOAD_MB: '0' }, '/p')).toThrow(
      /invalid GATEWAY_MAX_UPLOAD_MB .*at least 1/,
    );
  });
});
