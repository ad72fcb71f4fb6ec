import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../../harness/third-party-host.js';
import { type RecordedFile, synthesizeAudio } from '../../reference-service/index.js';

let host: ThirdPartyHost;
let cwd: string;
let outputDir: string;
const SAMPLE = synthesizeAudio('sample', 'mp3');

// Before useGateway's own set-up (hooks run in order): the server's settings name the host and cwd.
beforeAll(async () => {
  host = await startThirdPartyHost();
  cwd = tempDir('gtm-stt-');
  outputDir = join(cwd, 'gateway-output');
  writeFileSync(join(cwd, 'sample.mp3'), SAMPLE);
});
const gw = useGateway({ env: () => serverEnv() });
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

function serverEnv(): Record<string, string> {
  return {
    // The "third-party" host runs on loopback, which downloads may reach only when allowed.
    GATEWAY_ALLOW_PRIVATE_URLS: new URL(host.url).host,
    CWD: cwd,
  };
}

/** A server with extra settings, same gateway and working directory. */
function connectWith(env: Record<string, string>) {
  return connectInMemory({
    GATEWAY_BASE_URL: gw.service.url,
    GATEWAY_API_KEY: gw.service.apiKey,
    ...serverEnv(),
    ...env,
  });
}

function transcribe(args: Record<string, unknown>, target = gw.conn) {
  return target.client.callTool({ name: 'audio_transcribe', arguments: args }) as Promise<CallToolResult>;
}

