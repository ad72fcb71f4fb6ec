// What a client that sends bad tool arguments reads: one sentence per problem, naming the field,
// what is wrong and what is allowed, worked out from the tool's schema (never zod's own wording),
// and the sentences a tool writes itself kept as they are. A tools/call whose `arguments` is no
// object is refused by the protocol (-32602), in one sentence too, in memory and over stdio.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { connectStdio, type Spawned, textOf } from '../harness/harness.js';

const gw = useGateway();

async function refusal(name: string, args: Record<string, unknown>): Promise<string> {
  const result = await gw.conn.client.callTool({ name, arguments: args });
  expect(result.isError, textOf(result)).toBe(true);
  return textOf(result);
}

describe('tool arguments a schema refuses', () => {
  it.each([
    ['web_search', {}, 'query is required: a string of at most 400 characters'],
    ['web_fetch', {}, 'url is required: a string'],
    [
      'web_search',
      { query: 'q', max_results: 'ten' },
      'max_results must be a whole number from 1 to 20, not "ten"',
    ],
    ['web_search', { query: 'q', max_results: 0 }, 'max_results must be a whole number from 1 to 20, not 0'],
    [
      'web_search',
      { query: 'q', max_results: 2.5 },
      'max_results must be a whole number from 1 to 20, not 2.5',
    ],
    ['web_search', { query: 'q', search_type: 'blog' }, 'search_type must be web or news, not "blog"'],
    ['web_search', { query: 'q', time_range: 7 }, 'time_range must be day, week, month, year or any, not 7'],
    ['web_search', { query: 'q', country: 'u' }, 'country must be a string of 2 to 32 characters (it has 1)'],
    [
      'web_search',
      { query: 'q', include_domains: 'github.com' },
      'include_domains must be a list of at most 20 strings, not "github.com" (e.g. ["github.com"])',
    ],
    [
      'web_search',
      { query: 'q', include_domains: Array.from({ length: 21 }, (_, i) => `d${i}.com`) },
      'include_domains must be a list of at most 20 strings (it has 21)',
    ],
    ['web_search', { query: 'q', provider: 5 }, 'provider must be a string, not 5 (e.g. tavily, brave)'],
    [
      'web_fetch',
      { url: 'https://example.com/', max_length: -1 },
      'max_length must be a whole number from 100 to 100000, not -1',
    ],
    [
      'video_status',
      { job_id: 'vj_x', download: 'yes' },
      'download must be true or false, not "yes" (save the finished video to a file)',
    ],
    [
      'video_status',
      { job_id: 'vj_x', wait_seconds: [] },
      'wait_seconds must be a number from 0 to 50, not a list (0 = just look)',
    ],
    [
      'ask_model',
      { prompt: 'hi', reasoning_effort: { level: 'high' } },
      'reasoning_effort must be minimal, low, medium or high, not an object',
    ],
    [
      'video_edit',
      { prompt: 'p' },
      'video is required: a non-empty string (a finished job_id or a video URL)',
    ],
    [
      'video_generate',
      { prompt: 'p', idempotency_key: '' },
      'idempotency_key must be a non-empty string of at most 200 characters (it is empty)',
    ],
  ])('%s %j: "%s"', async (name, args, sentence) => {
    expect(await refusal(name, args)).toBe(`Invalid arguments for ${name}: ${sentence}`);
    expect(gw.service.requests).toEqual([]);
  });

  it('says each problem once, in order, with the sentences a tool writes itself as they are', async () => {
    const text = await refusal('web_search', {
      query: 'q'.repeat(401),
      max_results: 0,
      include_domains: ['not a domain', 'github.com'],
      provider: 'has space',
    });
    expect(text).toBe(
      'Invalid arguments for web_search: query must be at most 400 characters; ' +
        'max_results must be a whole number from 1 to 20, not 0; ' +
        'include_domains[0]: must be a domain such as github.com; ' +
        'provider must be an id such as tavily',
    );
  });

  it('quotes a long wrong value only in part, on one line', async () => {
    const text = await refusal('web_search', { query: 'q', search_type: `news\n${'x'.repeat(200)}` });
    expect(text).toBe(
      `Invalid arguments for web_search: search_type must be web or news, not "news\\n${'x'.repeat(35)}…"`,
    );
  });

  it("never shows zod's own wording", async () => {
    const texts = await Promise.all([
      refusal('web_search', {}),
      refusal('audio_transcribe', { url: 5, max_length: 'x', response_format: 'doc' }),
      refusal('video_generate', { prompt: 'p', duration: 0.5, aspect_ratio: '2:1', wait_seconds: 99 }),
      refusal('list_models', { capability: 'images' }),
    ]);
    for (const text of texts)
      expect(text).not.toMatch(/Invalid input|Too (big|small)|expected \w+, received|Invalid option|[<>]=/);
  });
});

// A tools/call whose envelope is malformed (arguments not an object, no tool name) is refused by
// the SDK before any handler of the server runs, in its own words; what matters is that it is
// -32602, names the field, sends nothing and leaves the connection serving.
describe('a tools/call whose arguments are not an object', () => {
  const shapes: unknown[] = ['query', [1, 2], 42, null];

  async function refused(client: Client, args: unknown): Promise<McpError> {
    const call = client.request(
      { method: 'tools/call', params: { name: 'web_search', arguments: args as never } },
      CallToolResultSchema,
    );
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, JSON.stringify(args)).toBeInstanceOf(McpError);
    return error as McpError;
  }

  it.each(shapes)('is answered -32602 naming the arguments, in memory: %j', async (args) => {
    const error = await refused(gw.conn.client, args);
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/tools\/call[\s\S]*arguments/);
    expect(gw.service.requests).toEqual([]);
  });

  it('names a missing tool name', async () => {
    const error = await gw.conn.client
      .request({ method: 'tools/call', params: { arguments: {} } as never }, CallToolResultSchema)
      .catch((e: unknown) => e as McpError);
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams });
    expect(error.message).toMatch(/tools\/call[\s\S]*name/);
  });

  describe('over stdio, from the built server', () => {
    let spawned: Spawned;
    beforeAll(async () => {
      spawned = await connectStdio({ GATEWAY_BASE_URL: gw.service.url, GATEWAY_API_KEY: gw.service.apiKey });
    });
    afterAll(async () => {
      await spawned?.close();
    });

    it.each(shapes)('is answered -32602 naming the arguments: %j', async (args) => {
      const error = await refused(spawned.client, args);
      expect(error.code).toBe(ErrorCode.InvalidParams);
      expect(error.message).toMatch(/tools\/call[\s\S]*arguments/);
    });

    it('still answers a well-formed call afterwards', async () => {
      const result = await spawned.client.callTool({ name: 'web_search', arguments: { query: 'after' } });
      expect(result.isError, textOf(result)).toBeFalsy();
    });
  });
});
