// audio_speech, list_models speech and doctor's speech line against 9router 0.5.69. Its tts list
// names provider/model without a voice; the id sent must be provider/model/voice. What matters is
// what the speech upstream received (model and voice in its body) and the file that was saved.
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connectInMemory, runCli, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

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

function speak(args: Record<string, unknown>) {
  return gw.conn.client.callTool({ name: 'audio_speech', arguments: args }) as Promise<CallToolResult>;
}

/** The speech requests that reached a fake upstream (api.openai.com or the self-hosted server). */
async function speechSent(): Promise<JournalEntry[]> {
  return (await gw.upstream()).filter((e) => e.path.endsWith('/audio/speech'));
}

/** What the one speech request of the test carried upstream. */
async function upstreamSpeech(): Promise<{ host: string; model: unknown; voice: unknown; body: unknown }> {
  const sent = await speechSent();
  expect(sent).toHaveLength(1);
  const body = sent[0]!.body as Record<string, unknown>;
  return { host: sent[0]!.host, model: body.model, voice: body.voice, body };
}

/** The fake speech upstream writes `SPEECH model=<m> voice=<v> text=<t>` after the format's magic. */
function savedSpeech(out: SpeechOut): string {
  expect(dirname(out.file_path)).toBe(gw.conn.runtime.config.outputDir);
  const bytes = readFileSync(out.file_path);
  expect(bytes.length).toBe(out.bytes);
  return bytes.toString('latin1');
}

function outputFiles(): string[] {
  const dir = gw.conn.runtime.config.outputDir;
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe('audio_speech ids against 9router', () => {
  it('composes provider/model and voice into provider/model/voice', async () => {
    const text = unique('composed');
    const result = await speak({ text, model: 'openai/tts-1', voice: 'alloy' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await upstreamSpeech()).toMatchObject({ host: 'api.openai.com', model: 'tts-1', voice: 'alloy' });
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ model: 'openai/tts-1/alloy', voice: 'alloy', mime_type: 'audio/mpeg' });
    expect(out.file_path).toMatch(/speech-alloy-[\d-]+\.mp3$/);
    expect(savedSpeech(out)).toBe(
      `ID3\x04\x00\x00\x00\x00\x00\x00SPEECH model=tts-1 voice=alloy text=${text}`,
    );
    expect(textOf(result)).toContain('model openai/tts-1/alloy');
  });

  it('sends a full provider/model/voice id as it is', async () => {
    const result = await speak({ text: unique('full'), model: 'openai/tts-1-hd/nova' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await upstreamSpeech()).toMatchObject({ model: 'tts-1-hd', voice: 'nova' });
    expect(structuredOf<SpeechOut>(result)).toMatchObject({ model: 'openai/tts-1-hd/nova', voice: 'nova' });
    expect(textOf(result)).not.toMatch(/replaces|default voice/);
  });

  it('lets a separate voice replace the voice of a full id, and says so', async () => {
    const result = await speak({ text: unique('replaced'), model: 'openai/tts-1/alloy', voice: 'echo' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await upstreamSpeech()).toMatchObject({ model: 'tts-1', voice: 'echo' });
    expect(structuredOf<SpeechOut>(result).model).toBe('openai/tts-1/echo');
    expect(textOf(result)).toContain('The voice echo replaces alloy from the model id.');
  });

  it('chooses alloy for an openai model given without a voice, and says so', async () => {
    const result = await speak({ text: unique('no-voice'), model: 'openai/gpt-4o-mini-tts' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await upstreamSpeech()).toMatchObject({ model: 'gpt-4o-mini-tts', voice: 'alloy' });
    expect(structuredOf<SpeechOut>(result)).toMatchObject({
      model: 'openai/gpt-4o-mini-tts/alloy',
      voice: 'alloy',
    });
    expect(textOf(result)).toMatch(/No voice given: using alloy/);
  });

  it('uses the first listed model with a valid voice when no model is given', async () => {
    const result = await speak({ text: unique('default') });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await upstreamSpeech()).toMatchObject({ model: 'tts-1', voice: 'alloy' });
    expect(structuredOf<SpeechOut>(result).model).toBe('openai/tts-1/alloy');
  });

  it('leaves the voice to a provider whose voices it does not know, and says so', async () => {
    const result = await speak({ text: unique('kokoro'), model: 'selfhosted-tts/kokoro' });
    expect(result.isError, textOf(result)).toBeFalsy();
    // The gateway fills in the provider's own default voice.
    expect(await upstreamSpeech()).toMatchObject({ host: 'local', model: 'kokoro', voice: 'af_heart' });
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ model: 'selfhosted-tts/kokoro', voice: null });
    expect(out.file_path).toMatch(/speech-kokoro-[\d-]+\.mp3$/);
    expect(textOf(result)).toMatch(/No voice given: selfhosted-tts uses its own default voice/);
  });

  it('sends a voice for a self-hosted model as the third part of the id', async () => {
    const result = await speak({ text: unique('emma'), model: 'selfhosted-tts/kokoro', voice: 'bf_emma' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await upstreamSpeech()).toMatchObject({ model: 'kokoro', voice: 'bf_emma' });
    expect(structuredOf<SpeechOut>(result)).toMatchObject({
      model: 'selfhosted-tts/kokoro/bf_emma',
      voice: 'bf_emma',
    });
  });
});

describe('audio_speech refusals against 9router', () => {
  it('refuses chat and transcription models before anything reaches an upstream', async () => {
    const before = outputFiles().length;
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'openai/gpt-4o' }, 'openai/gpt-4o is not a speech model'],
      [{ model: 'openai/gpt-4o', voice: 'alloy' }, 'openai/gpt-4o with voice alloy is not a speech model'],
      [{ model: 'openai/gpt-4o/alloy' }, 'openai/gpt-4o/alloy is not a speech model'],
      [{ model: 'openai/whisper-1' }, 'openai/whisper-1 is not a speech model'],
      [{ model: 'openai/alloy' }, 'openai/alloy is not a speech model'],
    ];
    for (const [args, head] of cases) {
      const result = await speak({ text: unique('refused'), ...args });
      expect(result.isError, JSON.stringify(args)).toBe(true);
      const message = textOf(result);
      expect(message).toContain(head);
      expect(message).toContain('nothing was sent');
      expect(message).toContain(`Speech models: ${SPEECH_MODELS}.`);
      // The listed ids are models: never described as voices.
      expect(message).not.toMatch(/voices? (tts-1|kokoro)/);
      expect(message).toContain(
        'Pass one as `model` and the voice as `voice`, or a full provider/model/voice id.',
      );
    }
    const whisper = await speak({ text: 'x', model: 'openai/whisper-1' });
    expect(textOf(whisper)).toContain('It is a transcription model: use audio_transcribe for it.');
    expect(await gw.upstream()).toEqual([]);
    expect(outputFiles()).toHaveLength(before);
  });
});

