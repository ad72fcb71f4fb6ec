// A failed call's sentence names the HTTP status once: "The service answered 401: Invalid API
// key." and not "… answered 401: Invalid API key (HTTP 401).", whichever sentence carries it (the
// gateway's own refusal, an upstream provider's, a billed submit whose outcome is unknown). A
// status the sentence does not otherwise say is still added.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { type Connected, connectInMemory, textOf } from '../harness/harness.js';

const gw = useGateway();

function timesSaid(text: string, status: number): number {
  return text.match(new RegExp(`\\b${status}\\b`, 'g'))?.length ?? 0;
}

async function search(): Promise<string> {
  const result = await gw.conn.client.callTool({ name: 'web_search', arguments: { query: 'status' } });
  expect(result.isError).toBe(true);
  return textOf(result);
}

describe('a failed call names its status once', () => {
  describe('with a key the gateway refuses', () => {
    let wrongKey: Connected;
    beforeAll(async () => {
      wrongKey = await connectInMemory({
        GATEWAY_BASE_URL: gw.service.url,
        GATEWAY_API_KEY: 'sk-not-the-key',
      });
    });
    afterAll(async () => {
      await wrongKey?.close();
    });

    it('says "answered 401" and what to set', async () => {
      const result = await wrongKey.client.callTool({ name: 'web_search', arguments: { query: 'key' } });
      expect(textOf(result)).toBe(
        'Web search failed: The service answered 401: Invalid API key. ' +
          'Set GATEWAY_API_KEY (or GATEWAY_API_KEY_FILE) to a key the gateway accepts.',
      );
    });
  });

  it.each([400, 403, 404, 429, 500])('for the gateway’s own %i', async (status) => {
    gw.service.inject('search', { status, message: 'refused here', times: 5 });
    const text = await search();
    expect(text).toMatch(new RegExp(`^Web search failed: The service answered ${status}: refused here\\. `));
    expect(timesSaid(text, status), text).toBe(1);
  });

  it('for an upstream provider’s refusal that says its status itself', async () => {
    gw.service.inject('search', { status: 401, message: '[tavily] tavily returned 401: invalid key' });
    const text = await search();
    expect(text).toMatch(
      /^Web search failed: tavily refused the gateway's tavily account \(tavily returned 401: invalid key\)\. /,
    );
    expect(timesSaid(text, 401), text).toBe(1);
  });

  it('and adds it where nothing else says it', async () => {
    gw.service.inject('search', { status: 500, message: '[tavily] upstream exploded' });
    expect(await search()).toMatch(/tavily failed \(upstream exploded; HTTP 500\)\. Retry shortly/);
  });

  it('for a billed submit whose outcome is unknown', async () => {
    gw.service.inject('videos.generations', { status: 500, message: 'upstream timeout' });
    const result = await gw.conn.client.callTool({ name: 'video_generate', arguments: { prompt: 'a boat' } });
    const text = textOf(result);
    expect(text).toMatch(
      /^Outcome unknown: The service answered 500: upstream timeout\. The request may have reached/,
    );
    expect(timesSaid(text, 500), text).toBe(1);
  });
});
