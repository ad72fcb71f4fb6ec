// Whatever the gateway answers, the agent gets a result it can read: the built server
// (dist/cli.js; `npm run build` first) over stdio, as agents run it, against the real gateway with
// a provider that answers absurdly large fields.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Spawned, structuredOf, textOf } from '../harness/harness.js';
import { unique, useRealGateway } from '../nine-router/use.js';

const gw = useRealGateway();
const MiB = 1024 * 1024;

let server: Spawned;
beforeAll(async () => {
  server = await connectStdio(gw.env);
});
afterAll(async () => {
  await server?.close();
});

describe('a result stays within its budget', () => {
  it('bounds a 6 MB page title, says so, and the session goes on', async () => {
    const url = `https://docs.example.org/${unique('titled')}/huge-title-6000000`;
    const result = await server.client.callTool(
      { name: 'web_fetch', arguments: { url, provider: 'jina-reader' } },
      undefined,
      { timeout: 60_000 },
    );
    expect(result.isError, textOf(result).slice(0, 300)).toBeFalsy();
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(MiB);
    const { title, url: seen } = structuredOf<{ title: string; url: string }>(result);
    expect(title).toMatch(/^T{300}… \[cut: 5,999,700 more characters\]$/);
    expect(seen).toBe(url);
    expect(textOf(result)).toContain('[cut: 5,999,700 more characters]');
    // What reached the provider was the ordinary request; the session still answers.
    expect((await gw.upstream('r.jina.ai')).map((e) => e.body)).toEqual([{ url }]);
    const next = await server.client.callTool({ name: 'list_models', arguments: { capability: 'fetch' } });
    expect(next.isError, textOf(next)).toBeFalsy();
  });

  it('bounds every search title and snippet, in the text and the structured content', async () => {
    const query = `${unique('big')} huge-fields-300000`;
    const result = await server.client.callTool(
      { name: 'web_search', arguments: { query, provider: 'tavily', max_results: 20 } },
      undefined,
      { timeout: 60_000 },
    );
    expect(result.isError, textOf(result).slice(0, 300)).toBeFalsy();
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(MiB);
    const { results } = structuredOf<{ results: { title: string; snippet: string }[] }>(result);
    expect(results).toHaveLength(20);
    for (const r of results) {
      expect(r.title).toMatch(/… \[cut: 299,700 more characters\]$/);
      expect(r.snippet).toMatch(/… \[cut: 299,000 more characters\]$/);
    }
    expect(textOf(result).split('[cut: ').length - 1).toBe(40);
  });
});
