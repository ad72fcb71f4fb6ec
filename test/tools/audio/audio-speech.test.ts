// audio_speech on the reference service alone: what only it can do on demand (list voices as ids,
// answer without a speech list, answer JSON or a page instead of audio, hold a body back, refuse
// with 402) and the request the gateway itself receives. The cases 9router produces too run on
// both gateways in audio-speech.real.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { type Connected, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { synthesizeAudio } from '../../reference-service/index.js';

interface SpeechOut {
  file_path: string;
  mime_type: string;
  bytes: number;
  model: string;
  voice: string | null;
  format: string;
  requested_format: string;
}

function speak(target: Connected, args: Record<string, unknown>) {
  return target.client.callTool({ name: 'audio_speech', arguments: args }) as Promise<CallToolResult>;
}

describe('audio_speech on the reference service only', () => {
  let outputDir: string;
  const gw = useGateway({
    env: () => {
      outputDir = join(tempDir('gtm-speech-'), 'out');
      return { GATEWAY_OUTPUT_DIR: outputDir };
    },
  });
  // Several cases speak the same text: the duplicate guard is not their point (test/ledger).
  const speakHere = (args: Record<string, unknown>) => speak(gw.conn, { allow_duplicate: true, ...args });
  const lastSentId = () =>
    (gw.service.requests.filter((r) => r.route === 'speech').at(-1)?.body as { model: string } | undefined)
      ?.model ?? '(no speech request)';

  it('sends the format in the query string, and only model and input in the body', async () => {
    await speakHere({ text: 'Hello there', model: 'openai/tts-1/alloy' });
    const sent = gw.service.requests.filter((r) => r.route === 'speech').at(-1);
    expect(sent?.query).toEqual({ response_format: 'mp3' });
    expect(sent?.body).toEqual({ model: 'openai/tts-1/alloy', input: 'Hello there' });
  });

  it('fetches the speech list once for a series of calls', async () => {
    for (const model of ['openai/tts-1', 'openai/tts-1-hd/echo', 'selfhosted-tts/kokoro']) {
      expect((await speakHere({ text: 'Voice test', model })).isError).toBeFalsy();
    }
    expect(gw.service.counters['models.kind']).toBe(1);
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
      const result = await speakHere({ text: 'Listed voices', ...args });
      expect(result.isError, JSON.stringify(args)).toBeFalsy();
      expect(lastSentId()).toBe(sent);
    }
    const refused = await speakHere({ text: 'x', model: 'openai/tts-1-hd', voice: 'alloy' });
    expect(textOf(refused)).toContain('Speech models: openai/tts-1 (voices alloy, nova).');
    expect(gw.service.counters.speech).toBe(cases.length);
  });

  it('goes through unchecked when the gateway has no speech list, and reports its own error', async () => {
    gw.service.setModelList('tts', null);
    const ok = await speakHere({ text: 'Unlisted', model: 'openai/tts-1', voice: 'nova' });
    expect(ok.isError).toBeFalsy();
    expect(lastSentId()).toBe('openai/tts-1/nova');
    const bad = await speakHere({ text: 'x', model: 'groq/whisper-large-v3' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("Provider 'groq' does not support TTS via this route");
    expect(textOf(bad)).toContain('could not be checked first');
    expect(gw.service.counters.speech).toBe(2);
  });

  it('says what to set when no model is given and none is listed', async () => {
    gw.service.setModelList('tts', []);
    const result = await speakHere({ text: 'x' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/No speech model to use.*GATEWAY_SPEECH_MODEL/);
    expect(gw.service.counters.speech).toBe(0);
  });

  it('says why big audio is not attached inline', async () => {
    // 400 characters of uncompressed wav are well over 512 KiB.
    const big = await speakHere({
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

  it('decodes a JSON answer with base64 audio, and refuses an answer that is not audio', async () => {
    const audio = synthesizeAudio('json', 'mp3');
    gw.service.inject('speech', { body: JSON.stringify({ audio: audio.toString('base64'), format: 'mp3' }) });
    const fromJson = await speakHere({ text: 'json', model: 'openai/tts-1/alloy' });
    const out = structuredOf<SpeechOut>(fromJson);
    expect(out.file_path).toMatch(/\.mp3$/);
    expect(readFileSync(out.file_path).equals(audio)).toBe(true);

    const before = readdirSync(outputDir).length;
    gw.service.inject('speech', { body: '<html>oops</html>', headers: { 'content-type': 'text/html' } });
    const html = await speakHere({ text: 'html', model: 'openai/tts-1/alloy' });
    expect(html.isError).toBe(true);
    expect(textOf(html)).toContain('text/html instead of audio');
    gw.service.inject('speech', { body: '', headers: { 'content-type': 'audio/mp3' } });
    const empty = await speakHere({ text: 'empty', model: 'openai/tts-1/alloy' });
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
    const result = await speakHere({ text: 'x', model: 'openai/tts-1/alloy' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Speech failed: .*402.*Insufficient credit.*top it up/);
    expect(textOf(result)).not.toContain(gw.service.apiKey);
  });
  it('names the file by what the audio is: Ogg is .ogg unless opus was asked for, a type by its registered name', async () => {
    const cases = [
      // Ogg carries Vorbis as well as Opus: asked for mp3, the file is no .opus.
      ['audio/ogg', 'OggS\0\x02', 'mp3', 'audio/ogg', 'ogg'],
      ['audio/ogg', 'OggS\0\x02', 'opus', 'audio/ogg', 'opus'],
      // Labelled as the format asked for, but the bytes are AIFF.
      ['audio/mp3', 'FORM\0\0\0\0AIFFCOMM', 'mp3', 'audio/aiff', 'aiff'],
      ['audio/x-wav', 'RIFF\0\0\0\0WAVEfmt ', 'wav', 'audio/wav', 'wav'],
    ] as const;
    for (const [contentType, head, format, mime, extension] of cases) {
      gw.service.inject('speech', {
        body: `${head}${'x'.repeat(64)}`,
        headers: { 'content-type': contentType },
      });
      const result = await speakHere({ text: 'Hi', model: 'selfhosted-tts/kokoro', format });
      const out = structuredOf<SpeechOut>(result);
      expect(out, contentType).toMatchObject({
        mime_type: mime,
        format: extension,
        requested_format: format,
      });
      expect(out.file_path, contentType).toMatch(new RegExp(`\\.${extension}$`));
      expect(readFileSync(out.file_path).subarray(0, 4).toString('latin1')).toBe(head.slice(0, 4));
      expect(result.content.find((c) => c.type === 'resource_link')).toMatchObject({ mimeType: mime });
      if (extension !== format) {
        expect(textOf(result)).toContain(
          `Asked for ${format}, but the gateway sent ${extension}: saved as .${extension}; no ${format} was delivered.`,
        );
      } else {
        expect(textOf(result)).not.toMatch(/Asked for/);
      }
    }
  });
});