function lastUpload(): { fields: Record<string, string>; file: RecordedFile } {
  return gw.service.requests.filter((r) => r.route === 'transcriptions').at(-1)?.body as {
    fields: Record<string, string>;
    file: RecordedFile;
  };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('audio_transcribe from a local file', () => {
  it('uploads the file as multipart and returns the plain text', async () => {
    const result = await transcribe({
      file_path: 'sample.mp3',
      model: 'groq/whisper-large-v3',
      language: 'de',
      prompt: 'Names: Ada',
    });
    expect(result.isError).toBeFalsy();
    const out = structuredOf<TranscriptOut>(result);
    expect(out).toMatchObject({
      model: 'groq/whisper-large-v3',
      format: 'json',
      file_path: null,
      truncated: false,
    });
    expect(out.text).toBe(
      `Transcript of sample.mp3 (${SAMPLE.length} bytes), language de, prompt Names: Ada`,
    );
    expect(textOf(result)).toContain(out.text);
    const upload = lastUpload();
    expect(upload.fields).toEqual({
      model: 'groq/whisper-large-v3',
      language: 'de',
      prompt: 'Names: Ada',
      response_format: 'json',
    });
    expect(upload.file).toMatchObject({
      name: 'sample.mp3',
      type: 'audio/mpeg',
      size: SAMPLE.length,
      sha256: sha256(SAMPLE),
    });
    expect(gw.service.requests.find((r) => r.route === 'transcriptions')?.headers['content-type']).toMatch(
      /^multipart\/form-data; boundary=/,
    );
  });

  it('gives text inline for text/json, and saves srt, vtt and verbose_json as files inside the output directory', async () => {
    const plain = structuredOf<TranscriptOut>(
      await transcribe({ file_path: 'sample.mp3', response_format: 'text' }),
    );
    expect(plain).toMatchObject({ format: 'text', file_path: null, model: 'groq/whisper-large-v3' });
    expect(plain.text).toMatch(/^Transcript of sample\.mp3/);
    for (const [format, extension, check] of [
      ['srt', /\.srt$/, (body: string) => expect(body).toMatch(/^1\n00:00:00,000 --> /)],
      ['vtt', /\.vtt$/, (body: string) => expect(body).toMatch(/^WEBVTT\n/)],
      ['verbose_json', /\.json$/, (body: string) => expect(JSON.parse(body).segments).toHaveLength(1)],
    ] as const) {
      const result = await transcribe({ file_path: join(cwd, 'sample.mp3'), response_format: format });
      const out = structuredOf<TranscriptOut>(result);
      expect(out.format).toBe(format);
      expect(out.text).toBe(plain.text);
      expect(out.file_path).toMatch(extension);
      expect(out.file_path).toMatch(/sample-transcript-/);
      expect(dirname(out.file_path ?? '')).toBe(outputDir);
      check(readFileSync(out.file_path ?? '', 'utf8'));
      expect(result.content.some((c) => c.type === 'resource_link')).toBe(true);
      expect(textOf(result)).toContain(`The ${format} transcript is saved at ${out.file_path}`);
    }
    expect(gw.service.counters.transcriptions).toBe(4);
  });

  it('says so when the provider ignores the requested format', async () => {
    const result = await transcribe({
      file_path: 'sample.mp3',
      model: 'deepgram/nova-3',
      response_format: 'srt',
    });
    const out = structuredOf<TranscriptOut>(result);
    expect(out).toMatchObject({ format: 'json', file_path: null });
    expect(textOf(result)).toContain('Asked for srt, but the provider answered json');
  });

  it('refuses paths outside the input roots, symlink escapes, directories and text files, sending nothing', async () => {
    const outside = tempDir('gtm-outside-');
    writeFileSync(join(outside, 'secret.mp3'), SAMPLE);
    symlinkSync(join(outside, 'secret.mp3'), join(cwd, 'link.mp3'));
    mkdirSync(join(cwd, 'dir.mp3'), { recursive: true });
    writeFileSync(join(cwd, 'notes.mp3'), 'These are meeting notes, not audio.\n');
    for (const [path, pattern] of [
      [join(outside, 'secret.mp3'), /outside the allowed input roots/],
      [`../${outside.split('/').at(-1)}/secret.mp3`, /outside the allowed input roots/],
      ['link.mp3', /outside the allowed input roots/],
      ['dir.mp3', /not a regular file/],
      ['missing.mp3', /No such file/],
      ['notes.mp3', /looks like text, not audio/],
    ] as const) {
      const result = await transcribe({ file_path: path });
      expect(result.isError, path).toBe(true);
      expect(textOf(result), path).toMatch(pattern);
    }
    expect(gw.service.counters.transcriptions).toBe(0);
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
    for (const [name, bytes] of refused) {
      writeFileSync(join(cwd, name), bytes);
      const result = await transcribe({ file_path: name });
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toMatch(/was not sent: .*Give an audio or video file/);
      expect(textOf(result), name).not.toMatch(/hunter2|sk-very-secret|token=abc/);
      const inline = await transcribe({ data_base64: bytes.toString('base64') });
      expect(inline.isError, `${name} inline`).toBe(true);
    }
    expect(gw.service.counters.transcriptions).toBe(0);

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
    for (const [name, bytes] of accepted) {
      writeFileSync(join(cwd, name), bytes);
      const result = await transcribe({ file_path: name });
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    }
    expect(gw.service.counters.transcriptions).toBe(accepted.length);
  });

  it('refuses a file over the upload limit before reading it', async () => {
    const small = await connectWith({ GATEWAY_MAX_UPLOAD_MB: '1' });
    try {
      writeFileSync(join(cwd, 'big.mp3'), Buffer.concat([SAMPLE, Buffer.alloc(1024 * 1024)]));
      const result = await transcribe({ file_path: 'big.mp3' }, small);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/big\.mp3 is [\d.]+ MiB; the limit is 1\.0 MiB/);
      expect(gw.service.counters.transcriptions).toBe(0);
    } finally {
      await small.close();
    }
  });
});

