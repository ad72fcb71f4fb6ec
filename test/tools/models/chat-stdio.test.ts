import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Spawned, structuredOf, textOf } from '../../harness/harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

const SECRET = 'sk-chat-stdio-secret-987654321';
let service: ReferenceService;
let spawned: Spawned;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
  spawned = await connectStdio({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: SECRET,
    GATEWAY_LOG_LEVEL: 'debug',
  });
});
afterAll(async () => {
  await spawned.close();
  await service.close();
});

describe('ask_model, list_models and web_fetch prompts in the built server over stdio', () => {
  it('lists the tools with their groups, schemas and annotations', async () => {
    const { tools } = await spawned.client.listTools();
    const ask = tools.find((t) => t.name === 'ask_model');
    const models = tools.find((t) => t.name === 'list_models');
    expect(ask?._meta?.['gateway-tools/required']).toBeUndefined();
    expect(Object.keys(ask?.inputSchema.properties ?? {})).toEqual([
      'prompt',
      'model',
      'instructions',
      'max_output_tokens',
      'reasoning_effort',
    ]);
    expect(Object.keys(ask?.outputSchema?.properties ?? {})).toEqual(['text', 'model', 'usage', 'next']);
    expect(ask?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(models?._meta).toBeUndefined();
    expect(models?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    const fetch = tools.find((t) => t.name === 'web_fetch');
    expect(fetch?.inputSchema.properties).toHaveProperty('prompt');
  });

  it('streams an answer with progress notifications', async () => {
    const progress: Progress[] = [];
    const result = await spawned.client.callTool(
      { name: 'ask_model', arguments: { prompt: 'tell me something over stdio please' } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push(p) },
    );
    expect(result.isError).toBeFalsy();
    expect(structuredOf<{ text: string }>(result).text).toBe('Echo: tell me something over stdio please');
    expect(progress.some((p) => /characters received/.test(p.message ?? ''))).toBe(true);
  });

  it('cancels a slow answer upstream', async () => {
    service.resetCounters();
    const controller = new AbortController();
    const call = spawned.client.callTool(
      { name: 'ask_model', arguments: { prompt: 'SLOW_STREAM '.repeat(20) } },
      CallToolResultSchema,
      {
        signal: controller.signal,
        onprogress: (p) => {
          if (p.progress > 0) controller.abort();
        },
      },
    );
    await expect(call).rejects.toThrow();
    const deadline = Date.now() + 5_000;
    while (service.responseStreams.cut === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(service.responseStreams).toMatchObject({ open: 0, completed: 0, cut: 1 });
  });

  it('answers a page question and lists models, never logging the key', async () => {
    const page = await spawned.client.callTool({
      name: 'web_fetch',
      arguments: { url: 'https://example.com/stdio', prompt: 'What is this page?' },
    });
    expect(page.isError).toBeFalsy();
    expect(structuredOf<{ content: string; model: string }>(page)).toMatchObject({
      content: expect.stringContaining('What is this page?'),
      model: 'openai/gpt-4o-mini',
    });
    const models = await spawned.client.callTool({ name: 'list_models', arguments: { capability: 'chat' } });
    expect(textOf(models)).toMatch(/openai\/gpt-4o-mini \(default\)/);
    expect(spawned.stderr()).not.toContain(SECRET);
  });
});
