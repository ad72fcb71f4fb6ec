// audio_transcribe on both gateways: the cases both can produce run on each (describe.each);
// self-hosted transcription and provider faults, which only 9router has, at the end. What only the
// reference service makes is in audio-transcribe.test.ts. What matters is
// the upload the transcription provider behind the gateway received and the transcript it answered.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type Backend, type BackendName, billableRequests } from '../../harness/backends.js';
import { type Connected, connectInMemory, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../../harness/third-party-host.js';
import type { FilePart } from '../../nine-router/upstream/multipart.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';
import type { RecordedFile } from '../../reference-service/index.js';
import {
  audioDurationSeconds,
  segmentsOf,
  toSrt,
  toVtt,
  transcriptText,
} from '../../reference-service/transcript-formats.js';

let host: ThirdPartyHost;

// Before the backends' own set-up (hooks run in order): their servers' settings name the host.
beforeAll(async () => {
  host = await startThirdPartyHost();
});
afterAll(() => host.close());
afterEach(() => {
  host.requests.length = 0;
});

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

/** What each gateway lists at /v1/models/stt, in its order (the first is the default). */
const TRANSCRIPTION_MODELS: Record<BackendName, string[]> = {
  'the reference service': ['groq/whisper-large-v3', 'openai/whisper-1', 'deepgram/nova-3'],
  '9router': [
    'openai/whisper-1',
    'openai/gpt-4o-transcribe',
    'openai/gpt-4o-mini-transcribe',
    'groq/whisper-large-v3',
    'groq/whisper-large-v3-turbo',
    'groq/distil-whisper-large-v3-en',
    'selfhosted-stt/whisper-1',
  ],
};

const MP3_HEADER = Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1');
const WAV_HEADER = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1');

/** Fake audio: a container header, then the words 9router's fake provider "hears". */
function spokenAudio(words: string, header = MP3_HEADER): Buffer {
  return Buffer.concat([header, Buffer.from(`SPOKEN: ${words}\n`)]);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function transcribe(target: Connected, args: Record<string, unknown>) {
  return target.client.callTool({ name: 'audio_transcribe', arguments: args }) as Promise<CallToolResult>;
}

/** An upload as the transcription provider behind the gateway received it. */
interface Upload {
  /** provider/model, as the tool names it. */
  model: string;
  fields: Record<string, string>;
  /** `sha256` when the whole file can be seen (the fake upstream keeps 4 KiB of it). */
  file: { name: string; type: string; bytes: number; sha256: string | undefined };
}

/** Which provider a transcription reached past 9router, by its address. */
function sttProvider(entry: JournalEntry): string {
  if (entry.host === 'api.openai.com') return 'openai';
  if (entry.host === 'api.groq.com') return 'groq';
  return entry.path.startsWith('/stt/') ? 'selfhosted-stt' : entry.host;
}

async function uploads(backend: Backend): Promise<Upload[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => r.route === 'transcriptions')
      .map((r) => {
        const { fields, file } = r.body as { fields: Record<string, string>; file: RecordedFile };
        const { model = '', ...rest } = fields;
        return {
          model,
          fields: rest,
          file: { name: file.name, type: file.type, bytes: file.size, sha256: file.sha256 },
        };
      });
  }
  const journal = (await backend.nineRouter?.upstream()) ?? [];
  return journal
    .filter((e) => e.path.endsWith('/audio/transcriptions'))
    .map((e) => {
      const { file, model, ...rest } = e.body as Record<string, string> & { file: FilePart };
      const whole = file.bytes <= file.text.length ? sha256(Buffer.from(file.text, 'latin1')) : undefined;
      return {
        model: `${sttProvider(e)}/${model}`,
        fields: rest,
        file: { name: file.filename, type: file.type, bytes: file.bytes, sha256: whole },
      };
    });
}

