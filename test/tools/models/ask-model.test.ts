import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, structuredOf, textOf } from '../../harness/harness.js';

interface Answer {
  text: string;
  model: string;
  usage: { input_tokens: number | null; output_tokens: number | null; total_tokens: number | null } | null;
}

const gw = useGateway({ listTools: true });

const sentBodies = () =>
  gw.service.requests.filter((r) => r.route === 'responses').map((r) => r.body as Record<string, unknown>);

function ask(args: Record<string, unknown>, onprogress?: (p: Progress) => void, signal?: AbortSignal) {
  return gw.conn.client.callTool({ name: 'ask_model', arguments: args }, CallToolResultSchema, {
    onprogress,
    signal,
  });
}

describe('ask_model', () => {
  it('streams the answer with progress and returns text and model', async () => {
    const progress: Progress[] = [];
    const prompt = 'Summarise the plot of a very long novel about a whale and a captain in one line';
    const result = await ask(
      { prompt, instructions: 'be brief', max_output_tokens: 200, reasoning_effort: 'low' },
      (p) => progress.push(p),
    );
    expect(result.isError).toBeFalsy();
    const out = structuredOf<Answer>(result);
    expect(out.text).toBe(`[be brief] Echo: ${prompt}`);
    // The first plain model: the gateway lists the combo first, but a combo is not the default.
    expect(out.model).toBe('openai/gpt-4o-mini');
    // 9router translates a chat provider's stream and reports no usage for it.
    expect(out.usage).toBeNull();
    expect(textOf(result)).toMatch(/^\[be brief\] Echo: Summarise/);
    expect(textOf(result)).toMatch(/— openai\/gpt-4o-mini$/);

    expect(sentBodies()).toEqual([
      {
        model: 'openai/gpt-4o-mini',
        input: prompt,
        instructions: 'be brief',
        max_output_tokens: 200,
        reasoning: { effort: 'low' },
        stream: true,
      },
    ]);
    expect(progress[0]).toMatchObject({ progress: 0, message: 'asking openai/gpt-4o-mini' });
    const streamed = progress.slice(1);
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed[0]?.message).toMatch(/^\d+ characters received from openai\/gpt-4o-mini$/);
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(values.at(-1)).toBeLessThanOrEqual(out.text.length);
  });

  it('returns the token usage a Responses API provider reports', async () => {
    const result = await ask({ prompt: 'count my tokens', model: 'fakeresp/echo' });
    expect(result.isError).toBeFalsy();
    const out = structuredOf<Answer>(result);
    expect(out.text).toBe('Echo: count my tokens');
    expect(out.usage?.output_tokens).toBeGreaterThan(0);
    expect(out.usage?.total_tokens).toBe((out.usage?.input_tokens ?? 0) + (out.usage?.output_tokens ?? 0));
    expect(textOf(result)).toMatch(/— fakeresp\/echo · \d+ input \+ \d+ output tokens$/);
  });

  it('uses the model argument, then GATEWAY_CHAT_MODEL, without listing models', async () => {
    const explicit = await ask({ prompt: 'hi', model: 'anthropic/claude-sonnet-4' });
    expect(structuredOf<Answer>(explicit).model).toBe('anthropic/claude-sonnet-4');
    expect(gw.service.counters.models).toBe(0);

    const configured = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_CHAT_MODEL: 'combo-fast',
    });
    try {
      const result = await configured.client.callTool({ name: 'ask_model', arguments: { prompt: 'hi' } });
      expect(structuredOf<Answer>(result).model).toBe('combo-fast');
      expect(gw.service.counters.models).toBe(0);
    } finally {
      await configured.close();
    }
  });

  it('falls back to a combo when the gateway lists only combos, and says what to set when it lists none', async () => {
    gw.service.setModelList('chat', [{ id: 'combo-fast', owned_by: 'combo' }]);
    const combo = await ask({ prompt: 'hi' });
    expect(structuredOf<Answer>(combo).model).toBe('combo-fast');

    for (const list of [[], null]) {
      gw.service.setModelList('chat', list);
      gw.conn.runtime.service.catalog.clear();
      const none = await ask({ prompt: 'hi' });
      expect(none.isError).toBe(true);
      expect(textOf(none)).toMatch(
        /No chat model.*Pass `model` \(see list_models\) or set GATEWAY_CHAT_MODEL/,
      );
    }
    expect(gw.service.counters.responses).toBe(1);
  });

  it('reports an unknown model with the hint to list models', async () => {
    const result = await ask({ prompt: 'hi', model: 'nobody/nothing' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/404.*No active credentials for provider: nobody.*list_models/);
  });

  it('reports an error event mid-stream with how far the answer got', async () => {
    const result = await ask({ prompt: 'MIDSTREAM_ERROR please' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^Ask model failed: The model failed mid-answer after \d+ characters: upstream stream failed\. Retry, or choose another model\.$/,
    );
  });

  it('asks once more without streaming when the stream completes empty', async () => {
    // A chat provider node: 9router answers its `stream: false` with one JSON object.
    const result = await ask({ prompt: 'EMPTY_STREAM then fine', model: 'fakechat/echo' });
    expect(result.isError).toBeFalsy();
    expect(structuredOf<Answer>(result).text).toBe('Echo: EMPTY_STREAM then fine');
    expect(sentBodies().map((b) => b.stream)).toEqual([true, false]);
  });

  it('fails clearly when both modes come back empty', async () => {
    // openai: 9router answers `stream: false` with an empty event stream; the chat node with an
    // empty JSON answer.
    for (const model of ['openai/gpt-4o-mini', 'fakechat/echo']) {
      const result = await ask({ prompt: 'EMPTY_STREAM and EMPTY_NONSTREAM', model });
      expect(result.isError, model).toBe(true);
      expect(textOf(result)).toMatch(
        new RegExp(`${model.replace('/', '\\/')} returned no text \\(streamed and non-streamed\\)\\. Retry`),
      );
    }
    expect(sentBodies().map((b) => b.stream)).toEqual([true, false, true, false]);
  });

  it('reads a JSON answer to a streaming request, even with a stray data: [DONE]', async () => {
    for (const prompt of ['JSON_ONLY answer', 'JSON_ONLY STRAY_DONE answer']) {
      const result = await ask({ prompt });
      expect(result.isError, prompt).toBeFalsy();
      expect(structuredOf<Answer>(result).text).toBe(`Echo: ${prompt}`);
    }
    expect(sentBodies().map((b) => b.stream)).toEqual([true, true]);
  });

  it('retries a 503 before the stream starts', async () => {
    gw.service.inject('responses', { status: 503 });
    const result = await ask({ prompt: 'after a hiccup' });
    expect(result.isError).toBeFalsy();
    expect(gw.service.counters.responses).toBe(2);
  });

  it('does not ask again after a 503 that says the upstream was reached (it may have billed)', async () => {
    gw.service.inject('responses', {
      status: 503,
      message: '[openai/gpt-4o-mini] [500]: upstream failed',
      headers: { 'retry-after': '1' },
    });
    const result = await ask({ prompt: 'once only' });
    expect(result.isError).toBe(true);
    expect(gw.service.counters.responses).toBe(1);
  });

  it('aborts the upstream stream when the call is cancelled', async () => {
    const controller = new AbortController();
    const call = ask(
      { prompt: 'SLOW_STREAM '.repeat(20) },
      (p) => {
        if (p.progress > 0) controller.abort();
      },
      controller.signal,
    );
    await expect(call).rejects.toThrow();
    const deadline = Date.now() + 5_000;
    while (gw.service.responseStreams.cut === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    // The slow stream takes about 10 s; cut within 5 s means the cancellation reached the service.
    expect(gw.service.responseStreams).toMatchObject({ open: 0, completed: 0, cut: 1 });
  });

  it('rejects bad arguments naming the field, and sends nothing', async () => {
    for (const [args, field] of [
      [{}, 'prompt'],
      [{ prompt: '   ' }, 'prompt'],
      [{ prompt: 'x', reasoning_effort: 'extreme' }, 'reasoning_effort'],
      [{ prompt: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
      [{ prompt: 'x', model: 'has spaces in it' }, 'model'],
    ] as const) {
      const result = await ask(args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toContain(field);
    }
    expect(gw.service.counters.responses).toBe(0);
  });

  it('tells to set the key on 401, without echoing it', async () => {
    const wrong = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: 'sk-wrong-key-0123456789',
    });
    try {
      const result = await wrong.client.callTool({ name: 'ask_model', arguments: { prompt: 'hi' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/401.*Set GATEWAY_API_KEY/);
      expect(textOf(result)).not.toContain('sk-wrong-key-0123456789');
    } finally {
      await wrong.close();
    }
  });
});
