import { request as httpRequest } from 'node:http';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectHttp,
  disconnect,
  eventually,
  type HttpServerProcess,
  health,
  INITIALIZE,
  MCP_HEADERS,
  openRawSession,
  postMcp,
  startHttpCli,
} from '../../harness/http-harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

let service: ReferenceService;
let env: Record<string, string>;
let server: HttpServerProcess;

beforeAll(async () => {
  service = await startReferenceService();
  env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey, GATEWAY_LOG_LEVEL: 'debug' };
  server = await startHttpCli(env);
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await service.close();
});

const sessions = async (baseUrl: string) => (await health(baseUrl)).sessions;
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
const MiB = 1024 * 1024;
const inSession = (id: string) => ({ 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' });

async function rpcError(res: Response): Promise<{ code: number; message: string }> {
  return ((await res.json()) as { error: { code: number; message: string } }).error;
}

describe('Streamable HTTP session lifecycle', () => {
  it('serves a session until DELETE, then answers 404', async () => {
    const id = await openRawSession(server.url);
    const listed = await postMcp(server.url, LIST, inSession(id));
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('web_search');
    const deleted = await fetch(new URL('/mcp', server.url), { method: 'DELETE', headers: inSession(id) });
    expect(deleted.status).toBe(200);
    const after = await postMcp(server.url, LIST, inSession(id));
    expect(after.status).toBe(404);
    expect(await rpcError(after)).toMatchObject({
      code: -32001,
      message: expect.stringMatching(/initialize/),
    });
  });

  it('answers 404 for an unknown session and 400 without one', async () => {
    expect((await postMcp(server.url, LIST, inSession('no-such-session'))).status).toBe(404);
    const missing = await postMcp(server.url, LIST);
    expect(missing.status).toBe(400);
    expect((await rpcError(missing)).message).toMatch(/Mcp-Session-Id/);
    const get = await fetch(new URL('/mcp', server.url), { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    await get.body?.cancel();
  });

  it('ends the session for an SDK client that terminates it', async () => {
    const client = await connectHttp(server.url, 'streamable');
    const transport = client.transport as StreamableHTTPClientTransport;
    const id = transport.sessionId as string;
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await disconnect(client);
    expect((await postMcp(server.url, LIST, inSession(id))).status).toBe(404);
  });

  it('keeps Streamable HTTP and SSE sessions apart', async () => {
    const id = await openRawSession(server.url);
    const wrong = await fetch(new URL(`/messages?sessionId=${id}`, server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(LIST),
    });
    expect(wrong.status).toBe(400);
    expect((await rpcError(wrong)).message).toMatch(/Streamable HTTP/);
    const unknown = await fetch(new URL('/messages?sessionId=nope', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(LIST),
    });
    expect(unknown.status).toBe(404);
  });
});

describe('request bodies', () => {
  it('answers 413 for a body over 32 MiB and stays up', async () => {
    const big = JSON.stringify({ ...INITIALIZE, padding: 'x'.repeat(33 * MiB) });
    const res = await postMcp(server.url, big);
    expect(res.status).toBe(413);
    expect((await rpcError(res)).message).toMatch(/32 MiB.*file_path or url instead of data_base64/);
    const stream = await fetch(new URL('/sse', server.url), { headers: { accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const endpoint = /data: (\/messages\?sessionId=\S+)/.exec(first)?.[1];
    expect(endpoint).toBeDefined();
    const sse = await fetch(new URL(endpoint!, server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(sse.status).toBe(413);
    await reader.cancel();
    // Without a Content-Length the body is refused once past 32 MiB, and the rest of it is still
    // read and dropped: a client that sends all of its body before it reads the answer sees it too.
    const chunked = openPost(server.url, 33 * MiB);
    expect((await chunked.answered).status).toBe(413);
    await chunked.sendMore(16 * MiB);
    chunked.abort();
    expect((await fetch(new URL('/healthz', server.url))).status).toBe(200);
  });

  it('reads large bodies at most two full-size ones at a time: a third gets 503 with Retry-After', async () => {
    // Three bodies sent in two halves; the first halves (31.9 + 31.9 + 10 MiB) are more than two
    // full-size bodies' worth, any two of them are not. So, whichever arrives last, exactly one
    // is refused, and the other two are read to the end and answered.
    const sizes = [31.9 * MiB, 31.9 * MiB, 10 * MiB].map(Math.floor);
    const posts = sizes.map((size) => openPost(server.url, size));
    await Promise.all(posts.map((p) => p.firstHalfSent));
    const refused = await eventuallyAnswered(posts);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.body).toMatch(/reading other large requests.*again in a few seconds/);
    // The rest of the refused body is read and dropped, not left unread.
    const refusedPost = posts.find((p) => p.answer === refused)!;
    await refusedPost.sendMore(16 * MiB);
    refusedPost.abort();
    const others = posts.filter((p) => p.answer !== refused);
    for (const p of others) p.finish();
    for (const p of others) expect([413, 503]).not.toContain((await p.answered).status);
    expect((await fetch(new URL('/healthz', server.url))).status).toBe(200);
  });

  it('counts every body against the budget: slow bodies under 4 MiB cannot pile up', async () => {
    // 24 bodies of almost 4 MiB each, held open: 94 MiB, more than the 64 MiB budget.
    const posts = Array.from({ length: 24 }, () => openPost(server.url, 4 * MiB - 1024));
    await Promise.all(posts.map((p) => p.firstHalfSent));
    await eventually(() => posts.filter((p) => p.answer).length >= 8, 10_000);
    const refused = posts.filter((p) => p.answer?.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(8);
    expect(refused[0]?.answer?.body).toMatch(/send this one again in a few seconds/);
    // An ordinary request is still read and answered meanwhile.
    expect((await postMcp(server.url, INITIALIZE)).status).toBe(200);
    const held = posts.filter((p) => !p.answer);
    for (const p of held) p.finish();
    for (const p of held) expect((await p.answered).status).not.toBe(503);
  });

  it('answers 400 Invalid Request for legacy SSE bodies that are JSON but not a message, and the session goes on', async () => {
    const stream = await fetch(new URL('/sse', server.url), { headers: { accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const endpoint = new URL(/data: (\/messages\?sessionId=\S+)/.exec(first)![1]!, server.url);
    const post = (body: string) =>
      fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const body of ['null', '5', '"text"', '[]', '{}', '{"jsonrpc":"1.0","id":1,"method":"ping"}']) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect((await rpcError(res)).code, body).toBe(-32600);
    }
    expect((await post(JSON.stringify(INITIALIZE))).status).toBe(202);
    await reader.cancel();
  });

  it('refuses JSON nested too deep to parse in bounded time, as a parse error', async () => {
    const depth = 1_000_000;
    const res = await postMcp(server.url, `${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(res.status).toBe(400);
    expect((await rpcError(res)).code).toBe(-32700);
  });

  it('answers 400 with a JSON-RPC parse error for a body that is not JSON', async () => {
    const res = await postMcp(server.url, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(400);
    expect((await rpcError(res)).code).toBe(-32700);
  });
});

describe('session bounds', () => {
  it('refuses sessions past GATEWAY_MAX_SESSIONS with 503 and a JSON-RPC error', async () => {
    const small = await startHttpCli({ ...env, GATEWAY_MAX_SESSIONS: '2' });
    try {
      const first = await connectHttp(small.url, 'streamable');
      const second = await connectHttp(small.url, 'sse');
      const refused = await postMcp(small.url, INITIALIZE);
      expect(refused.status).toBe(503);
      expect((await rpcError(refused)).message).toMatch(/Too many open sessions \(the limit is 2\)/);
      const sse = await fetch(new URL('/sse', small.url), { headers: { accept: 'text/event-stream' } });
      expect(sse.status).toBe(503);
      await expect(connectHttp(small.url, 'streamable')).rejects.toThrow();
      await disconnect(second);
      expect(await eventually(async () => (await sessions(small.url)) === 1)).toBe(true);
      const third = await connectHttp(small.url, 'sse');
      expect((await third.listTools()).tools.length).toBeGreaterThan(0);
      await Promise.all([disconnect(first), disconnect(third)]);
    } finally {
      expect(await small.stop()).toBe(0);
    }
  });

  it('closes sessions that never called a tool after GATEWAY_SESSION_UNUSED_SECONDS, and keeps used ones', async () => {
    const brief = await startHttpCli({ ...env, GATEWAY_SESSION_UNUSED_SECONDS: '1' });
    try {
      const checked = await openRawSession(brief.url);
      expect((await postMcp(brief.url, LIST, inSession(checked))).status).toBe(200);
      const working = await openRawSession(brief.url);
      const call = {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'list_models', arguments: {} },
      };
      expect((await postMcp(brief.url, call, inSession(working))).status).toBe(200);
      expect(await eventually(async () => (await sessions(brief.url)) === 1, 10_000)).toBe(true);
      expect((await postMcp(brief.url, LIST, inSession(checked))).status).toBe(404);
      expect((await postMcp(brief.url, LIST, inSession(working))).status).toBe(200);
      expect(brief.stderr()).toMatch(/never called a tool in 1 s; closing it/);
    } finally {
      expect(await brief.stop()).toBe(0);
    }
  });

  it('at the limit, ends the least recently used idle session instead of refusing a new client', async () => {
    const small = await startHttpCli({ ...env, GATEWAY_MAX_SESSIONS: '2' });
    try {
      const older = await openRawSession(small.url);
      const newer = await openRawSession(small.url);
      expect((await postMcp(small.url, LIST, inSession(newer))).status).toBe(200);
      const fresh = await openRawSession(small.url);
      expect((await postMcp(small.url, LIST, inSession(older))).status).toBe(404);
      expect((await postMcp(small.url, LIST, inSession(newer))).status).toBe(200);
      expect((await postMcp(small.url, LIST, inSession(fresh))).status).toBe(200);
      expect(small.stderr()).toMatch(/idle longest, and room was needed for a new session/);
    } finally {
      expect(await small.stop()).toBe(0);
    }
  });

  it('closes sessions idle past GATEWAY_SESSION_IDLE_SECONDS', async () => {
    const brief = await startHttpCli({ ...env, GATEWAY_SESSION_IDLE_SECONDS: '1' });
    try {
      const id = await openRawSession(brief.url);
      expect((await postMcp(brief.url, LIST, inSession(id))).status).toBe(200);
      // Polled through /healthz: a request to the session itself would keep it alive.
      expect(await sessions(brief.url)).toBe(1);
      expect(await eventually(async () => (await sessions(brief.url)) === 0, 10_000)).toBe(true);
      expect((await postMcp(brief.url, LIST, inSession(id))).status).toBe(404);
      expect(brief.stderr()).toMatch(/idle for 1 s; closing it/);
    } finally {
      expect(await brief.stop()).toBe(0);
    }
  });
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface OpenPost {
  firstHalfSent: Promise<void>;
  answered: Promise<RawAnswer>;
  /** Set once answered. */
  answer?: RawAnswer;
  /** Sends `bytes` more of the padding; resolves once the connection has taken them, rejects if it closed. */
  sendMore(bytes: number): Promise<void>;
  /** Sends the rest: the end of a valid JSON-RPC ping. */
  finish(): void;
  /** Drops the connection. */
  abort(): void;
}

/** A POST /mcp whose body (a ping padded to `size` bytes) is held open after its first `size` bytes. */
function openPost(baseUrl: string, size: number): OpenPost {
  const head = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';
  const tail = '"}}';
  const req = httpRequest(new URL('/mcp', baseUrl), { method: 'POST', headers: MCP_HEADERS });
  req.on('error', () => undefined);
  const post: OpenPost = {
    firstHalfSent: new Promise((resolve) =>
      req.write(head + 'x'.repeat(size - head.length), () => resolve()),
    ),
    answered: new Promise((resolve) =>
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => {
          post.answer = { status: res.statusCode ?? 0, headers: res.headers, body };
          resolve(post.answer);
        });
      }),
    ),
    sendMore: (bytes) =>
      new Promise((resolve, reject) =>
        req.write('x'.repeat(bytes), (error) => {
          // A connection cut instead may still call back without an error (some Node releases do): look once more.
          setImmediate(() =>
            error || req.destroyed ? reject(error ?? new Error('the connection was closed')) : resolve(),
          );
        }),
      ),
    finish: () => req.end(tail),
    abort: () => req.destroy(),
  };
  return post;
}

/** The first of `posts` to be answered (while all are still open). */
function eventuallyAnswered(posts: OpenPost[]): Promise<RawAnswer> {
  return Promise.race(posts.map((p) => p.answered));
}
