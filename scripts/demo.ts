/**
 * `npm run demo`: starts the reference service on loopback, spawns the built server over stdio,
 * and runs a short MCP client session, printing what an agent would see.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startReferenceService } from '../test/reference-service/index.js';

const root = join(import.meta.dirname, '..');
const service = await startReferenceService();
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(root, 'dist/cli.js')],
  env: {
    PATH: process.env.PATH ?? '',
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_LOG_LEVEL: 'warn',
  },
  stderr: 'inherit',
});
const client = new Client({ name: 'demo', version: '1.0.0' });

function show(title: string, body: string) {
  console.log(`\n=== ${title} ===\n${body}`);
}

async function call(name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  show(`${name} ${JSON.stringify(args)}${result.isError ? ' (isError)' : ''}`, text);
  return result;
}

try {
  await client.connect(transport);
  console.log(`reference service on ${service.url}; server spawned over stdio`);
  const { tools } = await client.listTools();
  show(
    'tools/list',
    tools
      .map((t) => `${t.name}${t._meta?.['gateway-tools/required'] ? ' (required)' : ''} — ${t.title}`)
      .join('\n'),
  );
  show('instructions', client.getInstructions() ?? '');
  await call('web_search', { query: 'model context protocol answer', max_results: 3 });
  const first = await call('web_fetch', { url: 'https://example.com/long', max_length: 600 });
  const next = (first.structuredContent as { next_start_index: number | null }).next_start_index;
  if (next !== null)
    await call('web_fetch', { url: 'https://example.com/long', max_length: 600, start_index: next });
  console.log(
    `\nservice calls: search=${service.counters.search}, fetch=${service.counters.fetch} (the second page came from the cache)`,
  );
  await call('web_fetch', { url: 'ftp://example.com/file' });
} finally {
  await client.close();
  await service.close();
}
