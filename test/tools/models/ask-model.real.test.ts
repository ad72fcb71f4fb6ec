import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { structuredOf, textOf } from '../../harness/harness.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

interface Answer {
  text: string;
  model: string;
  usage: { input_tokens: number | null; output_tokens: number | null; total_tokens: number | null } | null;
}

async function ask(args: Record<string, unknown>) {
  const progress: Progress[] = [];
  const result = await gw.conn.client.callTool({ name: 'ask_model', arguments: args }, CallToolResultSchema, {
    onprogress: (p) => progress.push(p),
  });
  return { result, out: structuredOf<Answer>(result), progress };
}

/** The model calls that reached an upstream (the gateway also asks provider nodes for their lists). */
async function modelCalls(): Promise<JournalEntry[]> {
  return (await gw.upstream()).filter((e) => !e.path.endsWith('/models'));
}

describe('ask_model against 9router', () => {
  it('asks a chat-translated provider node: text, the asked model, and no usage (the gateway reports none)', async () => {
    const prompt = unique('Say hello');
    const { result, out, progress } = await ask({
      prompt,
      model: 'fakechat/small',
      instructions: 'Be brief.',
      max_output_tokens: 300,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    // The chat-translated stream ends with a response.completed that has no output, usage or
    // model, and no [DONE]: the text comes from the deltas, the model is the one asked.
    expect(out).toEqual({ text: `Echo: ${prompt}`, model: 'fakechat/small', usage: null });
    expect(textOf(result)).toBe(`Echo: ${prompt}\n\n— fakechat/small`);
    expect(progress[0]).toMatchObject({ progress: 0, message: 'asking fakechat/small' });
    expect(progress.slice(1).length).toBeGreaterThan(0);

    const calls = await modelCalls();
    expect(calls.map((e) => `${e.host} ${e.path}`)).toEqual(['local /fakechat/v1/chat/completions']);
    expect(calls[0]?.body).toEqual({
      model: 'small',
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: prompt }] },
      ],
      max_tokens: 300,
    });
  });

  it('asks OpenAI through the gateway, which turns the Responses call into a chat completion', async () => {
    const prompt = unique('Count');
    const { result, out } = await ask({ prompt, model: 'openai/gpt-4o-mini', max_output_tokens: 64 });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toEqual({ text: `Echo: ${prompt}`, model: 'openai/gpt-4o-mini', usage: null });
    const calls = await modelCalls();
    expect(calls.map((e) => `${e.host} ${e.path}`)).toEqual(['api.openai.com /v1/chat/completions']);
    expect(calls[0]?.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, max_tokens: 64 });
  });

  it('asks a Responses provider node: its usage as reported, and the model as an id to ask again', async () => {
    const prompt = unique('Explain');
    const { result, out, progress } = await ask({
      prompt,
      model: 'fakeresp/big',
      instructions: 'Answer in one line.',
      max_output_tokens: 500,
      reasoning_effort: 'high',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    // The upstream names its own model `big`: reported as the id that reaches it.
    expect(out).toEqual({
      text: `Echo: ${prompt}`,
      model: 'fakeresp/big',
      usage: { input_tokens: 12, output_tokens: 8, total_tokens: 20 },
    });
    expect(textOf(result)).toBe(`Echo: ${prompt}\n\n— fakeresp/big · 12 input + 8 output tokens`);
    expect(progress.map((p) => p.progress)).toEqual(
      [...progress.map((p) => p.progress)].sort((a, b) => a - b),
    );

    const calls = await modelCalls();
    expect(calls.map((e) => `${e.host} ${e.path}`)).toEqual(['local /fakeresp/v1/responses']);
    // The gateway passes the request on, but drops `reasoning` for a model it does not know.
    expect(calls[0]?.body).toEqual({
      model: 'big',
      input: prompt,
      instructions: 'Answer in one line.',
      max_output_tokens: 500,
      stream: true,
    });
  });

  it('gets reasoning_effort to a reasoning model the gateway knows', async () => {
    const { result } = await ask({
      prompt: unique('Think'),
      model: 'openai/o3-mini',
      reasoning_effort: 'low',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [call] = await modelCalls();
    expect(call?.body).toMatchObject({ model: 'o3-mini', reasoning_effort: 'low' });
  });

  it('uses the first plain chat model the gateway lists when none is given', async () => {
    const prompt = unique('Default');
    const { result, out } = await ask({ prompt });
    expect(result.isError, textOf(result)).toBeFalsy();
    // /v1/models lists xAI's catalogue first (no combos are configured for chat).
    expect(out).toMatchObject({ text: `Echo: ${prompt}`, model: 'xai/grok-4.6' });
    const calls = await modelCalls();
    expect(calls.map((e) => `${e.host} ${e.path}`)).toEqual(['api.x.ai /v1/chat/completions']);
  });

  it('reports an upstream failure with the model and sends the billed call once', async () => {
    const { result } = await ask({ prompt: `${unique('Broken')} fault-500`, model: 'fakeresp/big' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Ask model failed: /);
    expect(textOf(result)).toMatch(/fakeresp|big/);
    expect(await modelCalls()).toHaveLength(1);
  });
});

describe('ask_model when the model answers nothing', () => {
  for (const model of ['fakechat/small', 'openai/gpt-4o-mini', 'fakeresp/big']) {
    it(`says ${model} returned no text, after one try without streaming`, async () => {
      const { result } = await ask({ prompt: `${unique('Nothing')} empty-answer`, model });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `${model} returned no text (streamed and non-streamed). Retry, or ask another model (see list_models).`,
      );
      const calls = await modelCalls();
      expect(calls.map((e) => (e.body as { stream?: boolean }).stream)).toEqual([true, false]);
    });
  }
});
