// audio_speech, with list_models speech and doctor's speech line, on both gateways: the cases
// both can produce run on each (describe.each); 9router's own relabelling and failure statuses at
// the end. What only the reference service makes is in audio-speech.test.ts. Gateways list speech
// as provider/model without a voice; the id sent is provider/model/voice. What matters is what the
// speech provider behind the gateway was asked (model and voice) and the file that was saved.
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BACKENDS, type Backend, billableRequests } from '../../harness/backends.js';
import {
  type Connected,
  connectInMemory,
  runCli,
  structuredOf,
  tempDir,
  textOf,
} from '../../harness/harness.js';
import { speechAudio } from '../../nine-router/upstream/openai.js';
import { unique, useRealGateway } from '../../nine-router/use.js';
import { synthesizeAudio } from '../../reference-service/index.js';
import { speechUpstream } from '../../reference-service/routes-speech.js';

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

function speak(target: Connected, args: Record<string, unknown>) {
  return target.client.callTool({ name: 'audio_speech', arguments: args }) as Promise<CallToolResult>;
}

function outputFiles(target: Connected): string[] {
  const dir = target.runtime.config.outputDir;
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A speech request as the provider behind the gateway was asked it. */
interface SpeechSent {
  provider: string;
  model: string;
  voice: string;
  text: string;
  /** The format asked for (the reference service: as the gateway was asked). */
  format: string | undefined;
}

/** The speech requests of this test: read from the reference service's id, or 9router's upstream. */
async function speechSent(backend: Backend): Promise<SpeechSent[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => r.route === 'speech')
      .map((r) => {
        const body = r.body as { model: string; input: string };
        const { provider, model, voice } = speechUpstream(body.model);
        return { provider, model, voice, text: body.input, format: r.query.response_format };
      });
  }
  const journal = (await backend.nineRouter?.upstream()) ?? [];
  return journal
    .filter((e) => e.path.endsWith('/audio/speech'))
    .map((e) => {
      const body = e.body as Record<string, string>;
      const provider = e.host === 'api.openai.com' ? 'openai' : 'selfhosted-tts';
      return {
        provider,
        model: body.model!,
        voice: body.voice!,
        text: body.input!,
        format: body.response_format,
      };
    });
}

/** The audio the backend's speech provider answers to `sent`, in the format it delivered. */
function audioAnswered(backend: Backend, sent: SpeechSent, format: string): Buffer {
  if (backend.reference) return synthesizeAudio(sent.text, format);
  return speechAudio(format, { model: sent.model, voice: sent.voice, input: sent.text });
}

interface SpeechIdCase {
  says: string;
  args: Record<string, string>;
  sent: Pick<SpeechSent, 'provider' | 'model' | 'voice'>;
  id: string;
  voice: string | null;
  note?: string | RegExp;
  file?: RegExp;
}

