import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../../harness/third-party-host.js';
import type { FilePart } from '../../nine-router/upstream/multipart.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';

let host: ThirdPartyHost;
let cwd: string;

// Before useRealGateway's own set-up (hooks run in order): the server's settings name both.
beforeAll(async () => {
  host = await startThirdPartyHost();
  cwd = tempDir('gtm-real-stt-');
});
const gw = useRealGateway({
  env: (info) => ({
    CWD: cwd,
    // Finished videos come from the fake upstream, audio URLs from the "third-party" host: both
    // on loopback, which downloads may reach only when allowed.
    GATEWAY_ALLOW_PRIVATE_URLS: [new URL(info.upstreamUrl).host, new URL(host.url).host].join(','),
  }),
});
afterAll(() => host.close());

interface TranscriptOut {
  text: string;
  model: string;
  format: string;
  file_path: string | null;
  start_index: number;
  end_index: number;
  total_length: number;
  truncated: boolean;
  next_start_index: number | null;
}

/** Fake audio: an MP3 header, then the words the fake provider "hears". */
function spokenAudio(words: string): Buffer {
  return Buffer.concat([
    Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'),
    Buffer.from(`SPOKEN: ${words}\n`),
  ]);
}

/** Writes fake audio into the working directory (the default input root) and returns its name. */
function audioFile(words: string): string {
  const name = `${unique('clip')}.mp3`;
  writeFileSync(join(cwd, name), spokenAudio(words));
  return name;
}

function transcribe(args: Record<string, unknown>) {
  return gw.conn.client.callTool({ name: 'audio_transcribe', arguments: args });
}

const uploads = (journal: JournalEntry[]) => journal.filter((e) => e.path.endsWith('/audio/transcriptions'));

function uploadOf(entry: JournalEntry | undefined): { fields: Record<string, unknown>; file: FilePart } {
  const { file, ...fields } = (entry?.body ?? {}) as Record<string, unknown> & { file: FilePart };
  return { fields, file };
}

