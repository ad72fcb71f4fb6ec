// A search or fetch provider the gateway does not have, named by the call's `provider` or by
// GATEWAY_SEARCH_MODEL / GATEWAY_FETCH_MODEL, is refused with the providers the gateway lists at
// /v1/models/web and what to change, instead of the gateway's bare 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { type Connected, connectInMemory, textOf } from '../../harness/harness.js';

const gw = useGateway();

const WEB_MODELS = [
  { id: 'tavily/search', kind: 'webSearch' },
  { id: 'exa/search', kind: 'webSearch' },
  { id: 'jina-reader/fetch', kind: 'webFetch' },
  { id: 'tavily/fetch', kind: 'webFetch' },
] as const;

async function refused(conn: Connected, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await conn.client.callTool({ name, arguments: args });
  expect(result.isError, textOf(result)).toBe(true);
  return textOf(result);
}

describe('an unknown provider as an argument', () => {
  it('is refused with the search providers the gateway lists', async () => {
    gw.service.setWebModels([...WEB_MODELS]);
    const text = await refused(gw.conn, 'web_search', { query: 'q', provider: 'nope' });
    expect(text).toBe(
      'Web search refused: the gateway has no web search provider "nope" (it said: Unknown provider: nope). ' +
        'It lists tavily and exa: pass one of them as `provider`, or leave `provider` out for the default.',
    );
    expect(gw.service.counters.search).toBe(1);
  });

  it('is refused with the fetch providers the gateway lists', async () => {
    gw.service.setWebModels([...WEB_MODELS]);
    const text = await refused(gw.conn, 'web_fetch', { url: 'https://example.com/', provider: 'reader' });
    expect(text).toBe(
      'Web fetch refused: the gateway has no web fetch provider "reader" (it said: Unknown provider: reader). ' +
        'It lists jina-reader and tavily: pass one of them as `provider`, or leave `provider` out for the default.',
    );
  });

  it('says so when the gateway lists none', async () => {
    gw.service.setWebModels([]);
    expect(await refused(gw.conn, 'web_search', { query: 'q', provider: 'nope' })).toBe(
      'Web search refused: the gateway has no web search provider "nope" (it said: Unknown provider: nope). ' +
        'It lists none at /v1/models/web: add a web search provider to the gateway.',
    );
  });

  it('leaves any other refusal as the gateway said it', async () => {
    gw.service.inject('search', { status: 400, message: 'Missing required field: query' });
    const text = await refused(gw.conn, 'web_search', { query: 'q', provider: 'tavily' });
    expect(text).toMatch(/^Web search failed: The service answered 400: Missing required field: query\. /);
  });
});

describe('an unknown provider as a setting', () => {
  let conn: Connected;
  beforeAll(async () => {
    conn = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_SEARCH_MODEL: 'tavly',
      GATEWAY_FETCH_MODEL: 'jina/fetch',
    });
  });
  afterAll(async () => {
    await conn?.close();
  });

  it('names the setting and the providers to set it to', async () => {
    gw.service.setWebModels([...WEB_MODELS]);
    expect(await refused(conn, 'web_search', { query: 'q' })).toBe(
      'Web search refused: the gateway has no web search provider "tavly", which GATEWAY_SEARCH_MODEL names ' +
        '(it said: Unknown provider: tavly). It lists tavily and exa: set GATEWAY_SEARCH_MODEL to one of them, ' +
        'or pass `provider`.',
    );
    expect(await refused(conn, 'web_fetch', { url: 'https://example.com/' })).toBe(
      'Web fetch refused: the gateway has no web fetch provider "jina", which GATEWAY_FETCH_MODEL names ' +
        '(it said: Unknown provider: jina). It lists jina-reader and tavily: set GATEWAY_FETCH_MODEL to one of them, ' +
        'or pass `provider`.',
    );
  });
});
