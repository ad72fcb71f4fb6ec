import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { synthesizeAudio } from '../../reference-service/index.js';

let outputDir: string;

const gw = useGateway({
  env: () => {
    outputDir = join(tempDir('gtm-speech-'), 'out');
    return { GATEWAY_OUTPUT_DIR: outputDir };
  },
});

interface SpeechOut {
  file_path: string;
  mime_type: string;
  bytes: number;
  model: string;
  voice: string | null;
  format: string;
  requested_format: string;
}

const SPEECH_MODELS = 'openai/tts-1, openai/tts-1-hd, openai/gpt-4o-mini-tts, selfhosted-tts/kokoro';

/** A server with extra settings, same gateway and output directory. */
function connectWith(env: Record<string, string>) {
  return connectInMemory({
    GATEWAY_BASE_URL: gw.service.url,
    GATEWAY_API_KEY: gw.service.apiKey,
    GATEWAY_OUTPUT_DIR: outputDir,
    ...env,
  });
}

function speak(args: Record<string, unknown>, target = gw.conn) {
  return target.client.callTool({ name: 'audio_speech', arguments: args }) as Promise<CallToolResult>;
}

function speechRequests() {
  return gw.service.requests.filter((r) => r.route === 'speech');
}

function lastSentModel(): string {
  const body = speechRequests().at(-1)?.body as { model: string } | undefined;
  return body?.model ?? '(no speech request)';
}

