// A search or fetch provider 9router does not have: the refusal lists the providers it has at
// /v1/models/web (as the real gateway lists them) and says what to change; nothing reaches a
// provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectInMemory, textOf } from '../../harness/harness.js';
import { unique, useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

async function refused(conn: Connected, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await conn.client.callTool({ name, arguments: args });
  expect(result.isError, textOf(result)).toBe(true);
  return textOf(result);
}

describe('a provider 9router does not have', () => {
  it('as web_search `provider`: lists its search providers', async () => {
    const text = await refused(gw.conn, 'web_search', {
      query: unique('unknown'),
      provider: 'no-such-engine',
    });
    expect(text).toBe(
      'Web search refused: the gateway has no web search provider "no-such-engine" (it said: Unknown provider: no-such-engine). ' +
        'It lists search-combo, tavily, exa, serper and brave: pass one of them as `provider`, or leave `provider` out for the default.',
    );
    expect(await gw.upstream()).toEqual([]);
  });

  it('as web_fetch `provider`: lists its fetch providers', async () => {
    const text = await refused(gw.conn, 'web_fetch', {
      url: `https://example.com/${unique('unknown')}`,
      provider: 'no-such-reader',
    });
    expect(text).toBe(
      'Web fetch refused: the gateway has no web fetch provider "no-such-reader" (it said: Unknown provider: no-such-reader). ' +
        'It lists tavily, exa, jina-reader and firecrawl: pass one of them as `provider`, or leave `provider` out for the default.',
    );
    expect(await gw.upstream()).toEqual([]);
  });

  describe('as GATEWAY_SEARCH_MODEL', () => {
    let conn: Connected;
    beforeAll(async () => {
      conn = await connectInMemory({ ...gw.env, GATEWAY_SEARCH_MODEL: 'tavly' });
    });
    afterAll(async () => {
      await conn?.close();
    });

    it('names the setting and the providers to set it to', async () => {
      const text = await refused(conn, 'web_search', { query: unique('setting') });
      expect(text).toBe(
        'Web search refused: the gateway has no web search provider "tavly", which GATEWAY_SEARCH_MODEL names ' +
          '(it said: Unknown provider: tavly). It lists search-combo, tavily, exa, serper and brave: ' +
          'set GATEWAY_SEARCH_MODEL to one of them, or pass `provider`.',
      );
      expect(await gw.upstream()).toEqual([]);
    });
  });
});
