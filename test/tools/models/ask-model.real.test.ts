// ask_model on both gateways: the cases both can produce run on each (describe.each): a chat
// provider node, a Responses provider node, the default model, a model that answers nothing, and
// arguments refused before anything is sent. How 9router passes each call on to its provider is at
// the end; what only the reference service makes (faults, streams cut short, lists on demand) is in
// ask-model.test.ts. Both echo the question; the reference service puts the instructions first.
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BACKENDS, type Backend, type BackendName, billableRequests } from '../../harness/backends.js';
import { structuredOf, textOf } from '../../harness/harness.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';

interface Answer {
  text: string;
  model: string;
  usage: { input_tokens: number | null; output_tokens: number | null; total_tokens: number | null } | null;
}

async function askOn(backend: Backend | { conn: Backend['conn'] }, args: Record<string, unknown>) {
  const progress: Progress[] = [];
  const result = await backend.conn.client.callTool(
    { name: 'ask_model', arguments: args },
    CallToolResultSchema,
    {
      onprogress: (p) => progress.push(p),
    },
  );
  return { result, out: structuredOf<Answer>(result), progress };
}

/** What each gateway lists first among plain chat models, and how to make its model answer nothing. */
const GATEWAY: Record<BackendName, { firstChatModel: string; silence: string }> = {
  'the reference service': {
    firstChatModel: 'openai/gpt-4o-mini',
    silence: 'EMPTY_STREAM and EMPTY_NONSTREAM',
  },
  // /v1/models lists xAI's catalogue first (no combos are configured for chat).
  '9router': { firstChatModel: 'xai/grok-4.6', silence: 'empty-answer' },
};

/** The answer of the backend's echo model. */
function echoed(backend: Backend, prompt: string, instructions?: string): string {
  return backend.reference && instructions ? `[${instructions}] Echo: ${prompt}` : `Echo: ${prompt}`;
}

/** The provider behind 9router a model call reached, by its address. */
function chatProvider(entry: JournalEntry): string {
  const node = /^\/(fakechat|fakeresp)\//.exec(entry.path)?.[1];
  if (node) return node;
  return { 'api.openai.com': 'openai', 'api.x.ai': 'xai', 'api.groq.com': 'groq' }[entry.host] ?? entry.host;
}

/** The model calls of this test: the model asked (as the tools name it) and whether it streamed. */
async function modelCalls(backend: Backend): Promise<{ model: string; stream: unknown }[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => r.route === 'responses')
      .map((r) => {
        const body = r.body as { model: string; stream?: unknown };
        return { model: body.model, stream: body.stream };
      });
  }
  // The gateway also asks its provider nodes for their model lists: left out.
  const journal = ((await backend.nineRouter?.upstream()) ?? []).filter((e) => !e.path.endsWith('/models'));
  return journal.map((e) => {
    const body = e.body as { model: string; stream?: unknown };
    return { model: `${chatProvider(e)}/${body.model}`, stream: body.stream };
  });
}