describe('audio_speech', () => {
  it('saves the audio under the output directory and links it', async () => {
    const result = await speak({ text: 'Hello there', model: 'openai/tts-1/alloy' });
    expect(result.isError).toBeFalsy();
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({
      mime_type: 'audio/mpeg',
      model: 'openai/tts-1/alloy',
      voice: 'alloy',
      format: 'mp3',
      requested_format: 'mp3',
    });
    expect(dirname(out.file_path)).toBe(outputDir);
    expect(out.file_path).toMatch(/speech-alloy-[\d-]+\.mp3$/);
    const saved = readFileSync(out.file_path);
    expect(saved.equals(synthesizeAudio('Hello there', 'mp3'))).toBe(true);
    expect(out.bytes).toBe(saved.length);
    const link = result.content.find((c) => c.type === 'resource_link');
    expect(link).toMatchObject({ mimeType: 'audio/mpeg' });
    expect((link as { uri: string }).uri).toBe(`gateway-tools://output/${basename(out.file_path)}`);
    const read = await gw.conn.client.readResource({ uri: (link as { uri: string }).uri });
    expect(read.contents).toEqual([
      { uri: (link as { uri: string }).uri, mimeType: 'audio/mpeg', blob: saved.toString('base64') },
    ]);
    expect(result.content.some((c) => c.type === 'audio')).toBe(false);
    expect(textOf(result)).toContain(out.file_path);
    // The format travels in the query string; the body carries only model and input.
    const sent = speechRequests().at(-1);
    expect(sent?.query).toEqual({ response_format: 'mp3' });
    expect(sent?.body).toEqual({ model: 'openai/tts-1/alloy', input: 'Hello there' });
  });

  it('never reuses a file name: the same call twice makes two files', async () => {
    const a = structuredOf<SpeechOut>(await speak({ text: 'Same', model: 'openai/tts-1/nova' }));
    const b = structuredOf<SpeechOut>(await speak({ text: 'Same', model: 'openai/tts-1/nova' }));
    expect(a.file_path).not.toBe(b.file_path);
    expect(existsSync(a.file_path) && existsSync(b.file_path)).toBe(true);
    for (const name of readdirSync(outputDir)) expect(existsSync(join(outputDir, name))).toBe(true);
  });

  it('saves each format a provider honours with its own extension and media type', async () => {
    const cases = [
      ['wav', 'audio/wav', /\.wav$/, 'RIFF'],
      ['opus', 'audio/ogg', /\.opus$/, 'OggS'],
      ['flac', 'audio/flac', /\.flac$/, 'fLaC'],
      ['aac', 'audio/aac', /\.aac$/, undefined],
      ['pcm', 'audio/pcm', /\.pcm$/, undefined],
    ] as const;
    for (const [format, mime, extension, magic] of cases) {
      const result = await speak({ text: 'Hi', model: 'selfhosted-tts/kokoro', format });
      const out = structuredOf<SpeechOut>(result);
      expect(out.mime_type, format).toBe(mime);
      expect(out, format).toMatchObject({ format, requested_format: format });
      expect(textOf(result), format).not.toMatch(/Asked for/);
      expect(out.file_path, format).toMatch(extension);
      expect(speechRequests().at(-1)?.query.response_format).toBe(format);
      if (magic) expect(readFileSync(out.file_path).subarray(0, 4).toString('latin1')).toBe(magic);
    }
  });

  it('says when the provider delivered another format than the one asked for', async () => {
    const result = await speak({ text: 'Hi', model: 'openai/tts-1', voice: 'nova', format: 'wav' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ mime_type: 'audio/mpeg', format: 'mp3', requested_format: 'wav' });
    expect(out.file_path).toMatch(/\.mp3$/);
    expect(readFileSync(out.file_path).equals(synthesizeAudio('Hi', 'mp3'))).toBe(true);
    expect(textOf(result)).toContain(
      'Asked for wav, but the gateway sent mp3: saved as .mp3; no wav was delivered.',
    );
  });

  it('composes provider/model and voice into the provider/model/voice id the service receives', async () => {
    const cases: [Record<string, unknown>, string, string | null, RegExp | null][] = [
      [{ model: 'openai/tts-1', voice: 'shimmer' }, 'openai/tts-1/shimmer', 'shimmer', null],
      [{ model: 'openai/tts-1/alloy', voice: 'nova' }, 'openai/tts-1/nova', 'nova', /nova replaces alloy/],
      [{ model: 'openai/tts-1/alloy', voice: 'alloy' }, 'openai/tts-1/alloy', 'alloy', null],
      [{ model: 'openai/tts-1' }, 'openai/tts-1/alloy', 'alloy', /No voice given: using alloy/],
      [{ model: 'openai/tts-1-hd/echo' }, 'openai/tts-1-hd/echo', 'echo', null],
      [
        { model: 'selfhosted-tts/kokoro', voice: 'bf_emma' },
        'selfhosted-tts/kokoro/bf_emma',
        'bf_emma',
        null,
      ],
      [
        { model: 'selfhosted-tts/kokoro' },
        'selfhosted-tts/kokoro',
        null,
        /No voice given: selfhosted-tts uses its own default voice/,
      ],
    ];
    for (const [args, sent, voice, note] of cases) {
      const result = await speak({ text: 'Voice test', ...args });
      expect(result.isError, JSON.stringify(args)).toBeFalsy();
      expect(lastSentModel()).toBe(sent);
      expect(structuredOf<SpeechOut>(result)).toMatchObject({ model: sent, voice });
      if (note) expect(textOf(result)).toMatch(note);
      else expect(textOf(result)).not.toMatch(/No voice given|replaces/);
    }
    // The tts list is fetched once and cached for the whole series.
    expect(gw.service.counters['models.kind']).toBe(1);
  });

  it('uses the first listed speech model when none is given', async () => {
    const result = await speak({ text: 'Default' });
    expect(structuredOf<SpeechOut>(result).model).toBe('openai/tts-1/alloy');
    expect(lastSentModel()).toBe('openai/tts-1/alloy');
  });

  it('uses GATEWAY_SPEECH_MODEL as the default, with a voice on top', async () => {
    const other = await connectWith({ GATEWAY_SPEECH_MODEL: 'selfhosted-tts/kokoro/bf_emma' });
    try {
      expect(structuredOf<SpeechOut>(await speak({ text: 'a' }, other)).model).toBe(
        'selfhosted-tts/kokoro/bf_emma',
      );
      await speak({ text: 'b', voice: 'af_sky' }, other);
      expect(lastSentModel()).toBe('selfhosted-tts/kokoro/af_sky');
    } finally {
      await other.close();
    }
  });

  it('refuses a model without the speech capability before sending anything', async () => {
    const filesBefore = readdirSync(outputDir).length;
    const chat = await speak({ text: 'x', model: 'openai/gpt-4o-mini', voice: 'nova' });
    expect(chat.isError).toBe(true);
    const message = textOf(chat);
    expect(message).toContain('openai/gpt-4o-mini with voice nova is not a speech model');
    expect(message).toContain(
      `Speech models: ${SPEECH_MODELS}. Pass one as \`model\` and the voice as \`voice\``,
    );
    const stt = await speak({ text: 'x', model: 'groq/whisper-large-v3' });
    expect(textOf(stt)).toMatch(/It is a transcription model: use audio_transcribe/);
    for (const model of ['openai/tts-2', 'openai/gpt-4o-mini/alloy', 'openai/nova', 'selfhosted-tts']) {
      const refused = await speak({ text: 'x', model });
      expect(refused.isError, model).toBe(true);
      expect(textOf(refused), model).toContain(`${model} is not a speech model`);
    }
    expect(textOf(await speak({ text: 'x', model: 'openai/nova' }))).toContain(
      'nova is a voice, not a model: give it as `voice`',
    );
    expect(gw.service.counters.speech).toBe(0);
    expect(readdirSync(outputDir)).toHaveLength(filesBefore);
  });

  it('refuses a wrong GATEWAY_SPEECH_MODEL and says where it came from', async () => {
    const other = await connectWith({ GATEWAY_SPEECH_MODEL: 'openai/whisper-1' });
    try {
      const result = await speak({ text: 'x' }, other);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('openai/whisper-1 (from GATEWAY_SPEECH_MODEL) is not a speech model');
      expect(gw.service.counters.speech).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('reads a gateway that lists voices instead of models', async () => {
    gw.service.setModelList('tts', [{ id: 'openai/tts-1/alloy' }, { id: 'openai/tts-1/nova' }]);
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'openai/tts-1/nova' }, 'openai/tts-1/nova'],
      [{ model: 'openai/tts-1/shimmer' }, 'openai/tts-1/shimmer'],
      [{ model: 'openai/tts-1/alloy', voice: 'echo' }, 'openai/tts-1/echo'],
      [{ model: 'openai/tts-1' }, 'openai/tts-1/alloy'],
      [{}, 'openai/tts-1/alloy'],
    ];
    for (const [args, sent] of cases) {
      const result = await speak({ text: 'Listed voices', ...args });
      expect(result.isError, JSON.stringify(args)).toBeFalsy();
      expect(lastSentModel()).toBe(sent);
    }
    const refused = await speak({ text: 'x', model: 'openai/tts-1-hd', voice: 'alloy' });
    expect(textOf(refused)).toContain('Speech models: openai/tts-1 (voices alloy, nova).');
    expect(gw.service.counters.speech).toBe(cases.length);
  });

  it('goes through unchecked when the gateway has no speech list, and reports its own error', async () => {
    gw.service.setModelList('tts', null);
    const ok = await speak({ text: 'Unlisted', model: 'openai/tts-1', voice: 'nova' });
    expect(ok.isError).toBeFalsy();
    expect(lastSentModel()).toBe('openai/tts-1/nova');
    const bad = await speak({ text: 'x', model: 'groq/whisper-large-v3' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("Provider 'groq' does not support TTS via this route");
    expect(textOf(bad)).toContain('could not be checked first');
    expect(gw.service.counters.speech).toBe(2);
  });

  it('says what to set when no model is given and none is listed', async () => {
    gw.service.setModelList('tts', []);
    const result = await speak({ text: 'x' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/No speech model to use.*GATEWAY_SPEECH_MODEL/);
    expect(gw.service.counters.speech).toBe(0);
  });

  it('returns small audio inline only when asked, and says why big audio is not', async () => {
    const small = await speak({ text: 'Inline me', model: 'openai/tts-1/alloy', return_audio: true });
    const audio = small.content.find((c) => c.type === 'audio') as { data: string; mimeType: string };
    expect(audio.mimeType).toBe('audio/mpeg');
    const out = structuredOf<SpeechOut>(small);
    expect(Buffer.from(audio.data, 'base64').equals(readFileSync(out.file_path))).toBe(true);
    // 400 characters of uncompressed wav are well over 512 KiB.
    const big = await speak({
      text: 'w'.repeat(400),
      model: 'selfhosted-tts/kokoro',
      format: 'wav',
      return_audio: true,
    });
    expect(big.isError).toBeFalsy();
    expect(big.content.some((c) => c.type === 'audio')).toBe(false);
    expect(structuredOf<SpeechOut>(big).bytes).toBeGreaterThan(1024 * 1024);
    expect(textOf(big)).toMatch(/Not attached inline: .* over the 512\.0 KiB inline limit/);
  });

  it('bounds the text length with a clear message, and sends nothing', async () => {
    for (const [text, pattern] of [
      ['x'.repeat(4097), /at most 4096 characters/],
      ['   ', /text must not be empty/],
    ] as const) {
      const result = await speak({ text, model: 'openai/tts-1/alloy' });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(pattern);
    }
    expect((await speak({ text: 'x'.repeat(4096), model: 'openai/tts-1/alloy' })).isError).toBeFalsy();
    expect((await speak({ text: 'x', voice: 'a/b' })).isError).toBe(true);
    expect(gw.service.counters.speech).toBe(1);
  });

  it('decodes a JSON answer with base64 audio, and refuses an answer that is not audio', async () => {
    const audio = synthesizeAudio('json', 'mp3');
    gw.service.inject('speech', { body: JSON.stringify({ audio: audio.toString('base64'), format: 'mp3' }) });
    const fromJson = await speak({ text: 'json', model: 'openai/tts-1/alloy' });
    const out = structuredOf<SpeechOut>(fromJson);
    expect(out.file_path).toMatch(/\.mp3$/);
    expect(readFileSync(out.file_path).equals(audio)).toBe(true);

    const before = readdirSync(outputDir).length;
    gw.service.inject('speech', { body: '<html>oops</html>', headers: { 'content-type': 'text/html' } });
    const html = await speak({ text: 'html', model: 'openai/tts-1/alloy' });
    expect(html.isError).toBe(true);
    expect(textOf(html)).toContain('text/html instead of audio');
    gw.service.inject('speech', { body: '', headers: { 'content-type': 'audio/mp3' } });
    const empty = await speak({ text: 'empty', model: 'openai/tts-1/alloy' });
    expect(textOf(empty)).toContain('an empty body instead of audio');
    expect(readdirSync(outputDir).length).toBe(before);
  });

  it('removes the partial file when the call is cancelled mid-download', async () => {
    gw.service.inject('speech', { slowBodyMs: 10_000 });
    const controller = new AbortController();
    const pending = gw.conn.client.callTool(
      { name: 'audio_speech', arguments: { text: 'cancel me', model: 'openai/tts-1/alloy' } },
      undefined,
      { signal: controller.signal },
    );
    const listed = () => (existsSync(outputDir) ? readdirSync(outputDir) : []);
    // Written under a temporary name until complete.
    const partial = () => listed().filter((n) => n.endsWith('.partial'));
    const before = new Set(partial());
    const speechBefore = listed().filter((n) => n.startsWith('speech-alloy'));
    let created: string[] = [];
    for (let n = 0; n < 200 && created.length === 0; n++) {
      await new Promise((r) => setTimeout(r, 10));
      created = partial().filter((name) => !before.has(name));
    }
    expect(created).toHaveLength(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    for (let n = 0; n < 200 && existsSync(join(outputDir, created[0]!)); n++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(existsSync(join(outputDir, created[0]!))).toBe(false);
    expect(listed().filter((n) => n.startsWith('speech-alloy'))).toEqual(speechBefore);
  });

  it('reports service failures in a sentence, without the key', async () => {
    gw.service.inject('speech', { status: 402, message: 'Insufficient credit', times: 1 });
    const result = await speak({ text: 'x', model: 'openai/tts-1/alloy' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Speech failed: .*402.*Insufficient credit.*top it up/);
    expect(textOf(result)).not.toContain(gw.service.apiKey);
  });
});
