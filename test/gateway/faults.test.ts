import { describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { connectInMemory, textOf } from '../harness/harness.js';

const SECRET = 'sk-live-very-secret-0123456789';

const gw = useGateway({
  apiKey: SECRET,
  env: { GATEWAY_TIMEOUT_MS: '1500', GATEWAY_MAX_RETRIES: '2' },
});

const search = () =>
  gw.conn.client.callTool({ name: 'web_search', arguments: { query: 'faults', provider: 'tavily' } });

/** A free call: a video job's status, polled (the job is started first, its submit not counted). */
async function poll() {
  const started = await gw.conn.client.callTool({
    name: 'video_generate',
    arguments: { prompt: `a job to poll ${Math.random()}`, wait_seconds: 0 },
  });
  const { job_id } = started.structuredContent as { job_id: string };
  gw.service.resetCounters();
  return () => gw.conn.client.callTool({ name: 'video_status', arguments: { job_id, wait_seconds: 0 } });
}

describe('service faults reach the agent as actionable errors', () => {
  it('401 without a key tells to set GATEWAY_API_KEY', async () => {
    const keyless = await connectInMemory({ GATEWAY_BASE_URL: gw.service.url });
    try {
      const result = await keyless.client.callTool({
        name: 'web_search',
        arguments: { query: 'x', provider: 'tavily' },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/401.*Set GATEWAY_API_KEY/s);
    } finally {
      await keyless.close();
    }
  });

  it('429 with Retry-After is retried after the wait and then succeeds', async () => {
    gw.service.inject('search', { status: 429, headers: { 'retry-after': '1' } });
    const started = Date.now();
    const result = await search();
    expect(result.isError).toBeFalsy();
    expect(gw.service.counters.search).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('429 with a long Retry-After is reported at once with the wait', async () => {
    gw.service.inject('search', { status: 429, headers: { 'retry-after': '120' }, message: 'rate limited' });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/retry after 120 s/);
    expect(gw.service.counters.search).toBe(1);
  });

  it('a 429 whose Retry-After is met by another is reported after one wait, not chased', async () => {
    gw.service.inject('search', { status: 429, headers: { 'retry-after': '1' }, times: 10 });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/retry after 1 s/);
    expect(gw.service.counters.search).toBe(2);
  });

  it('a free call waits out a short Retry-After on any status (an account cooling down)', async () => {
    const status = await poll();
    gw.service.inject('videos.poll', {
      status: 500,
      headers: { 'retry-after': '1' },
      message: '[xai] xai returned 500: down (reset after 1s)',
    });
    const result = await status();
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(gw.service.counters['videos.poll']).toBe(2);
  });

  it('a billed call does not wait out a Retry-After on a status that may follow a provider’s work', async () => {
    gw.service.inject('search', {
      status: 500,
      headers: { 'retry-after': '1' },
      message: '[tavily] tavily returned 500: down (reset after 1s)',
    });
    expect((await search()).isError).toBe(true);
    expect(gw.service.counters.search).toBe(1);
  });

  it('a provider-tagged 401 names that provider’s account in the gateway, not GATEWAY_API_KEY', async () => {
    gw.service.inject('search', {
      status: 401,
      headers: { 'retry-after': '120' },
      message: '[tavily] tavily returned 401: invalid key (reset after 2m)',
    });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "Web search failed: tavily refused the gateway's tavily account (tavily returned 401: invalid key). " +
        "tavily is cooling down for 120 s in the gateway: fix that account's key in the gateway's dashboard, " +
        'or choose another provider or model. Fixed the key already? The gateway tries the account again in 120 s, ' +
        'and repeats this refusal until then.',
    );
    expect(gw.service.counters.search).toBe(1);
  });

  it('a provider the gateway could not reach is the network between them, not its key', async () => {
    gw.service.inject('search', {
      status: 502,
      headers: { 'retry-after': '30' },
      message: '[tavily] tavily error: fetch failed (reset after 30s)',
    });
    expect(textOf(await search())).toContain(
      'Web search failed: The gateway could not reach tavily (tavily error: fetch failed; HTTP 502): a network ' +
        "failure between the gateway and tavily, not a refused key. Check the network of the gateway's machine " +
        '(its connection, proxy, firewall or DNS), then retry after 30 s, or choose another provider or model.',
    );
  });

  it('a cooldown said only in the message, "(reset after 1m 30s)", is reported with its wait', async () => {
    gw.service.inject('search', { status: 401, message: '[exa] exa returned 401: no (reset after 1m 30s)' });
    expect(textOf(await search())).toMatch(/exa is cooling down for 90 s in the gateway/);
    expect(gw.service.counters.search).toBe(1);
  });

  it('a free call is retried on 502/503/504 within the bound, then reported', async () => {
    const status = await poll();
    for (const code of [502, 503, 504]) {
      gw.service.resetCounters();
      gw.service.inject('videos.poll', { status: code, times: 10 });
      const result = await status();
      expect(result.isError).toBe(true);
      expect(gw.service.counters['videos.poll']).toBe(3);
    }
  });

  it('a billed call is retried when the gateway turned it away before any provider (503, no account free)', async () => {
    gw.service.inject('search', { status: 503, times: 10 });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/503/);
    expect(textOf(result)).not.toMatch(/may have been billed/);
    expect(gw.service.counters.search).toBe(3);
  });

  it('a billed call is sent once when the gateway failed after asking the provider (502, 504), and says it may have been billed', async () => {
    for (const code of [502, 504]) {
      gw.service.resetCounters();
      gw.service.inject('search', { status: code, message: '[tavily] upstream timed out', times: 10 });
      const result = await search();
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /It may have been billed: the gateway may have passed it to the provider before failing, so it was not sent again\. Calling again is your choice, and may be billed again\.$/,
      );
      expect(gw.service.counters.search).toBe(1);
    }
  });

  it('500 is reported without retry', async () => {
    gw.service.inject('search', { status: 500, message: '[tavily] upstream exploded' });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/tavily failed \(upstream exploded; HTTP 500\)\. Retry shortly/);
    expect(gw.service.counters.search).toBe(1);
  });

  it('a hang past the timeout ends in a timeout error', async () => {
    gw.service.inject('search', { hang: true, times: 10 });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/did not answer .* within 1.5 s.*GATEWAY_TIMEOUT_MS/s);
  });

  it('a free call is retried after a connection reset, and the reset reported when it persists', async () => {
    const status = await poll();
    gw.service.inject('videos.poll', { reset: true });
    expect((await status()).isError).toBeFalsy();
    expect(gw.service.counters['videos.poll']).toBe(2);
    gw.service.resetCounters();
    gw.service.inject('videos.poll', { reset: true, times: 10 });
    const result = await status();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/connection to the service failed/);
  });

  it('a billed call cut off after it was sent is not sent again, and says it may have been billed', async () => {
    gw.service.inject('search', { reset: true });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/connection to the service failed.*It may have been billed/s);
    expect(gw.service.counters.search).toBe(1);
  });

  it('reads an error given as a plain string, with a numeric code, or as an HTML page', async () => {
    gw.service.inject('search', {
      status: 400,
      errorAsString: true,
      message: 'No credentials for provider: tavily',
    });
    // Cooling down after an error, or not configured: the answer alone cannot tell which.
    expect(textOf(await search())).toMatch(
      /No credentials for provider: tavily; HTTP 400\)\. Either tavily is cooling down .* or the gateway has no tavily account/s,
    );
    gw.service.inject('search', { status: 403, numericCode: true, message: 'quota exceeded' });
    expect(textOf(await search())).toMatch(/answered 403: quota exceeded\. /);
    gw.service.inject('search', { status: 502, html: true, times: 10 });
    expect(textOf(await search())).toMatch(/non-JSON answer: 502 Bad Gateway/);
  });

  it('reports truncated JSON as an unreadable answer', async () => {
    gw.service.inject('search', { truncatedJson: true });
    const result = await search();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not valid JSON/);
  });

  it('never echoes the API key, even when the service does', async () => {
    gw.service.inject('search', { status: 401, message: `invalid key ${SECRET}` });
    gw.service.inject('fetch', { status: 400, message: `Authorization: Bearer ${SECRET} refused` });
    const a = textOf(await search());
    const b = textOf(
      await gw.conn.client.callTool({
        name: 'web_fetch',
        arguments: { url: 'https://example.com/x', provider: 'jina-reader' },
      }),
    );
    expect(a).toContain('invalid key ***');
    expect(a + b).not.toContain(SECRET);
  });

  it('stays up for the next call after every fault', async () => {
    const result = await search();
    expect(result.isError).toBeFalsy();
  });
});