const SPEECH_IDS: SpeechIdCase[] = [
  {
    says: 'composes provider/model and voice into provider/model/voice',
    args: { model: 'openai/tts-1', voice: 'shimmer' },
    sent: { provider: 'openai', model: 'tts-1', voice: 'shimmer' },
    id: 'openai/tts-1/shimmer',
    voice: 'shimmer',
  },
  {
    says: 'sends a full provider/model/voice id as it is',
    args: { model: 'openai/tts-1-hd/nova' },
    sent: { provider: 'openai', model: 'tts-1-hd', voice: 'nova' },
    id: 'openai/tts-1-hd/nova',
    voice: 'nova',
  },
  {
    says: 'lets a separate voice replace the voice of a full id, and says so',
    args: { model: 'openai/tts-1/alloy', voice: 'echo' },
    sent: { provider: 'openai', model: 'tts-1', voice: 'echo' },
    id: 'openai/tts-1/echo',
    voice: 'echo',
    note: 'The voice echo replaces alloy from the model id.',
  },
  {
    says: 'takes a separate voice that repeats the voice of the id without a note',
    args: { model: 'openai/tts-1/alloy', voice: 'alloy' },
    sent: { provider: 'openai', model: 'tts-1', voice: 'alloy' },
    id: 'openai/tts-1/alloy',
    voice: 'alloy',
  },
  {
    says: 'chooses alloy for openai/tts-1 given without a voice, and says so',
    args: { model: 'openai/tts-1' },
    sent: { provider: 'openai', model: 'tts-1', voice: 'alloy' },
    id: 'openai/tts-1/alloy',
    voice: 'alloy',
    note: /No voice given: using alloy/,
  },
  {
    says: 'chooses alloy for openai/gpt-4o-mini-tts given without a voice, and says so',
    args: { model: 'openai/gpt-4o-mini-tts' },
    sent: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'alloy' },
    id: 'openai/gpt-4o-mini-tts/alloy',
    voice: 'alloy',
    note: /No voice given: using alloy/,
  },
  {
    says: 'leaves the voice to a provider whose voices it does not know, and says so',
    args: { model: 'selfhosted-tts/kokoro' },
    // The gateway fills in the provider's own default voice.
    sent: { provider: 'selfhosted-tts', model: 'kokoro', voice: 'af_heart' },
    id: 'selfhosted-tts/kokoro',
    voice: null,
    note: /No voice given: selfhosted-tts uses its own default voice/,
    file: /speech-kokoro-[\d-]+\.mp3$/,
  },
  {
    says: 'sends a voice for a self-hosted model as the third part of the id',
    args: { model: 'selfhosted-tts/kokoro', voice: 'bf_emma' },
    sent: { provider: 'selfhosted-tts', model: 'kokoro', voice: 'bf_emma' },
    id: 'selfhosted-tts/kokoro/bf_emma',
    voice: 'bf_emma',
  },
];

const HONOURED_FORMATS: { format: string; mime: string; magic?: string }[] = [
  { format: 'wav', mime: 'audio/wav', magic: 'RIFF' },
  // Ogg Opus is given its registered media type, audio/ogg, whichever label the gateway used
  // (9router passes on the provider's audio/opus).
  { format: 'opus', mime: 'audio/ogg', magic: 'OggS' },
  { format: 'flac', mime: 'audio/flac', magic: 'fLaC' },
  { format: 'aac', mime: 'audio/aac' },
  { format: 'pcm', mime: 'audio/pcm' },
];

const REFUSED: { args: Record<string, string>; head: string; hint?: string }[] = [
  { args: { model: 'openai/gpt-4o' }, head: 'openai/gpt-4o is not a speech model' },
  {
    args: { model: 'openai/gpt-4o', voice: 'alloy' },
    head: 'openai/gpt-4o with voice alloy is not a speech model',
  },
  { args: { model: 'openai/gpt-4o-mini', voice: 'nova' }, head: 'openai/gpt-4o-mini with voice nova is not' },
  { args: { model: 'openai/gpt-4o/alloy' }, head: 'openai/gpt-4o/alloy is not a speech model' },
  { args: { model: 'openai/gpt-4o-mini/alloy' }, head: 'openai/gpt-4o-mini/alloy is not a speech model' },
  { args: { model: 'openai/tts-2' }, head: 'openai/tts-2 is not a speech model' },
  { args: { model: 'selfhosted-tts' }, head: 'selfhosted-tts is not a speech model' },
  {
    args: { model: 'openai/whisper-1' },
    head: 'openai/whisper-1 is not a speech model',
    hint: 'It is a transcription model: use audio_transcribe for it.',
  },
  {
    args: { model: 'groq/whisper-large-v3' },
    head: 'groq/whisper-large-v3 is not a speech model',
    hint: 'It is a transcription model: use audio_transcribe for it.',
  },
  {
    args: { model: 'selfhosted-tts/nova' },
    head: 'selfhosted-tts/nova is not a speech model',
    hint: 'nova is a voice, not a model: give it as `voice`',
  },
];

