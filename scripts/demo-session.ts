/**
 * The demo's session (scripts/demo.ts loads it once the Node.js version is checked): starts the
 * reference service on loopback, spawns the built server over stdio, and runs a short MCP client
 * session, printing what an agent would see.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { docUrl, GATEWAY_GUIDE_URL } from '../src/links.js';
import { type ModelQuestion, startReferenceService } from '../test/reference-service/index.js';

const root = join(import.meta.dirname, '..');
const service = await startReferenceService();
// The reference service's model echoes what it is sent, instructions and all: the tests read back
// what reached it that way, but in a demo it reads like a leaked prompt. Here it answers the
// question as a model would: from the page it was given, or in a few words.
service.setModelAnswer(demoAnswer);
// Files the demo saves go to a temporary directory, not into the checkout, and its billed calls
// (made up by the stand-in) to a ledger of its own there, not the user's ledger and its limits.
const outputDir = mkdtempSync(join(tmpdir(), 'gateway-tools-demo-'));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(root, 'dist/cli.js')],
  env: {
    PATH: process.env.PATH ?? '',
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_LOG_LEVEL: 'warn',
    GATEWAY_OUTPUT_DIR: outputDir,
    GATEWAY_LEDGER_DIR: join(outputDir, 'ledger'),
  },
  stderr: 'inherit',
});
const client = new Client({ name: 'demo', version: '1.0.0' });

function demoAnswer({ input }: ModelQuestion): string {
  // The page comes between two marks the line before it names.
  const mark = /between the two («\d+») marks/.exec(input)?.[1];
  const page = mark ? input.split(`\n${mark}\n`)[1] : undefined;
  if (page === undefined) return 'Hello there from the gateway!';
  const text = page
    .replace(/^Title: .*$/m, '')
    .replace(/^\s*#.*$/m, '')
    .replace(/\s+/g, ' ')
    .trim();
  return `It is a short placeholder page. All it says is: "${text}"`;
}

function show(title: string, body: string) {
  console.log(`\n=== ${title} ===\n${body}`);
}

async function call(name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content
    .map((c) =>
      c.type === 'text' ? c.text : c.type === 'resource_link' ? `[resource_link ${c.uri}]` : `[${c.type}]`,
    )
    .join('\n');
  show(`${name} ${JSON.stringify(args)}${result.isError ? ' (isError)' : ''}`, text);
  return result;
}

try {
  await client.connect(transport);
  console.log(
    `reference service on ${service.url} (a local stand-in for the gateway: its results and answers are made up); ` +
      'the built server spawned over stdio',
  );
  const { tools } = await client.listTools();
  show(
    'tools/list',
    tools
      .map((t) => `${t.name}${t._meta?.['gateway-tools/required'] ? ' (required)' : ''} — ${t.title}`)
      .join('\n'),
  );
  show('instructions', client.getInstructions() ?? '');
  await call('web_search', { query: 'model context protocol', max_results: 3 });
  const first = await call('web_fetch', { url: 'https://example.com/long', max_length: 600 });
  const next = (first.structuredContent as { next_start_index: number | null }).next_start_index;
  if (next !== null)
    await call('web_fetch', { url: 'https://example.com/long', max_length: 600, start_index: next });
  console.log(
    `\nservice calls: search=${service.counters.search}, fetch=${service.counters.fetch} (the second page came from the cache)`,
  );
  await call('web_fetch', { url: 'ftp://example.com/file' });
  await call('web_fetch', { url: 'https://example.com/docs', prompt: 'What is this page about?' });

  await call('list_models', { capability: 'speech' });
  await call('ask_model', { prompt: 'Say hello in five words.' });
  await call('audio_speech', { text: 'The build is green.', voice: 'nova', model: 'openai/tts-1' });
  // A saved file through the protocol, as a client on another machine would get it.
  const [saved] = (await client.listResources()).resources;
  if (saved) {
    const [content] = (await client.readResource({ uri: saved.uri })).contents;
    const bytes = content && 'blob' in content ? Buffer.from(content.blob, 'base64').length : 0;
    show(`resources/read ${saved.uri}`, `${content?.mimeType}, ${bytes} bytes`);
  }

  service.setVideoTiming({ pollsUntilDone: 3 });
  const job = await call('video_generate', { prompt: 'A paper boat on a rainy street', wait_seconds: 0 });
  const jobId = (job.structuredContent as { job_id: string }).job_id;
  await call('video_status', { job_id: jobId, wait_seconds: 20, download: true });
  console.log(`
video submits: ${service.counters['videos.generations']} (billed once); files in ${outputDir}`);
  console.log(`
Next: a real gateway. The gateway guide starts 9router and connects a search provider in about
five minutes: ${GATEWAY_GUIDE_URL}
Then add the server to your agent (${docUrl('README.md', 'add-it-to-your-client')}) and ask
it to search the web. \`npx -y gateway-tools-mcp doctor\` checks each step.`);
} finally {
  await client.close();
  await service.close();
}