describe('audio_speech formats and failures against 9router', () => {
  it('says when the gateway delivered another format than the one asked for', async () => {
    const text = unique('wav');
    const result = await speak({ text, model: 'openai/tts-1', voice: 'alloy', format: 'wav' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ mime_type: 'audio/mpeg', format: 'mp3', requested_format: 'wav' });
    expect(out.file_path).toMatch(/\.mp3$/);
    expect(savedSpeech(out).startsWith('ID3')).toBe(true);
    expect(textOf(result)).toMatch(
      /Asked for wav, but the gateway sent mp3: saved as \.mp3; no wav was delivered\./,
    );
    // openai is never told the format: 9router drops it.
    const { body } = await upstreamSpeech();
    expect(body).not.toHaveProperty('response_format');
  });

  it('saves the format asked for when the provider honours it, without a note', async () => {
    const result = await speak({ text: unique('kokoro-wav'), model: 'selfhosted-tts/kokoro', format: 'wav' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((await upstreamSpeech()).body).toMatchObject({ response_format: 'wav' });
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ mime_type: 'audio/wav', format: 'wav', requested_format: 'wav' });
    expect(out.file_path).toMatch(/\.wav$/);
    expect(savedSpeech(out).startsWith('RIFF')).toBe(true);
    expect(textOf(result)).not.toMatch(/Asked for/);
  });

  it('trusts the audio over a label: mp3 bytes the gateway calls audio/wav are saved as .mp3', async () => {
    // 9router labels self-hosted audio with the format asked for, whatever the server sent.
    const text = `${unique('relabelled')} answers-mp3`;
    const result = await speak({ text, model: 'selfhosted-tts/kokoro', voice: 'af_sky', format: 'wav' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((await upstreamSpeech()).body).toMatchObject({ response_format: 'wav', voice: 'af_sky' });
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ mime_type: 'audio/mpeg', format: 'mp3', requested_format: 'wav' });
    expect(out.file_path).toMatch(/speech-af-sky-[\d-]+\.mp3$/);
    expect(savedSpeech(out)).toBe(
      `ID3\x04\x00\x00\x00\x00\x00\x00SPEECH model=kokoro voice=af_sky text=${text}`,
    );
    expect(textOf(result)).toContain(
      'Asked for wav, but the gateway sent mp3: saved as .mp3; no wav was delivered.',
    );
  });

  it('reports an upstream failure (502 from the gateway) and saves nothing', async () => {
    const before = outputFiles().length;
    const result = await speak({
      text: `${unique('broken')} fault-500`,
      model: 'openai/tts-1',
      voice: 'nova',
    });
    expect(result.isError).toBe(true);
    const message = textOf(result);
    expect(message).toMatch(/^Speech failed: /);
    expect(message).toContain('502');
    expect(message).toContain('fake api.openai.com says 500');
    expect(message).not.toContain(gw.info.apiKey);
    const sent = await speechSent();
    expect(sent.map((e) => [e.status, (e.body as { voice?: string }).voice])).toEqual([[500, 'nova']]);
    expect(outputFiles()).toHaveLength(before);
  });
});

