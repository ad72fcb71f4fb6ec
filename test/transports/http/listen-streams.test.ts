import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { connectEra } from '../../harness/eras.js';
import { useReferenceService } from '../../harness/gateway.js';
import { textOf } from '../../harness/harness.js';
import { type HttpServerProcess, startHttpCli } from '../../harness/http-harness.js';
import { until } from '../../harness/video.js';

// 2026-07-28 clients hold `subscriptions/listen` streams open for notifications (Claude Code one
// per connection). However many are held, from however many clients, a call is served; streams
// are bounded on their own: per client (remote address), in all, and by idleness.
const reference = useReferenceService();

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'listener', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Listen {
  /** The server's first bytes (the acknowledgement) arrived. */
  acknowledged: Promise<void>;
  /** The server ended the stream. */
  ended: boolean;
  close(): void;
}

let ids = 0;
function listen(url: string, from = '127.0.0.1'): Listen {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: ++ids,
    method: 'subscriptions/listen',
    params: { notifications: { resourcesListChanged: true }, _meta: META },
  });
  const state: Listen = { acknowledged: Promise.resolve(), ended: false, close: () => undefined };
  state.acknowledged = new Promise((resolve, reject) => {
    const req = request(
      new URL('/mcp', url),
      {
        method: 'POST',
        localAddress: from,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'subscriptions/listen',
        },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`listen answered ${res.statusCode}`));
        res.once('data', () => resolve());
        res.on('end', () => {
          state.ended = true;
        });
        res.on('error', () => {
          state.ended = true;
        });
      },
    );
    req.on('error', reject);
    req.end(body);
    state.close = () => req.destroy();
  });
  return state;
}

describe('listen streams', () => {
  const servers: HttpServerProcess[] = [];
  const streams: Listen[] = [];
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await Promise.all(servers.map((server) => server.stop()));
  });
  const start = async (env: Record<string, string> = {}) => {
    const server = await startHttpCli({ ...reference.env, ...env });
    servers.push(server);
    return server;
  };
  const open = async (url: string, count: number, from?: string) => {
    const opened = Array.from({ length: count }, () => listen(url, from));
    streams.push(...opened);
    await Promise.all(opened.map((stream) => stream.acknowledged));
    return opened;
  };

  it('never keep a call from being served, however many are held by however many clients', async () => {
    const server = await start({ GATEWAY_MAX_SESSIONS: '20' });
    // 33 streams from 11 addresses: more than the 20 concurrent requests allowed.
    const held: Listen[] = [];
    for (let i = 1; i <= 11; i++) held.push(...(await open(server.url, 3, `127.0.0.${i}`)));
    await until(() => held.filter((stream) => !stream.ended).length <= 20, 5_000, 'the bound in all');
    const client = await connectEra('2026-07-28', { http: server.url });
    try {
      const result = await client.callTool('web_search', { query: 'held streams' });
      expect(result.isError, textOf(result)).toBeFalsy();
    } finally {
      await client.close();
    }
    // The streams ended to make room were the first ones opened: they had carried the least.
    expect(held.filter((stream) => !stream.ended)).toHaveLength(20);
    expect(held.slice(0, 12).every((stream) => stream.ended)).toBe(true);
  });

  it('end a client’s oldest stream when it holds too many, and no other client’s', async () => {
    const server = await start();
    const other = await open(server.url, 2, '127.0.0.20');
    const mine = await open(server.url, 12, '127.0.0.21');
    await until(() => mine.filter((stream) => stream.ended).length === 2, 5_000, 'the bound per client');
    expect(mine.slice(0, 2).every((stream) => stream.ended)).toBe(true);
    expect(mine.slice(2).some((stream) => stream.ended)).toBe(false);
    expect(other.some((stream) => stream.ended)).toBe(false);
  });

  it('end a stream that carried nothing for GATEWAY_SESSION_IDLE_SECONDS', async () => {
    const server = await start({ GATEWAY_SESSION_IDLE_SECONDS: '1' });
    const [quiet] = await open(server.url, 1);
    await until(() => quiet?.ended === true, 10_000, 'the idle stream to end');
  });
});
