import { describe, expect, it } from 'vitest';
import { structuredOf, textOf } from '../../harness/harness.js';
import { unique, useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

interface SearchOut {
  query: string;
  provider: string;
  results: { title: string; url: string; snippet: string; published_at: string | null }[];
  answer: string | null;
}

function search(args: Record<string, unknown>) {
  return gw.conn.client.callTool({ name: 'web_search', arguments: args });
}

describe('web_search against 9router', () => {
  it('discovers a search provider, sends it bare, and lists what the upstream found', async () => {
    const query = unique('discovery');
    const result = await search({ query, max_results: 3 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<SearchOut>(result);
    expect(out.results).toHaveLength(3);
    expect(out.results[0]).toMatchObject({
      title: `Result 1 for ${query}`,
      url: expect.stringMatching(/^https:\/\/example\.com\//),
    });
    expect(textOf(result)).toMatch(
      new RegExp(`^1\\. Result 1 for ${query} — https://example\\.com/\\S+`, 'm'),
    );
    const sent = await gw.upstream();
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0]?.body)).toContain(query);
  });

  for (const [provider, host, served] of [
    ['tavily', 'api.tavily.com', 'tavily'],
    ['exa', 'api.exa.ai', 'exa'],
    ['serper', 'google.serper.dev', 'serper'],
    ['brave', 'api.search.brave.com', 'brave-search'],
    ['brave-search', 'api.search.brave.com', 'brave-search'],
  ] as const) {
    it(`searches with ${provider} and shows its date whole`, async () => {
      const query = unique(provider);
      const result = await search({ query, provider, max_results: 2 });
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = structuredOf<SearchOut>(result);
      expect(out.provider).toBe(served);
      expect(out.results).toHaveLength(2);
      // Every provider dates its first result 15 January 2026, each in its own format.
      expect(out.results[0]?.published_at).toBeTruthy();
      expect(textOf(result).split('\n')[0]).toMatch(/ — 2026-01-15$/);
      const [sent] = await gw.upstream(host);
      expect(JSON.stringify(sent)).toContain(query);
    });
  }

  it('answers from a combo with the provider that served it', async () => {
    const result = await search({ query: unique('combo'), provider: 'search-combo' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf<SearchOut>(result).provider).toBe('tavily');
  });

  it('falls back along the combo when its first provider fails', async () => {
    const result = await search({ query: `${unique('fallback')} fault-500`, provider: 'search-combo' });
    // Both members see the marker, so both fail: the combo's error is what the agent gets.
    const hosts = (await gw.upstream()).map((e) => e.host);
    expect(hosts).toEqual(['api.tavily.com', 'api.exa.ai']);
    expect(result.isError).toBe(true);
  });

  it('maps included and excluded domains to the upstream filters', async () => {
    const query = unique('domains');
    await search({
      query,
      provider: 'exa',
      include_domains: ['github.com'],
      exclude_domains: ['reddit.com'],
    });
    const [sent] = await gw.upstream('api.exa.ai');
    expect(sent?.body).toMatchObject({
      query,
      includeDomains: ['github.com'],
      excludeDomains: ['reddit.com'],
    });
  });

  it('says so when nothing was found', async () => {
    const result = await search({ query: `${unique('nothing')} no-results`, provider: 'tavily' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^No results for /);
    expect(structuredOf<SearchOut>(result).results).toEqual([]);
  });

  it('names the provider account when the upstream refuses its key, not GATEWAY_API_KEY', async () => {
    const result = await search({ query: `${unique('denied')} fault-401`, provider: 'exa' });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/exa/);
    expect(text).not.toMatch(/GATEWAY_API_KEY/);
  });

  it('reports a cooldown with its wait instead of retrying into it', async () => {
    const started = Date.now();
    const first = await search({
      query: `${unique('limited')} fault-429 retry-after-40`,
      provider: 'serper',
    });
    expect(first.isError).toBe(true);
    // 9router locks serper (from 2 s, doubling on every further 429) and says for how long.
    expect(textOf(first)).toMatch(/serper is cooling down for \d+ s in the gateway: retry after \d+ s/);
    // At most one retry, after the wait the gateway named; not a run of retries that each meet
    // a longer cooldown.
    expect((await gw.upstream('google.serper.dev')).length).toBeLessThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(12_000);
  });
});
