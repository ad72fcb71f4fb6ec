/**
 * Floor for the per-call latency benchmark: the least an SDK server can do for a search — validate
 * the arguments, forward them to the service, return the hits as text and structured content.
 * No timeouts, retries, error mapping or secret scrubbing: not a product, a yardstick.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { request } from 'undici';
import { z } from 'zod';

interface Hit {
  title: string;
  url: string;
  snippet: string;
  published_at: string | null;
}

serveStdio(() => {
  const server = new McpServer({ name: 'forwarding', version: '1.0.0' });
  server.registerTool(
    'web_search',
    {
      description: 'Search the web.',
      inputSchema: z.object({ query: z.string(), max_results: z.number().int().optional() }),
      outputSchema: z.object({
        query: z.string(),
        results: z.array(
          z.object({
            title: z.string(),
            url: z.string(),
            snippet: z.string(),
            published_at: z.string().nullable(),
          }),
        ),
      }),
    },
    async ({ query, max_results }) => {
      const res = await request(`${process.env.GATEWAY_BASE_URL}/v1/search`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${process.env.GATEWAY_API_KEY}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'tavily', query, max_results, search_type: 'web' }),
      });
      const body = (await res.body.json()) as { results: Hit[] };
      const results = body.results.map((r) => ({
        title: r.title,
        url: r.url,
        snippet: r.snippet,
        published_at: r.published_at ?? null,
      }));
      const text = results.map((r, i) => `${i + 1}. ${r.title} — ${r.url}\n${r.snippet}`).join('\n');
      return { content: [{ type: 'text', text }], structuredContent: { query, results } };
    },
  );
  return server;
});
process.stdin.on('end', () => process.exit(0));
