import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REQUIRED_META_KEY } from '../../../src/mcp/tool-selection.js';
import { runCli, structuredOf } from '../../harness/harness.js';
import {
  connectHttp,
  disconnect,
  eventually,
  HTTP_KINDS,
  type HttpServerProcess,
  health,
  openRawSession,
  postMcp,
  startHttpCli,
  toolCall,
} from '../../harness/http-harness.js';
import {
  type ReferenceService,
  startReferenceService,
  synthesizeAudio,
} from '../../reference-service/index.js';

const SECRET = 'sk-http-secret-abcdef123456';
const MiB = 1024 * 1024;
let service: ReferenceService;
let env: Record<string, string>;
let server: HttpServerProcess;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
  env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: SECRET, GATEWAY_LOG_LEVEL: 'debug' };
  server = await startHttpCli(env);
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await service.close();
});
afterEach(() => {
  service.clearFaults();
  service.resetCounters();
});

async function withClient<T>(
  url: string,
  kind: (typeof HTTP_KINDS)[number],
  use: (c: Client) => Promise<T>,
): Promise<T> {
  const client = await connectHttp(url, kind);
  try {
    return await use(client);
  } finally {
    await disconnect(client);
  }
}

describe.each(HTTP_KINDS)('built server over %s', (kind) => {
  it('takes audio_transcribe with 15 MiB of audio inline as data_base64', async () => {
    // Different audio per transport: the same bytes would be answered from the transcript cache.
    const audio = Buffer.concat([synthesizeAudio(`inline ${kind}`, 'mp3'), Buffer.alloc(15 * 1024 * 1024)]);
    await withClient(server.url, kind, async (client) => {
      const result = await client.callTool({
        name: 'audio_transcribe',
        arguments: { data_base64: audio.toString('base64'), model: 'groq/whisper-large-v3' },
      });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    });
    const upload = service.requests.filter((r) => r.route === 'transcriptions').at(-1)?.body as {
      file: { size: number };
    };
    expect(upload.file.size).toBe(audio.length);
  });

  it('lists the required tools, marked, and names them in the instructions', async () => {
    await withClient(server.url, kind, async (client) => {
      const { tools } = await client.listTools();
      for (const name of ['web_search', 'web_fetch']) {
        expect(tools.find((t) => t.name === name)?._meta?.[REQUIRED_META_KEY]).toBe(true);
      }
      expect(client.getInstructions()).toMatch(/web_search.*web_fetch/);
    });
  });

  it('calls web_search and pages web_fetch against the service', async () => {
    await withClient(server.url, kind, async (client) => {
      const search = await client.callTool({ name: 'web_search', arguments: { query: `over ${kind}` } });
      expect(search.isError).toBeFalsy();
      const { results } = structuredOf<{ results: { title: string }[] }>(search);
      expect(results[0]?.title).toContain(`over ${kind}`);
      expect(service.counters.search).toBe(1);
      const page = await client.callTool({
        name: 'web_fetch',
        arguments: { url: 'https://example.com/long', max_length: 1000, start_index: 1000 },
      });
      expect(structuredOf<{ start_index: number }>(page).start_index).toBe(1000);
    });
  });

  it('cancels a running call: the service request is aborted and the server stays usable', async () => {
    service.inject('search', { hang: true });
    await withClient(server.url, kind, async (client) => {
      const abort = new AbortController();
      const call = client.callTool({ name: 'web_search', arguments: { query: 'hangs' } }, undefined, {
        signal: abort.signal,
      });
      const settled = call.then(
        () => 'resolved',
        (error: Error) => error.name,
      );
      expect(await eventually(() => service.counters.search === 1)).toBe(true);
      abort.abort();
      expect(await settled).not.toBe('resolved');
      expect(await eventually(() => service.abandoned.search === 1)).toBe(true);
      const next = await client.callTool({ name: 'web_search', arguments: { query: 'after cancel' } });
      expect(next.isError).toBeFalsy();
    });
  });
});

