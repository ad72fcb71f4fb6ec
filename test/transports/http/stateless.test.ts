import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REQUIRED_META_KEY } from '../../../src/mcp/tool-selection.js';
import { structuredOf } from '../../harness/harness.js';
import {
  eventually,
  type HttpServerProcess,
  INITIALIZE,
  postMcp,
  startHttpCli,
  toolCall,
} from '../../harness/http-harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

let service: ReferenceService;
let replicas: HttpServerProcess[];

beforeAll(async () => {
  service = await startReferenceService();
  const env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey, GATEWAY_TOOLS: 'video' };
  replicas = await Promise.all([startHttpCli(env, ['--stateless']), startHttpCli(env, ['--stateless'])]);
});
afterAll(async () => {
  for (const replica of replicas) expect(await replica.stop()).toBe(0);
  await service.close();
});
afterEach(() => {
  service.clearFaults();
  service.resetCounters();
});

describe('stateless mode (--stateless)', () => {
  it('hands out no session and serves only POST /mcp', async () => {
    const [replica] = replicas;
    const init = await postMcp(replica!.url, INITIALIZE);
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    await init.text();
    const get = await fetch(new URL('/mcp', replica!.url), { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(await get.text()).toMatch(/stateless/);
    expect(replica!.stderr()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ .*stateless/);
  });

  it('lets one client spread its requests over two replicas, as behind a load balancer', async () => {
    const used: string[] = [];
    let turn = 0;
    const roundRobin = (input: string | URL | Request, init?: RequestInit) => {
      const replica = replicas[turn++ % replicas.length]!;
      const url = new URL(String(input instanceof Request ? input.url : input));
      const target = new URL(url.pathname + url.search, replica.url);
      used.push(target.origin);
      return fetch(target, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', replicas[0]!.url), {
      fetch: roundRobin,
    });
    const client = new Client({ name: 'balanced', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const search = tools.find((t) => t.name === 'web_search');
      expect(search?._meta?.[REQUIRED_META_KEY]).toBe(true);
      expect(tools.map((t) => t.name)).toContain('web_fetch');
      for (const query of ['first', 'second', 'third']) {
        const result = await client.callTool({ name: 'web_search', arguments: { query } });
        expect(structuredOf<{ query: string }>(result).query).toBe(query);
      }
      expect(new Set(used).size).toBe(2);
      expect(service.counters.search).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('cancels the service request when the client drops the HTTP request', async () => {
    service.inject('search', { hang: true });
    const abort = new AbortController();
    const call = toolCall(3, 'web_search', { query: 'dropped' });
    const response = await postMcp(replicas[1]!.url, call, {}, abort.signal);
    expect(response.status).toBe(200);
    expect(await eventually(() => service.counters.search === 1)).toBe(true);
    abort.abort();
    expect(await eventually(() => service.abandoned.search === 1)).toBe(true);
  });
});
