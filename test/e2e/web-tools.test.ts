import { CallToolResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/gateway.js';
import { structuredOf, textOf } from '../support/harness.js';

const gw = useGateway();

describe('web_search', () => {
  it('returns a compact numbered list and structured results', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'mcp servers', max_results: 3 },
    });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toMatch(/^1\. Result 1 for mcp servers — https:\/\/\S+/m);
    expect(text).toMatch(/^3\. /m);
    expect(text).not.toMatch(/^4\. /m);
    expect(text).not.toContain('{"');
    const out = structuredOf<{
      provider: string;
      results: { url: string; published_at: string | null }[];
      answer: null;
    }>(result);
    expect(out.provider).toBe('tavily');
    expect(out.results).toHaveLength(3);
    expect(out.answer).toBeNull();
    expect(out.results.some((r) => r.published_at !== null)).toBe(true);
  });

  it('sends the discovered provider without its /search suffix and maps domains to domain_filter', async () => {
    await gw.conn.client.callTool({
      name: 'web_search',
      arguments: {
        query: 'x',
        include_domains: ['https://GitHub.com/foo'],
        exclude_domains: ['reddit.com'],
        time_range: 'week',
        search_type: 'news',
      },
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
    const plain = await gw.conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'the answer please' },
    });
    expect(textOf(plain)).toMatch(/^Answer: /);
    expect(structuredOf<{ answer: string }>(plain).answer).toEqual(expect.any(String));
    const obj = await gw.conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'objanswer please' },
    });
    expect(structuredOf<{ answer: string }>(obj).answer).toEqual(expect.any(String));
  });

  it('explains what to configure when the service lists no search provider', async () => {
    gw.service.setWebModels(null);
    const result = await gw.conn.client.callTool({ name: 'web_search', arguments: { query: 'x' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/GATEWAY_SEARCH_MODEL/);
    expect(gw.service.counters.search).toBe(0);
  });

  it('uses an explicit provider argument over discovery', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'x', provider: 'brave' },
    });
    // The gateway names the provider that served it: brave is brave-search there.
    expect(structuredOf<{ provider: string }>(result).provider).toBe('brave-search');
    expect(gw.service.requests.find((r) => r.route === 'search')?.body).toMatchObject({ model: 'brave' });
    expect(gw.service.counters['models.kind']).toBe(0);
  });

  it('rejects bad arguments with a message naming the field, and sends nothing', async () => {
    for (const [args, field] of [
      [{ query: 'x', max_results: 50 }, 'max_results'],
      [{ query: '' }, 'query'],
      [{}, 'query'],
      [{ query: 'x', search_type: 'images' }, 'search_type'],
      [{ query: 'x', include_domains: ['not a domain'] }, 'include_domains'],
    ] as const) {
      const result = await gw.conn.client.callTool({ name: 'web_search', arguments: args });
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toContain(field);
    }
    expect(gw.service.counters.search).toBe(0);
  });
});

describe('web_fetch', () => {
  it('returns a short page whole, with its title', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_fetch',
      arguments: { url: 'https://example.com/docs' },
    });
    expect(result.isError).toBeFalsy();
    const out = structuredOf<{
      title: string;
      truncated: boolean;
      next_start_index: null;
      total_length: number;
      content: string;
    }>(result);
    expect(out.truncated).toBe(false);
    expect(out.next_start_index).toBeNull();
    expect(out.content.length).toBe(out.total_length);
    expect(textOf(result)).toMatch(/^# Page \/docs\nSource: https:\/\/example\.com\/docs/);
    const sent = gw.service.requests.find((r) => r.route === 'fetch')?.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'jina-reader', url: 'https://example.com/docs', format: 'markdown' });
  });

  it('pages a long page with a continuation hint and serves later pages from the cache', async () => {
    const url = 'https://example.com/long';
    const first = await gw.conn.client.callTool({
      name: 'web_fetch',
      arguments: { url, max_length: 10_000 },
    });
    const a = structuredOf<{
      content: string;
      total_length: number;
      end_index: number;
      next_start_index: number;
      truncated: boolean;
    }>(first);
    expect(a.truncated).toBe(true);
    expect(a.total_length).toBeGreaterThan(50_000);
    expect(a.content.length).toBeLessThanOrEqual(10_000);
    expect(a.next_start_index).toBe(a.end_index);
    expect(textOf(first)).toContain(`start_index=${a.next_start_index}`);

    let text = a.content;
    let next: number | null = a.next_start_index;
    while (next !== null) {
      const more = await gw.conn.client.callTool({
        name: 'web_fetch',
        arguments: { url, max_length: 10_000, start_index: next },
      });
      const page = structuredOf<{ content: string; start_index: number; next_start_index: number | null }>(
        more,
      );
      expect(page.start_index).toBe(next);
      text += page.content;
      next = page.next_start_index;
    }
    expect(text.length).toBe(a.total_length);
    expect(text).toMatch(/^Line 00001/m);
    expect(gw.service.counters.fetch).toBe(1);
  });

  it('refuses a start_index past the end', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_fetch',
      arguments: { url: 'https://example.com/short', start_index: 999_999 },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/past the end of the page \(total_length \d+\)/);
  });

  it('accepts only http and https URLs', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'javascript:alert(1)', 'not a url']) {
      const result = await gw.conn.client.callTool({ name: 'web_fetch', arguments: { url } });
      expect(result.isError, url).toBe(true);
      expect(textOf(result)).toContain('url');
    }
    expect(gw.service.counters.fetch).toBe(0);
  });

  it('reports a page the service blocks', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_fetch',
      arguments: { url: 'http://127.0.0.1:1/admin' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Blocked URL/);
  });
});

describe('tools/call validation', () => {
  it('answers invalid arguments with an error result naming each argument, and calls nothing', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'q'.repeat(401), max_results: 0, include_domains: ['not a domain'] },
    });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^Invalid arguments for web_search: /);
    expect(text).toContain('query must be at most 400 characters');
    expect(text).toContain('max_results must be a whole number from 1 to 20, not 0');
    expect(text).toContain('include_domains[0]: must be a domain such as github.com');
    expect(gw.service.counters.search).toBe(0);
  });

  it('answers an unknown tool with an error result that lists the tools', async () => {
    const result = await gw.conn.client.callTool({ name: 'web_serch', arguments: { query: 'x' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Unknown tool "web_serch"; this server has web_search, web_fetch, /);
  });

  it('answers a tools/call whose arguments are not an object with -32602 (Invalid params)', async () => {
    for (const args of ['query', [1, 2], 42, null]) {
      const call = gw.conn.client.request(
        { method: 'tools/call', params: { name: 'web_search', arguments: args as never } },
        CallToolResultSchema,
      );
      await expect(call, JSON.stringify(args)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    }
    expect(gw.service.counters.search).toBe(0);
  });

  it('applies defaults before the tool runs', async () => {
    const result = await gw.conn.client.callTool({ name: 'web_search', arguments: { query: 'defaults' } });
    expect(result.isError).toBeFalsy();
    expect(gw.service.requests.at(-1)?.body).toMatchObject({ max_results: 5, search_type: 'web' });
  });
});
