// web_search on both gateways: the cases both can produce run on each (describe.each); combos,
// empty answers and provider faults, which only 9router has, at the end. What only the reference
// service makes is in web-search.test.ts. Both search providers date their first result
// 15 January 2026, each in its own format.
import { describe, expect, it } from 'vitest';
import { BACKENDS, type Backend, billableRequests } from '../../harness/backends.js';
import { expectOneFence } from '../../harness/fence.js';
import { type Connected, structuredOf, textOf } from '../../harness/harness.js';
import { FORGED_SOURCE, HOSTILE_LINES } from '../../harness/hostile-text.js';
import { unique, useRealGateway } from '../../nine-router/use.js';

interface SearchOut {
  query: string;
  provider: string;
  results: { title: string; url: string; snippet: string; published_at: string | null }[];
  answer: string | null;
}

function search(target: Connected, args: Record<string, unknown>) {
  return target.client.callTool({ name: 'web_search', arguments: args });
}

/**
 * The searches of this test, each as where it went and what it carried: the provider id the
 * reference service was sent, or the upstream host 9router reached.
 */
async function searchesSent(backend: Backend): Promise<{ to: string; carried: string }[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => r.route === 'search')
      .map((r) => ({ to: String((r.body as { model?: unknown }).model), carried: JSON.stringify(r.body) }));
  }
  const journal = (await backend.nineRouter?.upstream()) ?? [];
  return journal.map((e) => ({ to: e.host, carried: JSON.stringify({ query: e.query, body: e.body }) }));
}

