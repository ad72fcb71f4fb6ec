// ask_model on the reference service alone: what only it can do on demand (chat lists, faults, a
// stream that fails, comes back empty or is cut) and the request the gateway itself receives. The
// cases 9router produces too run on both gateways in ask-model.real.test.ts.
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

describe('ask_model on the reference service only', () => {
  it('sends the Responses request as asked: input, instructions, limits, reasoning, streaming', async () => {
    const prompt = 'Summarise the plot of a very long novel about a whale and a captain in one line';
    const result = await ask({
      prompt,
      instructions: 'be brief',
      max_output_tokens: 200,
      reasoning_effort: 'low',
    });
    expect(result.isError).toBeFalsy();
    expect(structuredOf<Answer>(result).text).toBe(`[be brief] Echo: ${prompt}`);
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
      /^Ask model failed: The model failed mid-answer after \d+ characters: upstream stream failed\. Retry, or choose another model\. It may have been billed: the gateway may have passed it to the provider before failing, so it was not sent again\. Calling again is your choice, and may be billed again\.$/,
    );
  });

  it('asks once more without streaming when the stream completes empty', async () => {
    // A chat provider node: 9router answers its `stream: false` with one JSON object.
    const result = await ask({ prompt: 'EMPTY_STREAM then fine', model: 'fakechat/echo' });
    expect(result.isError).toBeFalsy();
    expect(structuredOf<Answer>(result).text).toBe('Echo: EMPTY_STREAM then fine');
    expect(sentBodies().map((b) => b.stream)).toEqual([true, false]);
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