describe('built server over HTTP', () => {
  it('cancels a call whose client drops the HTTP request', async () => {
    service.inject('search', { hang: true });
    const session = await openRawSession(server.url);
    const abort = new AbortController();
    const call = toolCall(7, 'web_search', { query: 'dropped' });
    const response = await postMcp(server.url, call, { 'mcp-session-id': session }, abort.signal);
    expect(response.status).toBe(200);
    expect(await eventually(() => service.counters.search === 1)).toBe(true);
    abort.abort();
    expect(await eventually(() => service.abandoned.search === 1)).toBe(true);
    expect(await eventually(async () => (await health(server.url)).in_flight === 0)).toBe(true);
  });

  it('holds large bodies against the shared budget until their calls are answered', async () => {
    // Two inline transcriptions of 15 MiB (about 20 MiB as base64) hold 2 x 16 MiB of the 56 MiB
    // budget while the service takes its time; a third body of almost 32 MiB does not fit then,
    // and does once they are answered.
    // The big body is built first, and the service holds the two calls long enough that a loaded
    // machine still sends it while they are held.
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(31.9 * MiB) });
    service.inject('transcriptions', { delayMs: 5_000, times: 2 });
    const calls = ['budget one', 'budget two'].map((name) =>
      withClient(server.url, 'streamable', (client) =>
        client.callTool({
          name: 'audio_transcribe',
          arguments: {
            data_base64: Buffer.concat([synthesizeAudio(name, 'mp3'), Buffer.alloc(15 * MiB)]).toString(
              'base64',
            ),
            model: 'groq/whisper-large-v3',
          },
        }),
      ),
    );
    expect(await eventually(() => service.counters.transcriptions === 2)).toBe(true);
    const refused = await postMcp(server.url, big);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    for (const result of await Promise.all(calls)) expect(result.isError).toBeFalsy();
    const accepted = await postMcp(server.url, big);
    expect(accepted.status).not.toBe(503);
  });

  it('serves 20 concurrent sessions over both transports', async () => {
    const before = (await health(server.url)).sessions;
    const clients = await Promise.all(
      Array.from({ length: 20 }, (_, i) => connectHttp(server.url, i % 2 === 0 ? 'streamable' : 'sse')),
    );
    try {
      expect((await health(server.url)).sessions).toBe(before + 20);
      const results = await Promise.all(
        clients.map((c, i) => c.callTool({ name: 'web_search', arguments: { query: `session ${i}` } })),
      );
      results.forEach((r, i) => {
        expect(structuredOf<{ query: string }>(r).query).toBe(`session ${i}`);
      });
      expect(service.counters.search).toBe(20);
    } finally {
      await Promise.all(clients.map((c) => disconnect(c)));
    }
    // SSE sessions end with their stream, Streamable HTTP ones with the client's DELETE.
    expect(await eventually(async () => (await health(server.url)).sessions === before)).toBe(true);
  });

  it('answers /healthz without auth and keeps stdout silent', async () => {
    const res = await fetch(new URL('/healthz', server.url));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', mode: 'sessions' });
    expect(server.stdout()).toBe('');
    expect(server.stderr().match(/listening on http:\/\/127\.0\.0\.1:\d+/g)).toHaveLength(1);
    expect(server.stderr()).not.toContain(SECRET);
  });

  it('keeps the required tools under every tool configuration', async () => {
    const configs: [Record<string, string>, string[], string][] = [
      [{ GATEWAY_TOOLS: 'video,audio' }, [], 'web_search'],
      [{}, ['--tools', 'models'], 'web_search'],
      [{ GATEWAY_TOOL_PREFIX: 'gw_' }, [], 'gw_web_search'],
    ];
    for (const [extra, args, searchName] of configs) {
      const configured = await startHttpCli({ ...env, ...extra }, args);
      try {
        for (const kind of HTTP_KINDS) {
          const names = await withClient(configured.url, kind, async (c) =>
            (await c.listTools()).tools.map((t) => t.name),
          );
          expect(names).toContain(searchName);
          expect(names).toContain(searchName.replace('search', 'fetch'));
        }
      } finally {
        expect(await configured.stop()).toBe(0);
      }
    }
  });

  it('exits 2 when a deny-list names a required tool, before listening', async () => {
    const run = await runCli(['--transport', 'http', '--port', '0', '--disable-tools', 'web_fetch'], env);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/web_fetch is a required agent tool/);
  });
});
