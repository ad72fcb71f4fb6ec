// The built server (dist/cli.js; `npm run build` first), spawned as an agent runs it, over stdio,
// Streamable HTTP and the legacy SSE transport, searching and fetching through the real gateway.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Spawned, structuredOf, textOf } from '../harness/harness.js';
import {
  connectHttp,
  disconnect,
  HTTP_KINDS,
  type HttpServerProcess,
  startHttpCli,
} from '../harness/http-harness.js';
import { unique, useRealGateway } from '../nine-router/use.js';

const gw = useRealGateway();

interface SearchOut {
  provider: string;
  results: { title: string; url: string }[];
}

interface FetchOut {
  url: string;
  title: string | null;
  content: string;
}

/** A web_search and a web_fetch through `client`, checked in what the agent and the upstream saw. */
async function searchAndFetch(client: Client, label: string): Promise<void> {
  const query = unique(label);
  const found = await client.callTool({
    name: 'web_search',
    arguments: { query, provider: 'exa', max_results: 2 },
  });
  expect(found.isError, textOf(found)).toBeFalsy();
  expect(structuredOf<SearchOut>(found)).toMatchObject({
    provider: 'exa',
    results: [{ title: `Result 1 for ${query}` }, { title: `Result 2 for ${query}` }],
  });
  expect(textOf(found)).toMatch(new RegExp(`^1\\. Result 1 for ${query} — https://example\\.com/`));

  const url = `https://docs.example.org/${unique(label)}`;
  const page = await client.callTool({ name: 'web_fetch', arguments: { url, provider: 'jina-reader' } });
  expect(page.isError, textOf(page)).toBeFalsy();
  expect(structuredOf<FetchOut>(page)).toMatchObject({ url, title: `Page ${new URL(url).pathname}` });
  expect(textOf(page)).toContain(`The text of ${url}.`);

  const journal = await gw.upstream();
  expect(journal.map((e) => `${e.host} ${e.method} ${e.path}`)).toEqual([
    'api.exa.ai POST /search',
    'r.jina.ai POST /',
  ]);
  expect(journal[0]?.body).toMatchObject({ query, numResults: 2 });
  expect(journal[1]?.body).toEqual({ url });
}

describe('the built server over stdio', () => {
  let server: Spawned;
  beforeAll(async () => {
    server = await connectStdio(gw.env);
  });
  afterAll(() => server?.close());

  it('searches and fetches through the real gateway, keeping its key out of the log', async () => {
    await searchAndFetch(server.client, 'stdio');
    expect(server.stderr()).not.toContain(gw.info.apiKey);
  });
});

describe('the built server over HTTP', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttpCli(gw.env);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    expect(server.stderr()).not.toContain(gw.info.apiKey);
  });

  for (const kind of HTTP_KINDS) {
    it(`searches and fetches through the real gateway over ${kind}`, async () => {
      const client = await connectHttp(server.url, kind);
      try {
        await searchAndFetch(client, kind);
      } finally {
        await disconnect(client);
      }
    });
  }
});
