// Another program at GATEWAY_BASE_URL (a web server, a dev server left running): every tool says
// so and names GATEWAY_BASE_URL, as doctor does, and none tells the agent to add a provider or to
// retry, whether the program answers with web pages or with JSON (a local API's 404s). Through
// the built server, spawned over stdio, as a client has it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, runCli, type Spawned, tempDir, textOf } from '../harness/harness.js';

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

const PROGRAMS: [string, Answer][] = [
  [
    // As a plain file server does: an HTML page for what it does not have, 501 for POST.
    'a web server (HTML)',
    (request, response) => {
      if (request.method === 'POST') {
        response.writeHead(501, { 'content-type': 'text/html' });
        response.end(
          '<html><head><title>Error response</title></head><body>Unsupported method</body></html>',
        );
        return;
      }
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end(
        '<!doctype html><html><head><title>404 Not Found</title></head><body>nothing</body></html>',
      );
    },
  ],
  [
    // As a local API does (FastAPI's default): JSON for every route it lacks, whatever the method.
    'a local API (JSON 404s)',
    (_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ detail: 'Not Found' }));
    },
  ],
];

const calls: [string, Record<string, unknown>][] = [
  ['web_search', { query: 'first search' }],
  ['web_fetch', { url: 'https://example.com/' }],
  ['list_models', {}],
  ['ask_model', { prompt: 'hello' }],
  ['audio_speech', { text: 'hello' }],
  ['audio_transcribe', { url: 'https://example.com/a.mp3' }],
  ['video_generate', { prompt: 'a boat', wait_seconds: 0 }],
];

describe.each(PROGRAMS)('another program at GATEWAY_BASE_URL: %s', (_label, answer) => {
  let other: Server;
  let server: Spawned;
  let env: Record<string, string>;

  beforeAll(async () => {
    other = createServer((request, response) => {
      request.resume();
      answer(request, response);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as AddressInfo;
    env = {
      GATEWAY_BASE_URL: `http://127.0.0.1:${port}`,
      GATEWAY_API_KEY: 'a-key-for-another-program',
      GATEWAY_LEDGER_DIR: tempDir('gtm-not-a-gateway-ledger-'),
      CWD: tempDir('gtm-not-a-gateway-'),
    };
    server = await connectStdio(env);
  });

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => other?.close(resolve));
  });

  it.each(calls)(
    '%s says GATEWAY_BASE_URL may name another server, not to add a provider or retry',
    async (name, args) => {
      const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult;
      const text = textOf(result);
      expect(result.isError, text).toBe(true);
      expect(text).toContain('GATEWAY_BASE_URL may name another server');
      expect(text).not.toMatch(/add a web \w+ provider|[Rr]etry shortly|[Rr]etry later|call list_models/);
    },
  );

  it('doctor says it does not look like a gateway', async () => {
    const run = await runCli(['doctor'], env);
    expect(run.stdout).toMatch(
      /✗ Something answers at http:\/\/127\.0\.0\.1:\d+, but it does not look like a 9router gateway/,
    );
    expect(run.code).toBe(1);
  });
});
