// `provider/voice` speech ids against the reference service, which reads them as 9router does:
// `openai/alloy` is voice alloy on openai's default model (sent as it is), a listed openai model
// stays a model, selfhosted-tts reads two parts as a model, and what is neither is refused in a
// sentence that lists what is allowed.
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import {
  type Connected,
  connectInMemory,
  runCli,
  structuredOf,
  tempDir,
  textOf,
} from '../../harness/harness.js';

let outputDir: string;

const gw = useGateway({
  env: () => {
    outputDir = join(tempDir('gtm-speech-voice-'), 'out');
    return { GATEWAY_OUTPUT_DIR: outputDir };
  },
});

const SPEECH_MODELS = 'openai/tts-1, openai/tts-1-hd, openai/gpt-4o-mini-tts, selfhosted-tts/kokoro';
const VOICE_ALONE =
  'A voice alone works on openai: openai/<voice> is that voice on its default model gpt-4o-mini-tts.';

function speak(args: Record<string, unknown>, conn: Connected = gw.conn) {
  return conn.client.callTool({
    name: 'audio_speech',
    // The same text every time: the duplicate guard is not the point here (test/ledger).
    arguments: { text: 'Voice alone', allow_duplicate: true, ...args },
  }) as Promise<CallToolResult>;
}

function sentModels(): string[] {
  return gw.service.requests
    .filter((r) => r.route === 'speech')
    .map((r) => (r.body as { model: string }).model);
}

function connectWith(env: Record<string, string>) {
  return connectInMemory({
    GATEWAY_BASE_URL: gw.service.url,
    GATEWAY_API_KEY: gw.service.apiKey,
    GATEWAY_OUTPUT_DIR: outputDir,
    ...env,
  });
}

describe('audio_speech takes provider/voice as the gateway reads it', () => {
  it('sends openai/alloy as it is and names the model and voice it plays on', async () => {
    const result = await speak({ model: 'openai/alloy' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sentModels()).toEqual(['openai/alloy']);
    expect(structuredOf(result)).toMatchObject({ model: 'openai/alloy', voice: 'alloy' });
    expect(textOf(result)).toContain(
      "openai/alloy is voice alloy on openai's default speech model, gpt-4o-mini-tts.",
    );
  });

  it('keeps listed models models, and lets `voice` replace the voice of provider/voice', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ model: 'openai/tts-1' }, 'openai/tts-1/alloy', 'alloy'],
      [{ model: 'openai/gpt-4o-mini-tts' }, 'openai/gpt-4o-mini-tts/alloy', 'alloy'],
      [{ model: 'openai/marin' }, 'openai/marin', 'marin'],
      [{ model: 'openai/alloy', voice: 'nova' }, 'openai/nova', 'nova'],
      [{ model: 'openai/alloy', voice: 'alloy' }, 'openai/alloy', 'alloy'],
    ];
    for (const [args, sent, voice] of cases) {
      const result = await speak(args);
      expect(result.isError, `${JSON.stringify(args)}: ${textOf(result)}`).toBeFalsy();
      expect(sentModels().at(-1)).toBe(sent);
      expect(structuredOf(result)).toMatchObject({ model: sent, voice });
    }
    expect(textOf(await speak({ model: 'openai/alloy', voice: 'echo' }))).toContain(
      'The voice echo replaces alloy from the model id.',
    );
  });

  it('takes GATEWAY_SPEECH_MODEL=openai/alloy, with `voice` on top', async () => {
    const conn = await connectWith({ GATEWAY_SPEECH_MODEL: 'openai/alloy' });
    try {
      expect(structuredOf(await speak({}, conn))).toMatchObject({ model: 'openai/alloy', voice: 'alloy' });
      expect(structuredOf(await speak({ voice: 'shimmer' }, conn))).toMatchObject({
        model: 'openai/shimmer',
        voice: 'shimmer',
      });
      expect(sentModels()).toEqual(['openai/alloy', 'openai/shimmer']);
    } finally {
      await conn.close();
    }
  });

  it('sends provider/voice as it is when the gateway has no speech list', async () => {
    gw.service.setModelList('tts', null);
    const result = await speak({ model: 'openai/alloy' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sentModels()).toEqual(['openai/alloy']);
  });
});

