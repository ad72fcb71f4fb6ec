// 9router's own speech shorthand against 9router 0.5.69: `openai/alloy` (provider/voice) is voice
// alloy on openai's default model, gpt-4o-mini-tts. What matters is what reached the fake OpenAI
// speech upstream (model and voice in its body) and that the saved file is the bytes it answered
// (`SPEECH model=<m> voice=<v> text=<t>` after mp3's magic).
import { readFileSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  type Connected,
  connectInMemory,
  runCli,
  structuredOf,
  tempDir,
  textOf,
} from '../../harness/harness.js';
import { unique, useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

const MP3_MAGIC = 'ID3\x04\x00\x00\x00\x00\x00\x00';

interface SpeechOut {
  file_path: string;
  bytes: number;
  model: string;
  voice: string | null;
}

function speak(args: Record<string, unknown>, conn: Connected = gw.conn) {
  return conn.client.callTool({ name: 'audio_speech', arguments: args }) as Promise<CallToolResult>;
}

/** Model and voice of the one speech request that reached api.openai.com during the test. */
async function openAiSpeech(): Promise<{ model: unknown; voice: unknown }> {
  const sent = (await gw.upstream('api.openai.com')).filter((e) => e.path.endsWith('/audio/speech'));
  expect(sent).toHaveLength(1);
  const body = sent[0]!.body as Record<string, unknown>;
  return { model: body.model, voice: body.voice };
}

/** The call succeeded, and its file holds exactly what the fake upstream answered. */
function expectSaved(result: CallToolResult, text: string, model: string, voice: string): SpeechOut {
  expect(result.isError, textOf(result)).toBeFalsy();
  const out = structuredOf<SpeechOut>(result);
  const bytes = readFileSync(out.file_path);
  expect(bytes.length).toBe(out.bytes);
  expect(bytes.toString('latin1')).toBe(`${MP3_MAGIC}SPEECH model=${model} voice=${voice} text=${text}`);
  return out;
}

describe('provider/voice speech ids against 9router', () => {
  it("plays openai/alloy as voice alloy on openai's default model, and says which", async () => {
    const text = unique('provider-voice');
    const result = await speak({ text, model: 'openai/alloy' });
    expect(await openAiSpeech()).toEqual({ model: 'gpt-4o-mini-tts', voice: 'alloy' });
    const out = expectSaved(result, text, 'gpt-4o-mini-tts', 'alloy');
    expect(out).toMatchObject({ model: 'openai/alloy', voice: 'alloy' });
    expect(out.file_path).toMatch(/speech-alloy-[\d-]+\.mp3$/);
    expect(textOf(result)).toContain(
      "openai/alloy is voice alloy on openai's default speech model, gpt-4o-mini-tts.",
    );
  });

  it('takes a voice only the default model has', async () => {
    const verseText = unique('verse');
    expectSaved(
      await speak({ text: verseText, model: 'openai/verse' }),
      verseText,
      'gpt-4o-mini-tts',
      'verse',
    );
    expect(await openAiSpeech()).toEqual({ model: 'gpt-4o-mini-tts', voice: 'verse' });
  });

  it('sends the replacing voice as provider/voice', async () => {
    const text = unique('replaced');
    const result = await speak({ text, model: 'openai/alloy', voice: 'nova' });
    expect(await openAiSpeech()).toEqual({ model: 'gpt-4o-mini-tts', voice: 'nova' });
    expect(expectSaved(result, text, 'gpt-4o-mini-tts', 'nova')).toMatchObject({
      model: 'openai/nova',
      voice: 'nova',
    });
    expect(textOf(result)).toContain('The voice nova replaces alloy from the model id.');
  });

  it('keeps a listed openai model a model: openai/tts-1 gets the default voice added', async () => {
    const text = unique('model');
    const result = await speak({ text, model: 'openai/tts-1' });
    expect(await openAiSpeech()).toEqual({ model: 'tts-1', voice: 'alloy' });
    expect(expectSaved(result, text, 'tts-1', 'alloy').model).toBe('openai/tts-1/alloy');
  });

  it('takes GATEWAY_SPEECH_MODEL=openai/alloy as the default, with `voice` on top', async () => {
    const conn = await connectInMemory({ ...gw.env, GATEWAY_SPEECH_MODEL: 'openai/alloy' });
    try {
      const text = unique('setting');
      expectSaved(await speak({ text }, conn), text, 'gpt-4o-mini-tts', 'alloy');
      expect(await openAiSpeech()).toEqual({ model: 'gpt-4o-mini-tts', voice: 'alloy' });
    } finally {
      await conn.close();
    }
  });

  it('refuses a voice openai does not have, and a provider that reads two parts as a model', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { model: 'openai/bogus' },
        "bogus is neither a listed openai model nor a voice of openai's default model gpt-4o-mini-tts.",
      ],
      [
        { model: 'openai/alloy', voice: 'bogus' },
        "bogus is not a voice of openai's default model gpt-4o-mini-tts.",
      ],
      [
        { model: 'selfhosted-tts/alloy' },
        'alloy is a voice, not a model: give it as `voice` with one of these models, or as openai/alloy.',
      ],
      [{ model: 'nobody/alloy' }, 'or as openai/alloy.'],
    ];
    for (const [args, hint] of cases) {
      const result = await speak({ text: unique('refused'), ...args });
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toContain('is not a speech model on this gateway');
      expect(textOf(result)).toContain(hint);
      expect(textOf(result)).toContain(
        'A voice alone works on openai: openai/<voice> is that voice on its default model gpt-4o-mini-tts.',
      );
    }
    expect(await gw.upstream()).toEqual([]);
  });

  it('doctor describes GATEWAY_SPEECH_MODEL=openai/alloy as the voice on the default model', async () => {
    const run = await runCli(['doctor'], {
      ...gw.env,
      CWD: tempDir('gtm-doctor-'),
      GATEWAY_SPEECH_MODEL: 'openai/alloy',
    });
    const line = run.stdout.split('\n').find((l) => /Speech \(audio_speech\)/.test(l));
    expect(line, run.stdout + run.stderr).toBe(
      "✓ Speech (audio_speech): openai/alloy, voice alloy on openai's default model gpt-4o-mini-tts (from GATEWAY_SPEECH_MODEL)",
    );
    // doctor lists models (9router then asks its provider nodes for theirs), but speaks nothing.
    expect((await gw.upstream()).filter((e) => e.path.endsWith('/audio/speech'))).toEqual([]);
  });
});
