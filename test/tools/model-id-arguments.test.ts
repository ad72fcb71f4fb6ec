import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/config/config.js';
import { type Connected, connectInMemory, textOf } from '../harness/harness.js';

// Every model or provider id a tool takes, or a setting names, is checked against one pattern;
// each place keeps its own sentence, naming the argument and an id it would take.
describe('a model or provider id that is not one', () => {
  let conn: Connected;
  beforeAll(async () => {
    conn = await connectInMemory({});
  });
  afterAll(async () => {
    await conn.close();
  });

  const spaced = 'openai/gpt 4o';
  const cases: [string, Record<string, unknown>, string][] = [
    ['web_search', { query: 'q', provider: spaced }, 'provider must be an id such as tavily'],
    ['web_search', { query: 'q', provider: 'x'.repeat(101) }, 'provider must be an id such as tavily'],
    [
      'web_fetch',
      { url: 'https://example.com/', provider: spaced },
      'provider must be an id such as jina-reader',
    ],
    [
      'audio_speech',
      { text: 'hello', model: spaced },
      'model must be an id such as openai/tts-1 or openai/tts-1/alloy',
    ],
    [
      'audio_transcribe',
      { url: 'https://example.com/a.mp3', model: ' ' },
      'model must be an id such as groq/whisper-large-v3',
    ],
    [
      'ask_model',
      { prompt: 'hi', model: 'x'.repeat(201) },
      'model must be an id such as openai/gpt-4o-mini (see list_models)',
    ],
    [
      'video_generate',
      { prompt: 'snow', model: spaced },
      'model must be an id such as xai/grok-imagine-video',
    ],
    [
      'video_extend',
      { prompt: 'snow', video: 'job-1', model: 'x'.repeat(201) },
      'model: Too big: expected string to have <=200 characters',
    ],
  ];

  it.each(cases)('%s %o is refused before anything is sent', async (name, args, sentence) => {
    const result = await conn.client.callTool({ name, arguments: args });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`Invalid arguments for ${name}: ${sentence}`);
  });

  it('is refused as a setting, naming the setting', () => {
    const parse = (value: string) => () => parseCommandLine(['--chat-model', value], {}, '/work/project');
    expect(parse(spaced)).toThrow(
      'invalid --chat-model (GATEWAY_CHAT_MODEL): must be a model id such as provider/model (no spaces) (got "openai/gpt 4o")',
    );
    expect(parse('  ')).toThrow('invalid --chat-model (GATEWAY_CHAT_MODEL): must not be empty');
    expect(parse('x'.repeat(201))).toThrow(
      'invalid --chat-model (GATEWAY_CHAT_MODEL): must be at most 200 characters',
    );
    expect(parseCommandLine(['--chat-model', ' openai/gpt-4o '], {}, '/work/project').config.chatModel).toBe(
      'openai/gpt-4o',
    );
  });
});