describe('audio_transcribe arguments and models', () => {
  it('wants exactly one of file_path, url and data_base64', async () => {
    const none = await transcribe({ model: 'groq/whisper-large-v3' });
    expect(textOf(none)).toMatch(/exactly one of file_path .*url .*data_base64/);
    const two = await transcribe({ file_path: 'sample.mp3', url: `${host.url}/audio/talk.mp3` });
    expect(textOf(two)).toContain('not file_path and url');
    const bad = await transcribe({ url: 'file:///etc/passwd' });
    expect(textOf(bad)).toMatch(/url must be an absolute http:\/\/ or https:\/\/ URL/);
    const format = await transcribe({ file_path: 'sample.mp3', response_format: 'mp3' });
    expect(textOf(format)).toContain('response_format');
    for (const r of [none, two, bad, format]) expect(r.isError).toBe(true);
    expect(gw.service.counters.transcriptions).toBe(0);
    expect(host.requests).toHaveLength(0);
  });

  it('refuses a model without the transcription capability before downloading or uploading', async () => {
    const speechModel = await transcribe({ url: `${host.url}/audio/talk.mp3`, model: 'openai/tts-1/alloy' });
    expect(speechModel.isError).toBe(true);
    const message = textOf(speechModel);
    expect(message).toContain('openai/tts-1/alloy is not a transcription model on this gateway');
    expect(message).toContain('It is a speech model: use audio_speech for it');
    expect(message).toContain('groq/whisper-large-v3, openai/whisper-1, deepgram/nova-3');
    const chat = await transcribe({ file_path: 'sample.mp3', model: 'openai/gpt-4o-mini' });
    expect(textOf(chat)).toContain('openai/gpt-4o-mini is not a transcription model');
    expect(gw.service.counters.transcriptions).toBe(0);
    expect(host.requests).toHaveLength(0);
  });

  it('goes through unchecked when the gateway has no transcription list, and reports its own error', async () => {
    gw.service.setModelList('stt', null);
    const ok = await transcribe({ file_path: 'sample.mp3', model: 'openai/whisper-1' });
    expect(ok.isError).toBeFalsy();
    const bad = await transcribe({ file_path: 'sample.mp3', model: 'elevenlabs/scribe' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("Provider 'elevenlabs' does not support STT");
    expect(textOf(bad)).toContain('could not be checked first');
    expect(gw.service.counters.transcriptions).toBe(2);
    const noDefault = await transcribe({ file_path: 'sample.mp3' });
    expect(textOf(noDefault)).toMatch(/No transcription model to use.*GATEWAY_TRANSCRIBE_MODEL/);
  });

  it('uses GATEWAY_TRANSCRIBE_MODEL as the default', async () => {
    const other = await connectWith({ GATEWAY_TRANSCRIBE_MODEL: 'openai/whisper-1' });
    try {
      const out = structuredOf<TranscriptOut>(await transcribe({ file_path: 'sample.mp3' }, other));
      expect(out.model).toBe('openai/whisper-1');
      expect(lastUpload().fields.model).toBe('openai/whisper-1');
    } finally {
      await other.close();
    }
  });
});

describe('audio_transcribe from a URL or base64', () => {
  it('downloads from another host without sending the gateway key, following redirects', async () => {
    const result = await transcribe({ url: `${host.url}/redirect?to=/audio/talk.mp3` });
    expect(result.isError).toBeFalsy();
    expect(structuredOf<TranscriptOut>(result).text).toMatch(/^Transcript of talk\.mp3 \(\d+ bytes\)/);
    expect(host.requests.map((r) => r.path)).toEqual(['/redirect', '/audio/talk.mp3']);
    for (const r of host.requests) expect(r.authorization).toBeUndefined();
    expect(lastUpload().file.sha256).toBe(sha256(host.audio));
    expect(readdirSync(outputDir, { withFileTypes: true }).every((e) => !e.name.startsWith('download'))).toBe(
      true,
    );
  });

  it('names an extension-less download by its bytes, and reports host failures and oversize bodies', async () => {
    const noExt = await transcribe({ url: `${host.url}/audio/recording` });
    expect(noExt.isError).toBeFalsy();
    expect(lastUpload().file).toMatchObject({ name: 'recording.wav', type: 'audio/wav' });
    const missing = await transcribe({ url: `${host.url}/missing.mp3` });
    expect(textOf(missing)).toMatch(/Could not download .*missing\.mp3: the host answered HTTP 404/);
    const small = await connectWith({ GATEWAY_MAX_UPLOAD_MB: '1' });
    try {
      const declared = await transcribe({ url: `${host.url}/huge.mp3` }, small);
      expect(textOf(declared)).toMatch(/huge\.mp3 is 2048\.0 MiB; the upload limit is 1\.0 MiB/);
      const streamed = await transcribe({ url: `${host.url}/endless.mp3` }, small);
      expect(textOf(streamed)).toMatch(/endless\.mp3 is over 1\.0 MiB; the upload limit is 1\.0 MiB/);
    } finally {
      await small.close();
    }
    expect(gw.service.counters.transcriptions).toBe(1);
  });

  it('takes base64 and data: URLs, bounded, and refuses what is not base64', async () => {
    const plain = await transcribe({ data_base64: SAMPLE.toString('base64') });
    expect(plain.isError).toBeFalsy();
    expect(lastUpload().file).toMatchObject({
      name: 'audio.mp3',
      type: 'audio/mpeg',
      sha256: sha256(SAMPLE),
    });
    const wav = synthesizeAudio('wave', 'wav');
    const dataUrl = await transcribe({ data_base64: `data:audio/wav;base64,${wav.toString('base64')}` });
    expect(dataUrl.isError).toBeFalsy();
    expect(lastUpload().file).toMatchObject({ name: 'audio.wav', type: 'audio/wav', sha256: sha256(wav) });
    const invalid = await transcribe({ data_base64: 'this is not base64!' });
    expect(textOf(invalid)).toContain('data_base64 is not valid base64');
    const tooBig = await transcribe({ data_base64: 'A'.repeat(28_000_000) });
    expect(tooBig.isError).toBe(true);
    expect(textOf(tooBig)).toMatch(/data_base64 must hold at most 20 MiB/);
    expect(gw.service.counters.transcriptions).toBe(2);
  });
});

describe('long transcripts', () => {
  it('pages from a cache (one transcription) and keeps the whole text in a file', async () => {
    writeFileSync(join(cwd, 'talk.mp3'), Buffer.concat([SAMPLE, Buffer.alloc(400_000, 7)]));
    const first = await transcribe({ file_path: 'talk.mp3', max_length: 5000 });
    const page1 = structuredOf<TranscriptOut>(first);
    expect(page1).toMatchObject({ start_index: 0, truncated: true });
    expect(page1.total_length).toBeGreaterThan(15_000);
    expect(page1.file_path).toMatch(/talk-transcript-[\d-]+\.txt$/);
    expect(page1.text.length).toBeLessThanOrEqual(5000);
    expect(textOf(first)).toContain(`start_index=${page1.next_start_index}`);
    const whole = readFileSync(page1.file_path ?? '', 'utf8');
    expect(whole.length).toBe(page1.total_length);
    expect(dirname(page1.file_path ?? '')).toBe(outputDir);

    let text = page1.text;
    let next = page1.next_start_index;
    for (let n = 0; next !== null && n < 20; n++) {
      const page = structuredOf<TranscriptOut>(
        await transcribe({ file_path: 'talk.mp3', max_length: 5000, start_index: next }),
      );
      expect(page.start_index).toBe(next);
      text += page.text;
      next = page.next_start_index;
    }
    expect(next).toBeNull();
    expect(text).toBe(whole);
    expect(gw.service.counters.transcriptions).toBe(1);

    const past = await transcribe({ file_path: 'talk.mp3', start_index: page1.total_length + 10 });
    expect(textOf(past)).toMatch(/past the end of the transcript/);
    // Another model or format is another transcription.
    await transcribe({ file_path: 'talk.mp3', model: 'openai/whisper-1', max_length: 5000 });
    expect(gw.service.counters.transcriptions).toBe(2);
  });
});
