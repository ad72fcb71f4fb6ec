import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { structuredOf } from '../../harness/harness.js';
import { connectHttp, eventually, HTTP_KINDS, startHttpCli } from '../../harness/http-harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

let service: ReferenceService;
let env: Record<string, string>;

beforeAll(async () => {
  service = await startReferenceService();
  env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey };
});
afterAll(() => service.close());
afterEach(() => {
  service.clearFaults();
  service.resetCounters();
});

describe('graceful shutdown over HTTP', () => {
  it('exits 0 on SIGTERM and SIGINT with clients connected, stdout silent', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await startHttpCli(env);
      const clients = await Promise.all(HTTP_KINDS.map((kind) => connectHttp(server.url, kind)));
      expect(await server.stop(signal)).toBe(0);
      expect(server.stdout()).toBe('');
      expect(server.stderr()).toContain(`shutting down (${signal})`);
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it.each(HTTP_KINDS)('lets a running call finish before exiting (%s)', async (kind) => {
    const server = await startHttpCli(env);
    const client = await connectHttp(server.url, kind);
    service.inject('search', { delayMs: 1_000 });
    const call = client.callTool({ name: 'web_search', arguments: { query: 'in flight' } });
    expect(await eventually(() => service.counters.search === 1)).toBe(true);
    const exited = server.stop('SIGTERM');
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(structuredOf<{ query: string }>(result).query).toBe('in flight');
    expect(await exited).toBe(0);
    expect(service.abandoned.search).toBe(0);
    await client.close();
  });

  it('cancels calls still running after GATEWAY_SHUTDOWN_GRACE_MS and exits 0', async () => {
    const server = await startHttpCli({ ...env, GATEWAY_SHUTDOWN_GRACE_MS: '200' });
    const client = await connectHttp(server.url, 'streamable');
    service.inject('search', { hang: true });
    const call = client.callTool({ name: 'web_search', arguments: { query: 'never answered' } }).then(
      () => 'resolved',
      () => 'rejected',
    );
    expect(await eventually(() => service.counters.search === 1)).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.stderr()).toMatch(/cancelling 1 call\(s\) still running after 200 ms/);
    expect(await eventually(() => service.abandoned.search === 1)).toBe(true);
    await client.close();
    expect(await call).toBe('rejected');
  });
});