describe('audio_speech checks where it saves before the billed call', () => {
  async function speakInto(cwd: string, env: Record<string, string> = {}) {
    const conn = await connectInMemory({ ...gw.env, CWD: cwd, ...env });
    try {
      return (await conn.client.callTool({
        name: 'audio_speech',
        arguments: { text: unique('nowhere'), model: 'openai/tts-1', voice: 'alloy' },
      })) as CallToolResult;
    } finally {
      await conn.close();
    }
  }

  it('sends nothing when the output directory is a file', async () => {
    const cwd = tempDir('gtm-speech-file-');
    writeFileSync(join(cwd, 'gateway-output'), 'not a directory');
    const result = await speakInto(cwd);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /output directory .*gateway-output cannot take new files \(a file is in the way, EEXIST\)\. .*Nothing was sent\./,
    );
    expect(await speechSent()).toEqual([]);
  });

  it('sends nothing when the output directory leads out of the working directory', async () => {
    const cwd = tempDir('gtm-speech-link-');
    symlinkSync(tempDir('gtm-speech-elsewhere-'), join(cwd, 'gateway-output'));
    const result = await speakInto(cwd);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/leads outside the working directory .* Nothing was sent\./);
    expect(await speechSent()).toEqual([]);
  });

  it('sends nothing when the output directory cannot be created', async () => {
    const cwd = tempDir('gtm-speech-deep-');
    writeFileSync(join(cwd, 'blocked'), 'a file where a directory should be');
    const result = await speakInto(cwd, { GATEWAY_OUTPUT_DIR: join(cwd, 'blocked', 'out') });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/cannot take new files \(it is not a directory, ENOTDIR\)/);
    expect(await speechSent()).toEqual([]);
  });
});

describe('speech models described against 9router', () => {
  it('list_models lists provider/model speech models and says how voices are given', async () => {
    const result = await gw.conn.client.callTool({
      name: 'list_models',
      arguments: { capability: 'speech' },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain(
      'openai/tts-1 (default, voice alloy), openai/tts-1-hd, openai/gpt-4o-mini-tts, selfhosted-tts/kokoro',
    );
    expect(text).not.toMatch(/voice is part of the id|voices (tts-1|kokoro)/);
    expect(text).toContain(
      '\nVoices: openai — alloy, ash, ballad, coral, echo, fable, nova, onyx, sage, shimmer, verse with ' +
        'gpt-4o-mini-tts only (default alloy); selfhosted-tts — its own voice names (default: its own).',
    );
    const out = structuredOf<{ models: { id: string }[]; defaults: Record<string, string> }>(result);
    expect(out.models.map((m) => m.id)).toEqual(SPEECH_MODELS.split(', '));
    expect(out.defaults.speech).toBe('openai/tts-1');
    expect(await gw.upstream()).toEqual([]);
  });

  it('doctor names the default speech model and the id it sends', async () => {
    const speechLine = async (env: Record<string, string>) => {
      const run = await runCli(['doctor'], { ...gw.env, CWD: tempDir('gtm-doctor-'), ...env });
      return run.stdout.split('\n').find((l) => /Speech \(audio_speech\)/.test(l)) ?? run.stdout + run.stderr;
    };
    expect(await speechLine({})).toBe(
      '✓ Speech (audio_speech): openai/tts-1 with voice alloy, sent as openai/tts-1/alloy (discovered at /v1/models/tts; 4 listed)',
    );
    expect(await speechLine({ GATEWAY_SPEECH_MODEL: 'openai/tts-1-hd/nova' })).toBe(
      '✓ Speech (audio_speech): openai/tts-1-hd/nova (from GATEWAY_SPEECH_MODEL)',
    );
    expect(await speechLine({ GATEWAY_SPEECH_MODEL: 'openai/gpt-4o' })).toMatch(
      /^! Speech \(audio_speech\): openai\/gpt-4o \(from GATEWAY_SPEECH_MODEL\), but \/v1\/models\/tts does not list it/,
    );
    expect(await speechSent()).toEqual([]);
  });
});