/** The transcript the backend's provider answers to an upload: 9router's fake hears the spoken words. */
function heard(backend: Backend, upload: Upload, words?: string): string {
  if (backend.nineRouter) return words ?? `Transcribed ${upload.file.bytes} bytes.`;
  const file = { name: upload.file.name, size: upload.file.bytes, type: upload.file.type, sha256: '' };
  return transcriptText(file, { language: upload.fields.language, prompt: upload.fields.prompt });
}

/** The transcript file the backend's provider answers in `format`, as the server saves it. */
function answered(backend: Backend, upload: Upload, format: string, text: string): string | object {
  if (backend.nineRouter) {
    if (format === 'srt') return `1\n00:00:00,000 --> 00:00:02,500\n${text}\n\n`;
    if (format === 'vtt') return `WEBVTT\n\n00:00:00.000 --> 00:00:02.500\n${text}\n\n`;
    return {
      task: 'transcribe',
      language: 'english',
      duration: 2.5,
      text,
      segments: [{ id: 0, start: 0, end: 2.5, text }],
    };
  }
  const duration = audioDurationSeconds(upload.file.bytes);
  const segments = segmentsOf(text, duration);
  if (format === 'srt') return toSrt(segments);
  if (format === 'vtt') return toVtt(segments);
  return { task: 'transcribe', language: upload.fields.language ?? 'en', duration, text, segments };
}