describe('audio_speech refuses what is neither a listed model nor a voice alone', () => {
  const refusals: [Record<string, unknown>, string][] = [
    [
      { model: 'openai/bogus' },
      'openai/bogus is not a speech model on this gateway (not in /v1/models/tts), so nothing was sent. ' +
        "bogus is neither a listed openai model nor a voice of openai's default model gpt-4o-mini-tts.",
    ],
    [
      { model: 'openai/alloy', voice: 'bogus' },
      'openai/alloy with voice bogus is not a speech model on this gateway (not in /v1/models/tts), so nothing ' +
        "was sent. bogus is not a voice of openai's default model gpt-4o-mini-tts.",
    ],
    [
      { model: 'selfhosted-tts/alloy' },
      'selfhosted-tts/alloy is not a speech model on this gateway (not in /v1/models/tts), so nothing was sent. ' +
        'alloy is a voice, not a model: give it as `voice` with one of these models, or as openai/alloy.',
    ],
    [
      { model: 'nobody/alloy' },
      'nobody/alloy is not a speech model on this gateway (not in /v1/models/tts), so nothing was sent. ' +
        'alloy is a voice, not a model: give it as `voice` with one of these models, or as openai/alloy.',
    ],
  ];

  it('says why, lists the models and the provider/voice form, and sends nothing', async () => {
    for (const [args, head] of refusals) {
      const result = await speak(args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toBe(
        `${head} Speech models: ${SPEECH_MODELS}. Pass one as \`model\` and the voice as \`voice\`, or a full ` +
          `provider/model/voice id. ${VOICE_ALONE} Voices: openai — alloy, ash, ballad, coral, echo, fable, ` +
          'nova, onyx, sage, shimmer; cedar, marin, verse with gpt-4o-mini-tts only (default alloy); ' +
          'selfhosted-tts — its own voice names (default: its own).',
      );
    }
    expect(gw.service.counters.speech ?? 0).toBe(0);
  });

  it('refuses provider/voice for a provider the gateway does not list, without offering it', async () => {
    gw.service.setModelList('tts', [{ id: 'selfhosted-tts/kokoro' }]);
    const result = await speak({ model: 'openai/alloy' });
    expect(result.isError).toBe(true);
    const message = textOf(result);
    expect(message).toContain('openai/alloy is not a speech model on this gateway');
    expect(message).toContain('Speech models: selfhosted-tts/kokoro.');
    expect(message).not.toContain('A voice alone works');
    expect(gw.service.counters.speech ?? 0).toBe(0);
  });
});

describe('doctor and GATEWAY_SPEECH_MODEL=provider/voice', () => {
  async function speechLine(model: string): Promise<{ line: string; stdout: string }> {
    const run = await runCli(['doctor'], {
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      CWD: tempDir('gtm-doctor-'),
      GATEWAY_SPEECH_MODEL: model,
    });
    const line = run.stdout.split('\n').find((l) => /Speech \(audio_speech\)/.test(l)) ?? run.stdout;
    return { line, stdout: run.stdout };
  }

  it('describes openai/alloy as the voice on the default model', async () => {
    expect((await speechLine('openai/alloy')).line).toBe(
      "✓ Speech (audio_speech): openai/alloy, voice alloy on openai's default model gpt-4o-mini-tts (from GATEWAY_SPEECH_MODEL)",
    );
  });

  it('warns about a voice openai does not have, and names the forms that work', async () => {
    const { line, stdout } = await speechLine('openai/bogus');
    expect(line).toBe(
      '! Speech (audio_speech): openai/bogus (from GATEWAY_SPEECH_MODEL), but /v1/models/tts does not list it',
    );
    expect(stdout).toContain(
      'audio_speech refuses it without `model`: set GATEWAY_SPEECH_MODEL to a listed provider/model, ' +
        'optionally with /voice, or to openai/<voice> (list_models speech).',
    );
  });
});