describe('audio_transcribe against 9router', () => {
  it('uploads a local file to the first listed model and returns the text', async () => {
    const words = unique('hello there');
    const result = await transcribe({ file_path: audioFile(words), language: 'en', prompt: 'Names: Ada' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<TranscriptOut>(result);
    // /v1/models/stt lists openai/whisper-1 first.
    expect(out).toMatchObject({ text: words, model: 'openai/whisper-1', format: 'json', file_path: null });
    expect(textOf(result)).toBe(`Transcript (openai/whisper-1, ${words.length} characters):\n\n${words}`);
    const sent = uploads(await gw.upstream());
    expect(sent.map((e) => `${e.host} ${e.path}`)).toEqual(['api.openai.com /v1/audio/transcriptions']);
    const { fields, file } = uploadOf(sent[0]);
    expect(fields).toEqual({
      model: 'whisper-1',
      language: 'en',
      prompt: 'Names: Ada',
      response_format: 'json',
    });
    expect(file).toMatchObject({ type: 'audio/mpeg', bytes: spokenAudio(words).length });
    expect(file.filename).toMatch(/^clip-.*\.mp3$/);
  });

  for (const [model, host, path] of [
    ['openai/whisper-1', 'api.openai.com', '/v1/audio/transcriptions'],
    ['groq/whisper-large-v3', 'api.groq.com', '/openai/v1/audio/transcriptions'],
    ['selfhosted-stt/whisper-1', 'local', '/stt/v1/audio/transcriptions'],
  ] as const) {
    it(`transcribes with ${model}`, async () => {
      const words = unique('spoken');
      const result = await transcribe({ file_path: audioFile(words), model });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf<TranscriptOut>(result)).toMatchObject({ text: words, model });
      const sent = uploads(await gw.upstream());
      expect(sent.map((e) => `${e.host} ${e.path}`)).toEqual([`${host} ${path}`]);
      expect(uploadOf(sent[0]).fields.model).toBe(model.slice(model.indexOf('/') + 1));
    });
  }

  it('returns plain text for response_format text, saving nothing', async () => {
    const words = unique('plain');
    const result = await transcribe({ file_path: audioFile(words), response_format: 'text' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf<TranscriptOut>(result)).toMatchObject({
      text: words,
      format: 'text',
      file_path: null,
    });
    expect(uploadOf(uploads(await gw.upstream())[0]).fields.response_format).toBe('text');
  });

  for (const [format, extension, body] of [
    ['srt', 'srt', (w: string) => `1\n00:00:00,000 --> 00:00:02,500\n${w}\n\n`],
    ['vtt', 'vtt', (w: string) => `WEBVTT\n\n00:00:00.000 --> 00:00:02.500\n${w}\n\n`],
    [
      'verbose_json',
      'json',
      (w: string) =>
        JSON.stringify({
          task: 'transcribe',
          language: 'english',
          duration: 2.5,
          text: w,
          segments: [{ id: 0, start: 0, end: 2.5, text: w }],
        }),
    ],
  ] as const) {
    it(`saves the ${format} transcript as a file and shows its text`, async () => {
      const words = unique(format);
      const result = await transcribe({
        file_path: audioFile(words),
        model: 'groq/whisper-large-v3',
        response_format: format,
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = structuredOf<TranscriptOut>(result);
      expect(out).toMatchObject({ text: words, format });
      expect(out.file_path).toMatch(new RegExp(`/gateway-output/clip-[^/]*-transcript[^/]*\\.${extension}$`));
      expect(dirname(out.file_path as string)).toBe(join(cwd, 'gateway-output'));
      expect(readFileSync(out.file_path as string, 'utf8')).toBe(body(words));
      expect(textOf(result)).toContain(`The ${format} transcript is saved at ${out.file_path}.`);
      expect(result.content).toContainEqual(expect.objectContaining({ type: 'resource_link' }));
      expect(uploadOf(uploads(await gw.upstream())[0]).fields.response_format).toBe(format);
    });
  }

  it('sends base64 audio as a file upload', async () => {
    const words = unique('inline');
    const audio = spokenAudio(words);
    for (const data of [audio.toString('base64'), `data:audio/mpeg;base64,${audio.toString('base64')}`]) {
      const result = await transcribe({
        data_base64: data,
        model: 'selfhosted-stt/whisper-1',
        language: 'de',
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf<TranscriptOut>(result).text).toBe(words);
    }
    const sent = uploads(await gw.upstream());
    // The second call is a repeat of the first (same bytes and options): served from the cache.
    expect(sent).toHaveLength(1);
    expect(uploadOf(sent[0]).file.bytes).toBe(audio.length);
  });

  it('downloads a URL itself, without the gateway key, and uploads the bytes', async () => {
    const result = await transcribe({ url: `${host.url}/audio/talk.mp3`, model: 'groq/whisper-large-v3' });
    expect(result.isError, textOf(result)).toBeFalsy();
    // The host's audio has no spoken marker: the fake provider says how many bytes it heard.
    expect(structuredOf<TranscriptOut>(result).text).toBe(`Transcribed ${host.audio.length} bytes.`);
    expect(host.requests.map((r) => [r.path, r.authorization, r.apiKey])).toEqual([
      ['/audio/talk.mp3', undefined, undefined],
    ]);
    const { file } = uploadOf(uploads(await gw.upstream())[0]);
    expect(file).toMatchObject({ filename: 'talk.mp3', type: 'audio/mpeg', bytes: host.audio.length });
  });

  it('refuses a chat model before anything is sent, naming the transcription models', async () => {
    const result = await transcribe({ file_path: audioFile('never sent'), model: 'openai/gpt-4o-mini' });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/openai\/gpt-4o-mini/);
    expect(text).toContain('openai/whisper-1');
    expect(text).toContain('groq/whisper-large-v3');
    expect(await gw.upstream()).toEqual([]);
  });

  it('sends an upload once, even when the provider fails it', async () => {
    const result = await transcribe({
      file_path: audioFile(unique('lost fault-503')),
      model: 'groq/whisper-large-v3',
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/groq/);
    expect(uploads(await gw.upstream())).toHaveLength(1);
  });

  it('refuses a file outside the input roots, sending nothing', async () => {
    const outside = join(tempDir('gtm-real-stt-outside-'), 'secret.mp3');
    writeFileSync(outside, spokenAudio('private'));
    const result = await transcribe({ file_path: outside });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/outside/i);
    expect(await gw.upstream()).toEqual([]);
  });
});
