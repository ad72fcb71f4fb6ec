import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ForwardProxy, startForwardProxy } from '../harness/forward-proxy.js';
import { type Connected, connectInMemory, connectStdio, tempDir, textOf } from '../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../harness/third-party-host.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

// Behind a corporate proxy the gateway and the hosts audio and videos come from are reachable only
// through HTTPS_PROXY / HTTP_PROXY. Here the proxy is the only way to reach the `.invalid` names
// (they resolve nowhere): it routes them to local servers. A request that bypasses the proxy fails,
// and the proxy's journal shows which requests went through it.

const GATEWAY_HOST = 'gateway.proxied.invalid';
const MEDIA_HOST = 'media.proxied.invalid';

let gateway: ReferenceService;
let media: ThirdPartyHost;
let internal: ThirdPartyHost;
let proxy: ForwardProxy;
const open: Connected[] = [];

beforeAll(async () => {
  gateway = await startReferenceService();
  media = await startThirdPartyHost();
  internal = await startThirdPartyHost();
  proxy = await startForwardProxy((host) => {
    if (host === GATEWAY_HOST) return { host: '127.0.0.1', port: Number(new URL(gateway.url).port) };
    if (host === MEDIA_HOST) return { host: '127.0.0.1', port: Number(new URL(media.url).port) };
    return undefined;
  });
});
afterEach(async () => {
  for (const conn of open.splice(0)) await conn.close();
  proxy.journal.length = 0;
  media.requests.length = 0;
  internal.requests.length = 0;
  gateway.reset();
});
afterAll(async () => {
  await proxy.close();
  await media.close();
  await internal.close();
  await gateway.close();
});

async function server(env: Record<string, string>): Promise<Connected> {
  const conn = await connectInMemory({
    GATEWAY_BASE_URL: `http://${GATEWAY_HOST}`,
    GATEWAY_API_KEY: gateway.apiKey,
    CWD: tempDir('gtm-proxy-'),
    ...env,
  });
  open.push(conn);
  return conn;
}

const search = (conn: Connected) =>
  conn.client.callTool({
    name: 'web_search',
    arguments: { query: 'through the proxy' },
  }) as Promise<CallToolResult>;
const transcribe = (conn: Connected, url: string) =>
  conn.client.callTool({
    name: 'audio_transcribe',
    arguments: { url, model: 'groq/whisper-large-v3' },
  }) as Promise<CallToolResult>;

const REFUSED = /Refused to connect to .*loopback, private or link-local/s;

describe('the gateway behind a proxy', () => {
  it('is reached through HTTP_PROXY, with the key, and answers', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url });
    const result = await search(conn);
    expect(textOf(result)).toMatch(/^1\. Result 1 for through the proxy/m);
    expect(proxy.hosts()).toContain(GATEWAY_HOST);
    const searched = gateway.requests.find((r) => r.route === 'search');
    expect(searched?.headers.authorization).toBe(`Bearer ${gateway.apiKey}`);
  });

  it('reads the lowercase variables too', async () => {
    const conn = await server({ http_proxy: proxy.url });
    expect((await search(conn)).isError).toBeFalsy();
    expect(proxy.hosts()).toContain(GATEWAY_HOST);
  });

  it('uses HTTPS_PROXY only for https URLs', async () => {
    const conn = await server({ HTTPS_PROXY: proxy.url });
    const result = await search(conn);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Cannot reach the service/);
    expect(proxy.journal).toEqual([]);
  });

  it('goes direct to a host NO_PROXY names', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url, NO_PROXY: `example.com, .proxied.invalid` });
    const result = await search(conn);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Cannot reach the service/);
    expect(proxy.journal).toEqual([]);
    expect(gateway.requests).toEqual([]);
  });

  it('reaches a gateway on loopback directly, whatever NO_PROXY says', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url, GATEWAY_BASE_URL: gateway.url });
    expect((await search(conn)).isError).toBeFalsy();
    expect(proxy.journal).toEqual([]);
  });

  it('is reached through the proxy by the built server too', async () => {
    const spawned = await connectStdio({
      GATEWAY_BASE_URL: `http://${GATEWAY_HOST}`,
      GATEWAY_API_KEY: gateway.apiKey,
      HTTP_PROXY: proxy.url,
    });
    try {
      const result = (await spawned.client.callTool({
        name: 'web_search',
        arguments: { query: 'through the proxy' },
      })) as CallToolResult;
      expect(textOf(result)).toMatch(/^1\. Result 1 for through the proxy/m);
      expect(proxy.hosts()).toContain(GATEWAY_HOST);
    } finally {
      await spawned.close();
    }
  });

  it('refuses a proxy variable that is not a proxy URL, and never shows its password', async () => {
    await expect(server({ HTTPS_PROXY: 'socks5://user:hunter22@proxy.corp:1080' })).rejects.toThrow(
      /^invalid HTTPS_PROXY: socks5: proxies are not supported/,
    );
    await expect(server({ HTTPS_PROXY: 'http://user:hunter22@[bad' })).rejects.toThrow(
      /^invalid HTTPS_PROXY: not a URL/,
    );
    await expect(server({ HTTPS_PROXY: 'http://user:hunter22@[bad' })).rejects.not.toThrow(/hunter22/);
  });
});

describe('downloads from third-party hosts behind a proxy', () => {
  it('fetch an audio URL through the proxy, without the gateway key', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url });
    const result = await transcribe(conn, `http://${MEDIA_HOST}/audio/talk.mp3`);
    expect(result.isError).toBeFalsy();
    expect(proxy.hosts()).toContain(MEDIA_HOST);
    expect(media.requests.map((r) => r.path)).toEqual(['/audio/talk.mp3']);
    expect(media.requests[0]?.authorization).toBeUndefined();
    expect(gateway.counters.transcriptions).toBe(1);
  });

  it('go direct to a host NO_PROXY names', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url, NO_PROXY: MEDIA_HOST });
    const result = await transcribe(conn, `http://${MEDIA_HOST}/audio/talk.mp3`);
    expect(result.isError).toBe(true);
    expect(proxy.hosts()).not.toContain(MEDIA_HOST);
    expect(media.requests).toEqual([]);
  });

  it('still refuse loopback, private and link-local targets, and never hand them to the proxy', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url });
    const port = new URL(internal.url).port;
    for (const url of [
      `http://localhost:${port}/audio/talk.mp3`, // a name: resolved here before the proxy sees it
      `${internal.url}/audio/talk.mp3`,
      `http://[::1]:${port}/audio/talk.mp3`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/internal.mp3',
    ]) {
      const result = await transcribe(conn, url);
      expect(result.isError, url).toBe(true);
      expect(textOf(result), url).toMatch(REFUSED);
    }
    expect(proxy.hosts().filter((h) => h !== GATEWAY_HOST)).toEqual([]);
    expect(internal.requests).toEqual([]);
    expect(gateway.counters.transcriptions).toBe(0);
  });

  it('refuse a redirect into the local network before it reaches the proxy', async () => {
    const conn = await server({ HTTP_PROXY: proxy.url });
    const to = `http://localhost:${new URL(internal.url).port}/audio/talk.mp3`;
    const result = await transcribe(conn, `http://${MEDIA_HOST}/redirect?to=${encodeURIComponent(to)}`);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(REFUSED);
    expect(proxy.hosts().filter((h) => h !== GATEWAY_HOST)).toEqual([MEDIA_HOST]);
    expect(internal.requests).toEqual([]);
  });
});