describe.each(BACKENDS)('audio_transcribe on %s', (name, use) => {
  let cwd: string;
  const backend = use({
    env: () => {
      cwd = tempDir('gtm-stt-');
      return { CWD: cwd };
    },
    // The "third-party" host runs on loopback, which downloads may reach only when allowed.
    privateHosts: () => [new URL(host.url).host],
  });
  const models = TRANSCRIPTION_MODELS[name];
  const outputDir = () => join(cwd, 'gateway-output');
  const call = (args: Record<string, unknown>) => transcribe(backend.conn, args);

  /** Writes fake audio into the working directory (the default input root) and returns its name. */
  function audioFile(words: string, extra: Buffer = Buffer.alloc(0)): string {
    const file = `${unique('clip')}.mp3`;
    writeFileSync(join(cwd, file), Buffer.concat([spokenAudio(words), extra]));
    return file;
  }

  async function onlyUpload(): Promise<Upload> {
    const sent = await uploads(backend);
    expect(sent).toHaveLength(1);
    return sent[0]!;
  }

  it('uploads a local file as multipart to the first listed model and returns the text', async () => {
    const words = unique('hello there');
    const file = audioFile(words);
    const result = await call({ file_path: file, language: 'de', prompt: 'Names: Ada' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const upload = await onlyUpload();
    const audio = spokenAudio(words);
    expect(upload).toEqual({
      model: models[0],
      fields: { language: 'de', prompt: 'Names: Ada', response_format: 'json' },
      file: { name: file, type: 'audio/mpeg', bytes: audio.length, sha256: sha256(audio) },
    });
    const text = heard(backend, upload, words);
    expect(structuredOf<TranscriptOut>(result)).toMatchObject({
      text,
      model: models[0],
      format: 'json',
      file_path: null,
      truncated: false,
    });
    expect(textOf(result)).toBe(`Transcript (${models[0]}, ${text.length} characters):\n\n${text}`);
  });

  for (const model of ['openai/whisper-1', 'groq/whisper-large-v3']) {
    it(`transcribes with ${model}`, async () => {
      const words = unique('spoken');
      const result = await call({ file_path: audioFile(words), model });
      expect(result.isError, textOf(result)).toBeFalsy();
      const upload = await onlyUpload();
      expect(upload.model).toBe(model);
      expect(structuredOf<TranscriptOut>(result)).toMatchObject({
        text: heard(backend, upload, words),
        model,
      });
    });
  }

  it('returns plain text for response_format text, saving nothing', async () => {
    const words = unique('plain');
    const result = await call({ file_path: audioFile(words), response_format: 'text' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const upload = await onlyUpload();
    expect(upload.fields.response_format).toBe('text');
    expect(structuredOf<TranscriptOut>(result)).toMatchObject({
      text: heard(backend, upload, words),
      model: models[0],
      format: 'text',
      file_path: null,
    });
  });

  for (const [format, extension] of [
    ['srt', 'srt'],
    ['vtt', 'vtt'],
    ['verbose_json', 'json'],
  ] as const) {
    it(`saves the ${format} transcript as a file inside the output directory and shows its text`, async () => {
      const words = unique(format);
      const file = audioFile(words);
      const result = await call({
        file_path: join(cwd, file),
        model: 'groq/whisper-large-v3',
        response_format: format,
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const upload = await onlyUpload();
      expect(upload.fields.response_format).toBe(format);
      const out = structuredOf<TranscriptOut>(result);
      const text = heard(backend, upload, words);
      expect(out).toMatchObject({ text, format });
      const stem = basename(file, '.mp3');
      expect(out.file_path).toMatch(new RegExp(`/gateway-output/${stem}-transcript[^/]*\\.${extension}$`));
      expect(dirname(out.file_path as string)).toBe(outputDir());
      const saved = readFileSync(out.file_path as string, 'utf8');
      const expected = answered(backend, upload, format, text);
      if (typeof expected === 'string') expect(saved).toBe(expected);
      else expect(JSON.parse(saved)).toEqual(expected);
      expect(textOf(result)).toContain(`The ${format} transcript is saved at ${out.file_path}.`);
      expect(result.content).toContainEqual(expect.objectContaining({ type: 'resource_link' }));
    });
  }

  it('takes base64 and data: URLs as file uploads, bounded, and refuses what is not base64', async () => {
    const words = unique('inline');
    const audio = spokenAudio(words);
    for (const data of [audio.toString('base64'), `data:audio/mpeg;base64,${audio.toString('base64')}`]) {
      const result = await call({ data_base64: data, model: 'openai/whisper-1', language: 'de' });
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    // The second call is a repeat of the first (same bytes and options): served from the cache.
    const [upload] = await uploads(backend);
    expect(await uploads(backend)).toHaveLength(1);
    expect(upload?.file).toEqual({
      name: 'audio.mp3',
      type: 'audio/mpeg',
      bytes: audio.length,
      sha256: sha256(audio),
    });

    const wav = spokenAudio(unique('wave'), WAV_HEADER);
    const dataUrl = await call({ data_base64: `data:audio/wav;base64,${wav.toString('base64')}` });
    expect(dataUrl.isError, textOf(dataUrl)).toBeFalsy();
    expect((await uploads(backend)).at(-1)?.file).toEqual({
      name: 'audio.wav',
      type: 'audio/wav',
      bytes: wav.length,
      sha256: sha256(wav),
    });
    const invalid = await call({ data_base64: 'this is not base64!' });
    expect(textOf(invalid)).toContain('data_base64 is not valid base64');
    const tooBig = await call({ data_base64: 'A'.repeat(28_000_000) });
    expect(tooBig.isError).toBe(true);
    expect(textOf(tooBig)).toMatch(/data_base64 must hold at most 20 MiB/);
    expect(await uploads(backend)).toHaveLength(2);
  });

  it('downloads a URL itself, without the gateway key, following redirects, and uploads the bytes', async () => {
    const result = await call({
      url: `${host.url}/redirect?to=/audio/talk.mp3`,
      model: 'groq/whisper-large-v3',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(host.requests.map((r) => [r.path, r.authorization, r.apiKey])).toEqual([
      ['/redirect', undefined, undefined],
      ['/audio/talk.mp3', undefined, undefined],
    ]);
    const upload = await onlyUpload();
    expect(upload.file).toEqual({
      name: 'talk.mp3',
      type: 'audio/mpeg',
      bytes: host.audio.length,
      sha256: sha256(host.audio),
    });
    expect(structuredOf<TranscriptOut>(result).text).toBe(heard(backend, upload));
    const leftovers = existsSync(outputDir()) ? readdirSync(outputDir()) : [];
    expect(leftovers.filter((entry) => entry.startsWith('download'))).toEqual([]);
  });

  it('names an extension-less download by its bytes, and reports host failures and oversize bodies', async () => {
    const noExt = await call({ url: `${host.url}/audio/recording` });
    expect(noExt.isError, textOf(noExt)).toBeFalsy();
    expect((await onlyUpload()).file).toMatchObject({ name: 'recording.wav', type: 'audio/wav' });
    const missing = await call({ url: `${host.url}/missing.mp3` });
    expect(textOf(missing)).toMatch(/Could not download .*missing\.mp3: the host answered HTTP 404/);
    const small = await connectInMemory({ ...backend.env, GATEWAY_MAX_UPLOAD_MB: '1' });
    try {
      const declared = await transcribe(small, { url: `${host.url}/huge.mp3` });
      expect(textOf(declared)).toMatch(/huge\.mp3 is 2048\.0 MiB; the upload limit is 1\.0 MiB/);
      const streamed = await transcribe(small, { url: `${host.url}/endless.mp3` });
      expect(textOf(streamed)).toMatch(/endless\.mp3 is over 1\.0 MiB; the upload limit is 1\.0 MiB/);
    } finally {
      await small.close();
    }
    expect(await uploads(backend)).toHaveLength(1);
  });

  it('refuses a model without the transcription capability before downloading or uploading', async () => {
    const speechModel = await call({ url: `${host.url}/audio/talk.mp3`, model: 'openai/tts-1/alloy' });
    expect(speechModel.isError).toBe(true);
    const message = textOf(speechModel);
    expect(message).toContain('openai/tts-1/alloy is not a transcription model on this gateway');
    expect(message).toContain('It is a speech model: use audio_speech for it');
    expect(message).toContain(`Transcription models: ${models.join(', ')}.`);
    const chat = await call({ file_path: audioFile('never sent'), model: 'openai/gpt-4o-mini' });
    expect(chat.isError).toBe(true);
    expect(textOf(chat)).toContain('openai/gpt-4o-mini is not a transcription model');
    expect(textOf(chat)).toContain(`Transcription models: ${models.join(', ')}.`);
    expect(await billableRequests(backend)).toEqual([]);
    expect(host.requests).toHaveLength(0);
  });

  it('wants exactly one of file_path, url and data_base64', async () => {
    const file = audioFile('never sent');
    const none = await call({ model: 'groq/whisper-large-v3' });
    expect(textOf(none)).toMatch(/exactly one of file_path .*url .*data_base64/);
    const two = await call({ file_path: file, url: `${host.url}/audio/talk.mp3` });
    expect(textOf(two)).toContain('not file_path and url');
    const bad = await call({ url: 'file:///etc/passwd' });
    expect(textOf(bad)).toMatch(/url must be an absolute http:\/\/ or https:\/\/ URL/);
    const format = await call({ file_path: file, response_format: 'mp3' });
    expect(textOf(format)).toContain('response_format');
    for (const r of [none, two, bad, format]) expect(r.isError).toBe(true);
    expect(await billableRequests(backend)).toEqual([]);
    expect(host.requests).toHaveLength(0);
  });

  it('refuses paths outside the input roots, symlink escapes, directories and text files, sending nothing', async () => {
    const outside = tempDir('gtm-outside-');
    writeFileSync(join(outside, 'secret.mp3'), spokenAudio('private'));
    symlinkSync(join(outside, 'secret.mp3'), join(cwd, 'link.mp3'));
    mkdirSync(join(cwd, 'dir.mp3'), { recursive: true });
    writeFileSync(join(cwd, 'notes.mp3'), 'These are meeting notes, not audio.\n');
    for (const [path, pattern] of [
      [join(outside, 'secret.mp3'), /outside the allowed input roots/],
      [`../${basename(outside)}/secret.mp3`, /outside the allowed input roots/],
      ['link.mp3', /outside the allowed input roots/],
      ['dir.mp3', /not a regular file/],
      ['missing.mp3', /No such file/],
      ['notes.mp3', /looks like text, not audio/],
    ] as const) {
      const result = await call({ file_path: path });
      expect(result.isError, path).toBe(true);
      expect(textOf(result), path).toMatch(pattern);
    }
    expect(await billableRequests(backend)).toEqual([]);
  });

  it('uploads only audio and video containers, known by their first bytes, whatever the name', async () => {
    const secrets = 'API_KEY=sk-very-secret-value\nDB_PASSWORD=hunter2\n';
    const refused: [string, Buffer][] = [
      // UTF-16 with its byte-order mark: every other byte is NUL.
      ['utf16.env.mp3', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(secrets, 'utf16le')])],
      ['nul-first.mp3', Buffer.concat([Buffer.from([0]), Buffer.from(secrets)])],
      [
        'ansi.log.wav',
        Buffer.concat([
          Buffer.from('\u001b[31mERROR\u001b[0m token=abc '),
          Buffer.from([0xc3, 0x28]),
          Buffer.from(secrets),
        ]),
      ],
      ['random.m4a', createHash('sha512').update('not audio').digest()],
    ];
    for (const [file, bytes] of refused) {
      writeFileSync(join(cwd, file), bytes);
      const result = await call({ file_path: file });
      expect(result.isError, file).toBe(true);
      expect(textOf(result), file).toMatch(/was not sent: .*Give an audio or video file/);
      expect(textOf(result), file).not.toMatch(/hunter2|sk-very-secret|token=abc/);
      const inline = await call({ data_base64: bytes.toString('base64') });
      expect(inline.isError, `${file} inline`).toBe(true);
    }
    expect(await billableRequests(backend)).toEqual([]);

    const body = Buffer.alloc(400, 0x55);
    const tsPacket = Buffer.alloc(400, 0x11);
    tsPacket[0] = 0x47;
    tsPacket[188] = 0x47;
    const accepted: [string, Buffer][] = [
      ['clip.aiff', Buffer.concat([Buffer.from('FORM\0\0\x01\0AIFFCOMM', 'latin1'), body])],
      ['clip.caf', Buffer.concat([Buffer.from('caff\0\x01\0\0desc', 'latin1'), body])],
      ['clip.amr', Buffer.concat([Buffer.from('#!AMR\n', 'latin1'), body])],
      ['clip.wma', Buffer.concat([Buffer.from([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11]), body])],
      ['clip.avi', Buffer.concat([Buffer.from('RIFF\0\x01\0\0AVI LIST', 'latin1'), body])],
      ['clip.mpg', Buffer.concat([Buffer.from([0, 0, 1, 0xba]), body])],
      ['clip.ts', tsPacket],
      ['clip.mkv', Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), body])],
    ];
    for (const [file, bytes] of accepted) {
      writeFileSync(join(cwd, file), bytes);
      const result = await call({ file_path: file });
      expect(result.isError, `${file}: ${textOf(result)}`).toBeFalsy();
    }
    expect(await uploads(backend)).toHaveLength(accepted.length);
  });

  it('refuses a file over the upload limit before reading it', async () => {
    const small = await connectInMemory({ ...backend.env, GATEWAY_MAX_UPLOAD_MB: '1' });
    try {
      const file = audioFile('too long', Buffer.alloc(1024 * 1024));
      const result = await transcribe(small, { file_path: file });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/clip-.*\.mp3 is [\d.]+ MiB; the limit is 1\.0 MiB/);
      expect(await billableRequests(backend)).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('uses GATEWAY_TRANSCRIBE_MODEL as the default', async () => {
    const other = await connectInMemory({ ...backend.env, GATEWAY_TRANSCRIBE_MODEL: models[1]! });
    try {
      const result = await transcribe(other, { file_path: audioFile(unique('configured')) });
      expect(structuredOf<TranscriptOut>(result).model).toBe(models[1]);
      expect((await onlyUpload()).model).toBe(models[1]);
    } finally {
      await other.close();
    }
  });

  it('pages a long transcript from a cache (one transcription) and keeps the whole text in a file', async () => {
    // 9router's fake provider hears the words; the reference service makes a long transcript of a
    // big upload. Either way the transcript is many pages long.
    const file = audioFile(unique('long').padEnd(3000, ' and on'), Buffer.alloc(400_000, 7));
    const args = { file_path: file, model: 'groq/whisper-large-v3', max_length: 1000 };
    const first = await call(args);
    expect(first.isError, textOf(first)).toBeFalsy();
    const page1 = structuredOf<TranscriptOut>(first);
    expect(page1).toMatchObject({ start_index: 0, truncated: true });
    expect(page1.total_length).toBeGreaterThan(2500);
    expect(page1.file_path).toMatch(new RegExp(`${basename(file, '.mp3')}-transcript-[\\d-]+\\.txt$`));
    expect(page1.text.length).toBeLessThanOrEqual(1000);
    expect(textOf(first)).toContain(`start_index=${page1.next_start_index}`);
    const whole = readFileSync(page1.file_path ?? '', 'utf8');
    expect(whole.length).toBe(page1.total_length);
    expect(dirname(page1.file_path ?? '')).toBe(outputDir());

    let text = page1.text;
    let next = page1.next_start_index;
    for (let n = 0; next !== null && n < 400; n++) {
      const page = structuredOf<TranscriptOut>(await call({ ...args, start_index: next }));
      expect(page.start_index).toBe(next);
      text += page.text;
      next = page.next_start_index;
    }
    expect(next).toBeNull();
    expect(text).toBe(whole);
    expect(await uploads(backend)).toHaveLength(1);

    const past = await call({ ...args, start_index: page1.total_length + 10 });
    expect(textOf(past)).toMatch(/past the end of the transcript/);
    // Another model or format is another transcription.
    await call({ ...args, model: 'openai/whisper-1' });
    expect(await uploads(backend)).toHaveLength(2);
  });
});

describe('audio_transcribe on 9router only', () => {
  let cwd: string;
  const gw = useRealGateway({
    env: () => {
      cwd = tempDir('gtm-real-stt-');
      return { CWD: cwd };
    },
  });
  const uploadsHere = async () =>
    (await gw.upstream()).filter((e) => e.path.endsWith('/audio/transcriptions'));
  function audioFile(words: string): string {
    const file = `${unique('clip')}.mp3`;
    writeFileSync(join(cwd, file), spokenAudio(words));
    return file;
  }

  for (const [model, address] of [
    ['openai/whisper-1', 'api.openai.com /v1/audio/transcriptions'],
    ['groq/whisper-large-v3', 'api.groq.com /openai/v1/audio/transcriptions'],
    ['selfhosted-stt/whisper-1', 'local /stt/v1/audio/transcriptions'],
  ] as const) {
    it(`sends ${model} to its provider's own address`, async () => {
      const words = unique('spoken');
      const result = await transcribe(gw.conn, { file_path: audioFile(words), model });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf<TranscriptOut>(result)).toMatchObject({ text: words, model });
      const sent = await uploadsHere();
      expect(sent.map((e) => `${e.host} ${e.path}`)).toEqual([address]);
      expect(sent[0]?.body).toMatchObject({ model: model.slice(model.indexOf('/') + 1) });
    });
  }

  it('sends an upload once, even when the provider fails it', async () => {
    const result = await transcribe(gw.conn, {
      file_path: audioFile(unique('lost fault-503')),
      model: 'groq/whisper-large-v3',
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/groq/);
    expect(await uploadsHere()).toHaveLength(1);
  });
});