describe.each(BACKENDS)('web_search on %s', (_name, use) => {
  const backend = use();

  it('discovers a search provider and lists what it found, numbered and structured', async () => {
    const query = unique('discovery');
    const result = await search(backend.conn, { query, max_results: 3 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const text = textOf(result);
    expect(text).toMatch(new RegExp(`^1\\. Result 1 for ${query} — https://example\\.com/\\S+`, 'm'));
    expect(text).toMatch(/^3\. /m);
    expect(text).not.toMatch(/^4\. /m);
    expect(text).not.toContain('{"');
    const out = structuredOf<SearchOut>(result);
    // The reference service lists tavily; 9router's combo is served by tavily.
    expect(out.provider).toBe('tavily');
    expect(out.results).toHaveLength(3);
    expect(out.results[0]).toMatchObject({
      title: `Result 1 for ${query}`,
      url: expect.stringMatching(/^https:\/\/example\.com\//),
    });
    expect(out.answer).toBeNull();
    expect(out.results.some((r) => r.published_at !== null)).toBe(true);
    const sent = await searchesSent(backend);
    // Sent bare (tavily, not tavily/search), once.
    expect(sent.map((s) => s.to)).toEqual([backend.reference ? 'tavily' : 'api.tavily.com']);
    expect(sent[0]?.carried).toContain(query);
  });

  for (const [provider, served, host] of [
    ['tavily', 'tavily', 'api.tavily.com'],
    ['exa', 'exa', 'api.exa.ai'],
    ['serper', 'serper', 'google.serper.dev'],
    ['brave', 'brave-search', 'api.search.brave.com'],
    ['brave-search', 'brave-search', 'api.search.brave.com'],
  ] as const) {
    it(`searches with ${provider} and shows its date whole`, async () => {
      const query = unique(provider);
      const result = await search(backend.conn, { query, provider, max_results: 2 });
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = structuredOf<SearchOut>(result);
      // The gateway names the provider that served it: brave is brave-search there.
      expect(out.provider).toBe(served);
      expect(out.results).toHaveLength(2);
      expect(out.results[0]?.published_at).toBeTruthy();
      expect(
        textOf(result)
          .split('\n')
          .find((line) => line.startsWith('1. ')),
      ).toMatch(/ — 2026-01-15$/);
      const sent = await searchesSent(backend);
      expect(sent.map((s) => s.to)).toEqual([backend.reference ? provider : host]);
      expect(sent[0]?.carried).toContain(query);
    });
  }

  it("fences the sites' words, which cannot close the fence or forge a line, and says when it searched", async () => {
    // The reference service answers an `answer` query with an answer too (9router passes none on).
    const query = `${unique('hostile')} hostile answer`;
    const result = await search(backend.conn, { query, provider: 'tavily', max_results: 3 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<SearchOut & { searched_at: string }>(result);
    const sites = out.results.flatMap((r) => [r.title, r.url, r.snippet]).concat(out.answer ?? '');
    const fence = expectOneFence(textOf(result), [...sites, ...HOSTILE_LINES]);
    expect(fence.before).toBe(`Searched ${out.searched_at} (tavily); the sites' words are `);
    expect(out.searched_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Math.abs(Date.parse(out.searched_at) - Date.now())).toBeLessThan(60_000);
    if (backend.reference) expect(out.answer).toContain(FORGED_SOURCE);
    expect(fence.inside.startsWith('Answer: ')).toBe(out.answer !== null);
    expect(fence.inside).toMatch(/^3\. Result 3 /m);
    expect(fence.inside.split(FORGED_SOURCE).length).toBeGreaterThan(3);
    expect(fence.after).toBe('');
  });

  it('rejects bad arguments with a message naming the field, and sends nothing', async () => {
    for (const [args, field] of [
      [{ query: 'x', max_results: 50 }, 'max_results'],
      [{ query: '' }, 'query'],
      [{}, 'query'],
      [{ query: 'x', search_type: 'images' }, 'search_type'],
      [{ query: 'x', include_domains: ['not a domain'] }, 'include_domains'],
    ] as const) {
      const result = await search(backend.conn, args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toContain(field);
    }
    expect(await billableRequests(backend)).toEqual([]);
  });

  it('sends a search once when the gateway failed after asking the provider, and says it may have been billed', async () => {
    // The reference service answers 504 as a gateway that timed out waiting for the provider;
    // 9router's fake brave-search answers 504 itself (its account then cools down: nothing after
    // this in the run searches with brave-search).
    const query = `${unique('timed-out')} fault-504`;
    backend.reference?.inject('search', {
      status: 504,
      message: '[brave-search] upstream timed out',
      times: 10,
    });
    const result = await search(backend.conn, { query, provider: 'brave-search' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /It may have been billed: the gateway may have passed it to the provider before failing, so it was not sent again\. Calling again is your choice, and may be billed again\.$/,
    );
    expect((await searchesSent(backend)).filter((s) => s.carried.includes(query))).toHaveLength(1);
    // Listed as a call of unknown outcome: it counts against the limits.
    const usage = await backend.conn.client.callTool({ name: 'usage', arguments: {} });
    expect(structuredOf<{ latest: { words: string; outcome: string }[] }>(usage).latest[0]).toMatchObject({
      words: expect.stringContaining('timed-out'),
      outcome: 'unknown',
    });
  });
});

describe('web_search on 9router only', () => {
  const gw = useRealGateway();
  const searchHere = (args: Record<string, unknown>) => search(gw.conn, args);

  it('answers from a combo with the provider that served it', async () => {
    const result = await searchHere({ query: unique('combo'), provider: 'search-combo' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf<SearchOut>(result).provider).toBe('tavily');
  });

  it('falls back along the combo when its first provider fails', async () => {
    const result = await searchHere({ query: `${unique('fallback')} fault-500`, provider: 'search-combo' });
    // Both members see the marker, so both fail: the combo's error is what the agent gets.
    const hosts = (await gw.upstream()).map((e) => e.host);
    expect(hosts).toEqual(['api.tavily.com', 'api.exa.ai']);
    expect(result.isError).toBe(true);
  });

  it('maps included and excluded domains to the upstream filters', async () => {
    const query = unique('domains');
    await searchHere({
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
    const result = await searchHere({ query: `${unique('nothing')} no-results`, provider: 'tavily' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^No results for /);
    expect(structuredOf<SearchOut>(result).results).toEqual([]);
  });

  it('names the provider account when the upstream refuses its key, not GATEWAY_API_KEY', async () => {
    const result = await searchHere({ query: `${unique('denied')} fault-401`, provider: 'exa' });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/exa/);
    expect(text).not.toMatch(/GATEWAY_API_KEY/);
  });

  it('reports a cooldown with its wait instead of retrying into it', async () => {
    const started = Date.now();
    const first = await searchHere({
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
