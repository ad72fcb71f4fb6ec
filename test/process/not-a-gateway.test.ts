// Another program at GATEWAY_BASE_URL (a web server, a dev server left running): every tool says
// so and names GATEWAY_BASE_URL, as doctor does, and none tells the agent to add a provider or to
// retry. Through the built server, spawned over stdio, as a client has it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Spawned, tempDir, textOf } from '../harness/harness.js';

let other: Server;
let server: Spawned;

beforeAll(async () => {
  // Answers as a plain file server does: an HTML page for what it does not have, 501 for POST.
  other = createServer((request, response) => {
    request.resume();
    if (request.method === 'POST') {
      response.writeHead(501, { 'content-type': 'text/html' });
      response.end('<html><head><title>Error response</title></head><body>Unsupported method</body></html>');
      return;
    }
    response.writeHead(404, { 'content-type': 'text/html' });
    response.end('<!doctype html><html><head><title>404 Not Found</title></head><body>nothing</body></html>');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const { port } = other.address() as AddressInfo;
  server = await connectStdio({
    GATEWAY_BASE_URL: `http://127.0.0.1:${port}`,
    GATEWAY_API_KEY: 'a-key-for-another-program',
    GATEWAY_LEDGER_DIR: tempDir('gtm-not-a-gateway-ledger-'),
    CWD: tempDir('gtm-not-a-gateway-'),
  });
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => other?.close(resolve));
});

const calls: [string, Record<string, unknown>][] = [
  ['web_search', { query: 'first search' }],
  ['web_fetch', { url: 'https://example.com/' }],
  ['list_models', {}],
  ['ask_model', { prompt: 'hello' }],
  ['audio_speech', { text: 'hello' }],
  ['audio_transcribe', { url: 'https://example.com/a.mp3' }],
  ['video_generate', { prompt: 'a boat', wait_seconds: 0 }],
];

describe('another program at GATEWAY_BASE_URL', () => {
  it.each(calls)(
    '%s says GATEWAY_BASE_URL may name another server, not to add a provider or retry',
    async (name, args) => {
      const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult;
      const text = textOf(result);
      expect(text).toContain('GATEWAY_BASE_URL may name another server');
      expect(text).not.toMatch(/add a web \w+ provider|[Rr]etry shortly|[Rr]etry later/);
    },
  );
});
