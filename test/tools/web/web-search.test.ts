// web_search on the reference service alone: what only it can do on demand (answer with an answer,
// list no search provider) and the request the gateway itself receives. The cases 9router produces
// too run on both gateways in web-search.real.test.ts.
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { type Connected, structuredOf, textOf } from '../../harness/harness.js';

function search(target: Connected, args: Record<string, unknown>) {
  return target.client.callTool({ name: 'web_search', arguments: args });
}

describe('web_search on the reference service only', () => {
  const gw = useGateway();
  const searchHere = (args: Record<string, unknown>) => search(gw.conn, args);

  it('sends the discovered provider without its /search suffix and maps domains to domain_filter', async () => {
    await searchHere({
      query: 'x',
      include_domains: ['https://GitHub.com/foo'],
      exclude_domains: ['reddit.com'],
      time_range: 'week',
      search_type: 'news',
    });
    const sent = gw.service.requests.find((r) => r.route === 'search')?.body as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: 'tavily',
      query: 'x',
      domain_filter: ['github.com', '-reddit.com'],
      time_range: 'week',
      search_type: 'news',
    });
  });

  it('shows the answer when the service gives one, as a string or an object', async () => {
    const plain = await searchHere({ query: 'the answer please' });
    expect(textOf(plain)).toMatch(/^Answer: /m);
    expect(structuredOf<{ answer: string }>(plain).answer).toEqual(expect.any(String));
    const obj = await searchHere({ query: 'objanswer please' });
    expect(structuredOf<{ answer: string }>(obj).answer).toEqual(expect.any(String));
  });

  it('explains what to configure when the service lists no search provider', async () => {
    gw.service.setWebModels(null);
    const result = await searchHere({ query: 'x' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/GATEWAY_SEARCH_MODEL/);
    expect(gw.service.counters.search).toBe(0);
  });

  it('uses an explicit provider argument over discovery, without listing providers', async () => {
    const result = await searchHere({ query: 'x', provider: 'brave' });
    expect(structuredOf<{ provider: string }>(result).provider).toBe('brave-search');
    expect(gw.service.requests.find((r) => r.route === 'search')?.body).toMatchObject({ model: 'brave' });
    expect(gw.service.counters['models.kind']).toBe(0);
  });
});
