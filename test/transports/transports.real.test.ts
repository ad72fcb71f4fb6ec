// The built server (dist/cli.js; `npm run build` first), spawned as an agent runs it, over stdio,
// Streamable HTTP and the legacy SSE transport, searching and fetching through the real gateway,
// for a client of each era of MCP (2025: initialize and sessions; 2026-07-28: per request).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEra, ERAS, type EraClient, type Reach } from '../harness/eras.js';
import { structuredOf, textOf } from '../harness/harness.js';
import { type HttpServerProcess, startHttpCli } from '../harness/http-harness.js';
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
async function searchAndFetch(client: EraClient, label: string): Promise<void> {
  const query = unique(label);
  const found = await client.callTool('web_search', { query, provider: 'exa', max_results: 2 });
  expect(found.isError, textOf(found)).toBeFalsy();
  expect(structuredOf<SearchOut>(found)).toMatchObject({
    provider: 'exa',
    results: [{ title: `Result 1 for ${query}` }, { title: `Result 2 for ${query}` }],
  });
  expect(textOf(found)).toMatch(new RegExp(`^1\\. Result 1 for ${query} — https://example\\.com/`, 'm'));

  const url = `https://docs.example.org/${unique(label)}`;
  const page = await client.callTool('web_fetch', { url, provider: 'jina-reader' });
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

let http: HttpServerProcess;
beforeAll(async () => {
  http = await startHttpCli(gw.env);
});
afterAll(async () => {
  expect(await http.stop()).toBe(0);
  expect(http.stderr()).not.toContain(gw.info.apiKey);
});

describe.each(ERAS)('a %s client of the built server', (era) => {
  const ways: [string, () => Reach][] = [
    ['stdio', () => ({ stdio: gw.env })],
    ['Streamable HTTP', () => ({ http: http.url, kind: 'streamable' })],
    ...(era === '2025-era'
      ? [['legacy SSE', () => ({ http: http.url, kind: 'sse' })] as [string, () => Reach]]
      : []),
  ];
  it.each(ways)(
    'searches and fetches through the real gateway over %s, keeping its key out of the log',
    async (way, reach) => {
      const client = await connectEra(era, reach());
      try {
        await searchAndFetch(client, `${era} ${way}`);
        expect(client.stderr()).not.toContain(gw.info.apiKey);
      } finally {
        await client.close();
      }
    },
  );
});
