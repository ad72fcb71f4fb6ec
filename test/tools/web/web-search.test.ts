// web_search on the reference service alone: what only it can do on demand (answer with an answer,
// list no search provider) and the request the gateway itself receives. The cases 9router produces
// too run on both gateways in web-search.real.test.ts.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connectAs } from '../../harness/client-session.js';
import { expectOneFence } from '../../harness/fence.js';
import { useGateway } from '../../harness/gateway.js';
import { type Connected, structuredOf, textOf } from '../../harness/harness.js';
import { FORGED_SOURCE, HOSTILE_LINES } from '../../harness/hostile-text.js';
import { modelViewClient } from '../../harness/model-view.js';

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

  it("fences the sites' words and says when it searched, in each real client's model view", async () => {
    const env = { GATEWAY_BASE_URL: gw.service.url, GATEWAY_API_KEY: gw.service.apiKey };
    for (const name of ['Claude Code', 'Codex CLI', 'Gemini CLI'] as const) {
      const client = modelViewClient(name);
      const session = await connectAs(client.info, env);
      try {
        const before = Math.floor(Date.now() / 1000) * 1000;
        const result = (await session.client.callTool({
          name: 'web_search',
          arguments: { query: 'hostile answer', max_results: 3 },
        })) as CallToolResult;
        const view = client.render(result, session.tools.get('web_search') ?? {});
        const fence = expectOneFence(view, HOSTILE_LINES);
        const searched = /^Searched (\S+) \(tavily\); the sites' words are $/.exec(fence.before)?.[1];
        expect(Date.parse(searched ?? ''), name).toBeGreaterThanOrEqual(before);
        expect(fence.inside, name).toMatch(/^Answer: Short answer about hostile answer\./);
        expect(fence.inside, name).toMatch(/^3\. Result 3 /m);
        expect(fence.inside, name).toContain(FORGED_SOURCE);
        expect(fence.after, name).toBe('');
      } finally {
        await session.close();
      }
    }
  });

  it('says when it searched in the structured content too', async () => {
    const result = await searchHere({ query: 'when' });
    const out = structuredOf<{ searched_at: string }>(result);
    expect(out.searched_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(textOf(result)).toContain(`Searched ${out.searched_at} (tavily); `);
  });
});
