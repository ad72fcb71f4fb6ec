import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectInMemory, textOf } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { type ReferenceService, startReferenceService, synthesizeAudio } from '../reference-service/index.js';

// A malicious or compromised gateway answers anything. These tests stand one up (a few lines of
// node:http that never stop talking) or forge what the server is handed, and check that the
// server stays bounded and never turns a forged value into a request elsewhere.

interface Hostile {
  url: string;
  /** Bytes written to open Responses streams, and how many of those streams the client closed. */
  sent: number;
  closed: number;
  close(): Promise<void>;
}

/** A gateway whose /v1/responses streams forever: SSE events, or one line that never ends. */
async function startEndlessGateway(): Promise<Hostile> {
  const state = { sent: 0, closed: 0 };
  const pad = 'p'.repeat(4000);
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'evil/model', owned_by: 'evil' }] }));
    }
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const oneLine = body.includes('ONE_ENDLESS_LINE');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => {
        state.closed += 1;
      });
      if (oneLine) res.write('data: ');
      const chunk = oneLine
        ? pad
        : `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'x', pad })}\n\n`;
      const pump = () => {
        while (!res.destroyed) {
          state.sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get sent() {
      return state.sent;
    },
    get closed() {
      return state.closed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let hostile: Hostile;
let service: ReferenceService;
let onHostile: Connected;
let onService: Connected;

beforeAll(async () => {
  hostile = await startEndlessGateway();
  service = await startReferenceService();
  onHostile = await connectInMemory({ GATEWAY_BASE_URL: hostile.url, GATEWAY_API_KEY: 'k-hostile-1234' });
  onService = await connectInMemory({ GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey });
});
afterAll(async () => {
  await onHostile.close();
  await onService.close();
  await hostile.close();
  await service.close();
});

describe('a gateway that never stops answering', () => {
  it('an endless Responses stream is cut at 64 MiB and closed; the server stays up', async () => {
    for (const prompt of ['endless events', 'ONE_ENDLESS_LINE']) {
      const closedBefore = hostile.closed;
      const result = (await onHostile.client.callTool({
        name: 'ask_model',
        arguments: { prompt, model: 'evil/model' },
      })) as CallToolResult;
      expect(result.isError, prompt).toBe(true);
      expect(textOf(result), prompt).toMatch(/exceeded 64 MiB/);
      await expect.poll(() => hostile.closed, { timeout: scaled(5_000) }).toBe(closedBefore + 1);
    }
    // Bounded: the two streams together sent little more than twice the limit.
    expect(hostile.sent).toBeLessThan(2 * 64 * 1024 * 1024 + 16 * 1024 * 1024);
    const listed = (await onHostile.client.callTool({
      name: 'list_models',
      arguments: {},
    })) as CallToolResult;
    expect(textOf(listed)).toContain('evil/model');
  });
});

describe('forged job handles', () => {
  /** A handle with a valid checksum around any request id: what a forger can always build. */
  function forge(requestId: string): string {
    const body = Buffer.concat([Buffer.from([1, 0]), Buffer.from(requestId, 'utf8')]);
    const check = createHash('sha256').update(body).digest().subarray(0, 4);
    return `vj_${Buffer.concat([body, check]).toString('base64url')}`;
  }

  it('a request id of "." or ".." cannot steer the poll to another gateway route', async () => {
    service.resetCounters();
    for (const id of ['..', '.']) {
      const result = (await onService.client.callTool({
        name: 'video_status',
        arguments: { job_id: forge(id), wait_seconds: 0 },
      })) as CallToolResult;
      expect(result.isError, id).toBe(true);
      expect(textOf(result), id).toMatch(/not a valid video job_id \(it holds an invalid id\)/);
    }
    expect(service.requests).toEqual([]);
    // Any other id goes, encoded, to the one poll route.
    const other = (await onService.client.callTool({
      name: 'video_status',
      arguments: { job_id: forge('../models'), wait_seconds: 0 },
    })) as CallToolResult;
    expect(other.isError).toBe(true);
    expect(service.requests.map((r) => r.route)).toEqual(['videos.poll']);
  });
});

describe('arguments that travel in headers or paths', () => {
  it('cannot inject a header or a second request line', async () => {
    service.resetCounters();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['video_generate', { prompt: 'p', idempotency_key: 'k\r\nx-evil: 1' }, /idempotency_key/],
      ['video_generate', { prompt: 'p', idempotency_key: 'k x' }, /idempotency_key/],
      ['video_generate', { prompt: 'p', model: 'xai/grok\r\nx-evil: 1' }, /model/],
      ['audio_speech', { text: 'hi', model: 'openai/tts-1', voice: 'alloy\r\nx-evil: 1' }, /voice/],
      ['web_fetch', { url: 'https://example.com/\r\nx-evil: 1', provider: 'jina\nx' }, /provider/],
    ];
    for (const [name, args, field] of cases) {
      const result = (await onService.client.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result), JSON.stringify(args)).toMatch(field);
    }
    expect(service.requests.filter((r) => r.route !== 'models.kind' && r.route !== 'models')).toEqual([]);
  });
});

describe('answers nested too deep to parse in bounded time', () => {
  let service: ReferenceService;
  let conn: Connected;
  beforeAll(async () => {
    service = await startReferenceService();
    conn = await connectInMemory({ GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey });
  });
  afterAll(async () => {
    await conn.close();
    await service.close();
  });
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const search = () =>
    conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'q', provider: 'tavily' },
    }) as Promise<CallToolResult>;

  it('a search answer of 4 MiB of [[[[ is refused unread, and the next call is served', async () => {
    service.inject('search', { body: deep(2_000_000) });
    const refused = await search();
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/nested deeper than 256 levels/);
    const next = await search();
    expect(next.isError, textOf(next)).toBeFalsy();
  });

  it('a transcript of nested arrays is refused unread', async () => {
    service.inject('transcriptions', { body: deep(100_000) });
    const refused = (await conn.client.callTool({
      name: 'audio_transcribe',
      arguments: { data_base64: synthesizeAudio('hi', 'mp3').toString('base64') },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/nested deeper than 256 levels/);
  });
});