describe.each(BACKENDS)('ask_model on %s', (name, use) => {
  const backend = use();
  const gateway = GATEWAY[name];
  const ask = (args: Record<string, unknown>) => askOn(backend, args);

  it('asks a chat-translated provider node: its text, the asked model, no usage, and progress as it streams', async () => {
    const prompt = unique('Say hello');
    const { result, out, progress } = await ask({
      prompt,
      model: 'fakechat/small',
      instructions: 'Be brief.',
      max_output_tokens: 300,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    // The chat-translated stream ends with a response.completed that has no output, usage or
    // model: the text comes from the deltas, the model is the one asked.
    const text = echoed(backend, prompt, 'Be brief.');
    expect(out).toEqual({ text, model: 'fakechat/small', usage: null });
    expect(textOf(result)).toBe(`${text}\n\n— fakechat/small`);
    expect(progress[0]).toMatchObject({ progress: 0, message: 'asking fakechat/small' });
    const streamed = progress.slice(1);
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed[0]?.message).toMatch(/^\d+ characters received from fakechat\/small$/);
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(values.at(-1)).toBeLessThanOrEqual(text.length);
    expect(await modelCalls(backend)).toEqual([{ model: 'fakechat/small', stream: true }]);
  });

  it('asks a Responses provider node: its usage as reported, and the model as an id to ask again', async () => {
    const prompt = unique('Explain');
    const { result, out, progress } = await ask({
      prompt,
      model: 'fakeresp/big',
      instructions: 'Answer in one line.',
      max_output_tokens: 500,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toMatchObject({
      text: echoed(backend, prompt, 'Answer in one line.'),
      model: 'fakeresp/big',
    });
    const usage = out.usage as NonNullable<Answer['usage']>;
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe((usage.input_tokens ?? 0) + (usage.output_tokens ?? 0));
    expect(textOf(result)).toMatch(
      new RegExp(`— fakeresp/big · ${usage.input_tokens} input \\+ ${usage.output_tokens} output tokens$`),
    );
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(await modelCalls(backend)).toEqual([{ model: 'fakeresp/big', stream: true }]);
  });

  it('uses the first plain chat model the gateway lists when none is given', async () => {
    const prompt = unique('Default');
    const { result, out, progress } = await ask({ prompt });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toMatchObject({ text: echoed(backend, prompt), model: gateway.firstChatModel });
    expect(textOf(result)).toMatch(new RegExp(`— ${gateway.firstChatModel.replace(/[./]/g, '\\$&')}$`));
    expect(progress[0]).toMatchObject({ progress: 0, message: `asking ${gateway.firstChatModel}` });
    expect(await modelCalls(backend)).toEqual([{ model: gateway.firstChatModel, stream: true }]);
  });

  for (const model of ['fakechat/small', 'openai/gpt-4o-mini', 'fakeresp/big']) {
    it(`says ${model} returned no text, after one try without streaming`, async () => {
      const { result } = await ask({ prompt: `${unique('Nothing')} ${gateway.silence}`, model });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `${model} returned no text (streamed and non-streamed). Retry, or ask another model (see list_models).`,
      );
      expect((await modelCalls(backend)).map((c) => c.stream)).toEqual([true, false]);
    });
  }

  it('rejects bad arguments naming the field, and sends nothing', async () => {
    for (const [args, field] of [
      [{}, 'prompt'],
      [{ prompt: '   ' }, 'prompt'],
      [{ prompt: 'x', reasoning_effort: 'extreme' }, 'reasoning_effort'],
      [{ prompt: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
      [{ prompt: 'x', model: 'has spaces in it' }, 'model'],
    ] as const) {
      const { result } = await ask(args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toContain(field);
    }
    expect(await billableRequests(backend)).toEqual([]);
  });
});

describe('ask_model on 9router only', () => {
  const gw = useRealGateway();
  const ask = (args: Record<string, unknown>) => askOn(gw, args);
  /** The model calls that reached an upstream (the gateway also asks provider nodes for their lists). */
  const modelCallsHere = async () => (await gw.upstream()).filter((e) => !e.path.endsWith('/models'));

  it('turns the Responses call into a chat completion for a chat provider node', async () => {
    const prompt = unique('Say hello');
    const { result } = await ask({
      prompt,
      model: 'fakechat/small',
      instructions: 'Be brief.',
      max_output_tokens: 300,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const calls = await modelCallsHere();
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
    const calls = await modelCallsHere();
    expect(calls.map((e) => `${e.host} ${e.path}`)).toEqual(['api.openai.com /v1/chat/completions']);
    expect(calls[0]?.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, max_tokens: 64 });
  });

  it('passes a Responses call on to its node, dropping reasoning for a model it does not know', async () => {
    const prompt = unique('Explain');
    const { result, out } = await ask({
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
    const calls = await modelCallsHere();
    expect(calls.map((e) => `${e.host} ${e.path}`)).toEqual(['local /fakeresp/v1/responses']);
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
    const [call] = await modelCallsHere();
    expect(call?.body).toMatchObject({ model: 'o3-mini', reasoning_effort: 'low' });
  });

  it('reports an upstream failure with the model and sends the billed call once', async () => {
    const { result } = await ask({ prompt: `${unique('Broken')} fault-500`, model: 'fakeresp/big' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Ask model failed: /);
    expect(textOf(result)).toMatch(/fakeresp|big/);
    expect(await modelCallsHere()).toHaveLength(1);
  });
});