describe.each(BACKENDS)('audio_speech on %s', (_name, use) => {
  const backend = use();

  /** The one speech request the test made. */
  async function onlySent(): Promise<SpeechSent> {
    const sent = await speechSent(backend);
    expect(sent).toHaveLength(1);
    return sent[0]!;
  }

  /** The saved file, checked to be in the output directory and as long as the result says. */
  function saved(out: SpeechOut): Buffer {
    expect(dirname(out.file_path)).toBe(backend.conn.runtime.config.outputDir);
    const bytes = readFileSync(out.file_path);
    expect(bytes.length).toBe(out.bytes);
    return bytes;
  }

  it('saves the audio the provider sent under the output directory, links it and serves it', async () => {
    const text = unique('hello');
    const result = await speak(backend.conn, { text, model: 'openai/tts-1', voice: 'alloy' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({
      mime_type: 'audio/mpeg',
      model: 'openai/tts-1/alloy',
      voice: 'alloy',
      format: 'mp3',
      requested_format: 'mp3',
    });
    const sent = await onlySent();
    expect(sent).toMatchObject({ provider: 'openai', model: 'tts-1', voice: 'alloy', text });
    expect(out.file_path).toMatch(/speech-alloy-[\d-]+\.mp3$/);
    const bytes = saved(out);
    expect(bytes.equals(audioAnswered(backend, sent, 'mp3'))).toBe(true);
    const link = result.content.find((c) => c.type === 'resource_link') as { uri: string } | undefined;
    expect(link).toMatchObject({ mimeType: 'audio/mpeg' });
    expect(link?.uri).toBe(`gateway-tools://output/${basename(out.file_path)}`);
    const read = await backend.conn.client.readResource({ uri: link?.uri ?? '' });
    expect(read.contents).toEqual([
      { uri: link?.uri, mimeType: 'audio/mpeg', blob: bytes.toString('base64') },
    ]);
    expect(result.content.some((c) => c.type === 'audio')).toBe(false);
    expect(textOf(result)).toContain(out.file_path);
    expect(textOf(result)).toContain('model openai/tts-1/alloy');
  });

  it('never reuses a file name: the same call twice makes two files', async () => {
    const text = unique('same');
    const a = structuredOf<SpeechOut>(await speak(backend.conn, { text, model: 'openai/tts-1/nova' }));
    // allow_duplicate: the same call again is otherwise answered with the first file.
    const again = { text, model: 'openai/tts-1/nova', allow_duplicate: true };
    const b = structuredOf<SpeechOut>(await speak(backend.conn, again));
    expect(a.file_path).not.toBe(b.file_path);
    expect(existsSync(a.file_path) && existsSync(b.file_path)).toBe(true);
    expect(await speechSent(backend)).toHaveLength(2);
  });

  for (const { says, args, sent, id, voice, note, file } of SPEECH_IDS) {
    it(says, async () => {
      const result = await speak(backend.conn, { text: unique('voice'), ...args });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(await onlySent()).toMatchObject(sent);
      const out = structuredOf<SpeechOut>(result);
      expect(out).toMatchObject({ model: id, voice });
      if (file) expect(out.file_path).toMatch(file);
      if (typeof note === 'string') expect(textOf(result)).toContain(note);
      else if (note) expect(textOf(result)).toMatch(note);
      else expect(textOf(result)).not.toMatch(/No voice given|replaces/);
    });
  }

  it('uses the first listed model with a valid voice when no model is given', async () => {
    const result = await speak(backend.conn, { text: unique('default') });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await onlySent()).toMatchObject({ provider: 'openai', model: 'tts-1', voice: 'alloy' });
    expect(structuredOf<SpeechOut>(result).model).toBe('openai/tts-1/alloy');
  });

  it('uses GATEWAY_SPEECH_MODEL as the default, with a voice on top', async () => {
    const other = await connectInMemory({
      ...backend.env,
      GATEWAY_SPEECH_MODEL: 'selfhosted-tts/kokoro/bf_emma',
    });
    try {
      const first = await speak(other, { text: unique('a') });
      expect(structuredOf<SpeechOut>(first).model).toBe('selfhosted-tts/kokoro/bf_emma');
      await speak(other, { text: unique('b'), voice: 'af_sky' });
      expect((await speechSent(backend)).map((s) => `${s.model}/${s.voice}`)).toEqual([
        'kokoro/bf_emma',
        'kokoro/af_sky',
      ]);
    } finally {
      await other.close();
    }
  });

  for (const { format, mime, magic } of HONOURED_FORMATS) {
    it(`saves ${format} from a provider that honours the format, with its extension and media type`, async () => {
      const result = await speak(backend.conn, {
        text: unique(format),
        model: 'selfhosted-tts/kokoro',
        format,
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const sent = await onlySent();
      expect(sent.format).toBe(format);
      const out = structuredOf<SpeechOut>(result);
      expect(out).toMatchObject({
        mime_type: mime,
        format,
        requested_format: format,
      });
      expect(out.file_path).toMatch(new RegExp(`\\.${format}$`));
      expect(textOf(result)).not.toMatch(/Asked for/);
      const bytes = saved(out);
      expect(bytes.equals(audioAnswered(backend, sent, format))).toBe(true);
      if (magic) expect(bytes.subarray(0, 4).toString('latin1')).toBe(magic);
    });
  }

  it('says when the gateway delivered another format than the one asked for', async () => {
    const result = await speak(backend.conn, {
      text: unique('wav'),
      model: 'openai/tts-1',
      voice: 'nova',
      format: 'wav',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ mime_type: 'audio/mpeg', format: 'mp3', requested_format: 'wav' });
    expect(out.file_path).toMatch(/\.mp3$/);
    expect(saved(out).equals(audioAnswered(backend, await onlySent(), 'mp3'))).toBe(true);
    expect(textOf(result)).toContain(
      'Asked for wav, but the gateway sent mp3: saved as .mp3; no wav was delivered.',
    );
  });

  it('refuses chat, transcription and unknown models and voices as ids before anything is sent', async () => {
    const before = outputFiles(backend.conn).length;
    for (const { args, head, hint } of REFUSED) {
      const result = await speak(backend.conn, { text: unique('refused'), ...args });
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
      if (hint) expect(message).toContain(hint);
    }
    expect(await billableRequests(backend)).toEqual([]);
    expect(outputFiles(backend.conn)).toHaveLength(before);
  });

  it('refuses a wrong GATEWAY_SPEECH_MODEL and says where it came from', async () => {
    const other = await connectInMemory({ ...backend.env, GATEWAY_SPEECH_MODEL: 'openai/whisper-1' });
    try {
      const result = await speak(other, { text: unique('x') });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('openai/whisper-1 (from GATEWAY_SPEECH_MODEL) is not a speech model');
      expect(await billableRequests(backend)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('returns small audio inline only when asked', async () => {
    const plain = await speak(backend.conn, { text: unique('file only'), model: 'openai/tts-1/alloy' });
    expect(plain.content.some((c) => c.type === 'audio')).toBe(false);
    const small = await speak(backend.conn, {
      text: unique('inline me'),
      model: 'openai/tts-1/alloy',
      return_audio: true,
    });
    const audio = small.content.find((c) => c.type === 'audio') as { data: string; mimeType: string };
    expect(audio.mimeType).toBe('audio/mpeg');
    const out = structuredOf<SpeechOut>(small);
    expect(Buffer.from(audio.data, 'base64').equals(readFileSync(out.file_path))).toBe(true);
  });

  it('bounds the text length with a clear message, and sends nothing it refuses', async () => {
    for (const [text, pattern] of [
      ['x'.repeat(4097), /at most 4096 characters/],
      ['   ', /text must not be empty/],
    ] as const) {
      const result = await speak(backend.conn, { text, model: 'openai/tts-1/alloy' });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(pattern);
    }
    const longest = await speak(backend.conn, { text: 'x'.repeat(4096), model: 'openai/tts-1/alloy' });
    expect(longest.isError, textOf(longest)).toBeFalsy();
    expect((await speak(backend.conn, { text: 'x', voice: 'a/b' })).isError).toBe(true);
    expect(await speechSent(backend)).toHaveLength(1);
  });

  describe('checks where it saves before the billed call', () => {
    async function speakInto(cwd: string, env: Record<string, string> = {}) {
      const conn = await connectInMemory({ ...backend.env, CWD: cwd, ...env });
      try {
        return await speak(conn, { text: unique('nowhere'), model: 'openai/tts-1', voice: 'alloy' });
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
      expect(await speechSent(backend)).toEqual([]);
    });

    it('sends nothing when the output directory leads out of the working directory', async () => {
      const cwd = tempDir('gtm-speech-link-');
      symlinkSync(tempDir('gtm-speech-elsewhere-'), join(cwd, 'gateway-output'));
      const result = await speakInto(cwd);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/leads outside the working directory .* Nothing was sent\./);
      expect(await speechSent(backend)).toEqual([]);
    });

    it('sends nothing when the output directory cannot be created', async () => {
      const cwd = tempDir('gtm-speech-deep-');
      writeFileSync(join(cwd, 'blocked'), 'a file where a directory should be');
      const result = await speakInto(cwd, { GATEWAY_OUTPUT_DIR: join(cwd, 'blocked', 'out') });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/cannot take new files \(it is not a directory, ENOTDIR\)/);
      expect(await speechSent(backend)).toEqual([]);
    });
  });

  it('list_models lists provider/model speech models and says how voices are given', async () => {
    const result = await backend.conn.client.callTool({
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
      '\nVoices: openai — alloy, ash, ballad, coral, echo, fable, nova, onyx, sage, shimmer; cedar, marin, ' +
        'verse with gpt-4o-mini-tts only (default alloy); selfhosted-tts — its own voice names (default: its own). ' +
        'A voice alone works on openai: openai/<voice> is that voice on its default model gpt-4o-mini-tts.',
    );
    const out = structuredOf<{ models: { id: string }[]; defaults: Record<string, string> }>(result);
    expect(out.models.map((m) => m.id)).toEqual(SPEECH_MODELS.split(', '));
    expect(out.defaults.speech).toBe('openai/tts-1');
    expect(await billableRequests(backend)).toEqual([]);
  });

  it('doctor (the built CLI) names the default speech model and the id it sends', async () => {
    const speechLine = async (env: Record<string, string>) => {
      const run = await runCli(['doctor'], { ...backend.env, CWD: tempDir('gtm-doctor-'), ...env });
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
    expect(await speechSent(backend)).toEqual([]);
  });
});

describe('audio_speech on 9router only', () => {
  const gw = useRealGateway();
  const speechSentHere = async () => (await gw.upstream()).filter((e) => e.path.endsWith('/audio/speech'));

  it('never tells openai the format: 9router drops it', async () => {
    const result = await speak(gw.conn, {
      text: unique('wav'),
      model: 'openai/tts-1',
      voice: 'alloy',
      format: 'wav',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const sent = await speechSentHere();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).not.toHaveProperty('response_format');
  });

  it('trusts the audio over a label: mp3 bytes the gateway calls audio/wav are saved as .mp3', async () => {
    // 9router labels self-hosted audio with the format asked for, whatever the server sent.
    const text = `${unique('relabelled')} answers-mp3`;
    const result = await speak(gw.conn, {
      text,
      model: 'selfhosted-tts/kokoro',
      voice: 'af_sky',
      format: 'wav',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const sent = await speechSentHere();
    expect(sent.map((e) => e.body)).toEqual([
      expect.objectContaining({ response_format: 'wav', voice: 'af_sky' }),
    ]);
    const out = structuredOf<SpeechOut>(result);
    expect(out).toMatchObject({ mime_type: 'audio/mpeg', format: 'mp3', requested_format: 'wav' });
    expect(out.file_path).toMatch(/speech-af-sky-[\d-]+\.mp3$/);
    expect(readFileSync(out.file_path).toString('latin1')).toBe(
      `ID3\x04\x00\x00\x00\x00\x00\x00SPEECH model=kokoro voice=af_sky text=${text}`,
    );
    expect(textOf(result)).toContain(
      'Asked for wav, but the gateway sent mp3: saved as .mp3; no wav was delivered.',
    );
  });

  it('reports an upstream failure (502 from the gateway) and saves nothing', async () => {
    const before = outputFiles(gw.conn).length;
    const result = await speak(gw.conn, {
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
    const sent = await speechSentHere();
    expect(sent.map((e) => [e.status, (e.body as { voice?: string }).voice])).toEqual([[500, 'nova']]);
    expect(outputFiles(gw.conn)).toHaveLength(before);
  });
});
