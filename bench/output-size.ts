import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type BenchService, ROOT, startAndList } from './lib.js';

export interface OutputSizeResult {
  catalogBytes: number;
  searchTextChars: number;
  bareChars: number;
}

/**
 * Context cost: the size of tools/list (all tools, output schemas included) and the characters of
 * web_search's text for 10 results against the bare titles, URLs and snippets it carries.
 */
export async function benchOutputSize(service: BenchService): Promise<OutputSizeResult> {
  // A ledger of its own: the user's may belong to another version of the server.
  const env = {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_LEDGER_DIR: mkdtempSync(join(tmpdir(), 'gtm-bench-size-')),
  };
  const server = await startAndList(join(ROOT, 'dist/cli.js'), env);
  const result = (await server.client.callTool({
    name: 'web_search',
    arguments: { query: 'context window efficiency', max_results: 10 },
  })) as CallToolResult;
  await server.client.close();
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  const hits = (result.structuredContent as { results: { title: string; url: string; snippet: string }[] })
    .results;
  const bare = hits.map((h) => `${h.title}\n${h.url}\n${h.snippet}\n`).join('\n');
  return { catalogBytes: server.listBytes, searchTextChars: text.length, bareChars: bare.length };
}
