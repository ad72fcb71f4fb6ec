import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type JournalEntry, unique, useRealGateway } from '../nine-router/use.js';
import { connectInMemory, structuredOf, textOf } from '../support/harness.js';

const gw = useRealGateway();

interface FetchOut {
  url: string;
  title: string | null;
  content: string;
  start_index: number;
  end_index: number;
  total_length: number;
  truncated: boolean;
  next_start_index: number | null;
  next?: string;
  model?: string;
}

function fetchPage(
  args: Record<string, unknown>,
  client = gw.conn.client,
  onprogress?: (p: Progress) => void,
) {
  return client.callTool({ name: 'web_fetch', arguments: args }, CallToolResultSchema, { onprogress });
}

/** A page URL nobody fetched before (the server caches pages by URL). */
const pageUrl = (label: string) => `https://docs.example.org/${unique(label)}`;

/** What each provider was sent, reduced to the page URL it was asked for. */
function targetOf(entry: JournalEntry | undefined): unknown {
  const body = entry?.body as Record<string, unknown> | undefined;
  return body?.url ?? (body?.urls as unknown[] | undefined)?.[0] ?? (body?.ids as unknown[] | undefined)?.[0];
}

const PROVIDERS = [
  ['jina-reader', 'r.jina.ai'],
  ['tavily', 'api.tavily.com'],
  ['firecrawl', 'api.firecrawl.dev'],
  ['exa', 'api.exa.ai'],
] as const;

describe('web_fetch against 9router', () => {
  it('discovers the first fetch provider the gateway lists and returns the page whole', async () => {
    const url = pageUrl('discovered');
    const result = await fetchPage({ url });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<FetchOut>(result);
    expect(out).toMatchObject({ url, start_index: 0, truncated: false, next_start_index: null });
    expect(out.content).toContain(`The text of ${url}.`);
    expect(out.end_index).toBe(out.total_length);
    expect(textOf(result)).toContain(`Source: ${url} (${out.total_length} characters)`);
    // /v1/models/web lists tavily/fetch first among the fetch providers.
    const sent = await gw.upstream();
    expect(sent.map((e) => `${e.host} ${e.path}`)).toEqual(['api.tavily.com /extract']);
    expect(targetOf(sent[0])).toBe(url);
  });

  for (const [provider, host] of PROVIDERS) {
    it(`reads a page with ${provider}`, async () => {
      const url = pageUrl(provider);
      const result = await fetchPage({ url, provider });
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = structuredOf<FetchOut>(result);
      expect(out.url).toBe(url);
      expect(out.content).toContain(`The text of ${url}.`);
      // The page itself, without the reader's header lines (jina's Title:, URL Source:, ...).
      expect(out.content).toMatch(/^# Page \//);
      expect(out.content).not.toMatch(/^(Title|URL Source|Markdown Content):/m);
      // Tavily's extract API has no title; the others name the page.
      const title = provider === 'tavily' ? null : `Page ${new URL(url).pathname}`;
      expect(out.title).toBe(title);
      expect(textOf(result).startsWith(title ? `# ${title}\nSource: ${url}` : `Source: ${url}`)).toBe(true);
      const sent = await gw.upstream();
      expect(sent.map((e) => e.host)).toEqual([host]);
      expect(targetOf(sent[0])).toBe(url);
    });
  }

  it('takes a provider id as the gateway lists it (jina-reader/fetch)', async () => {
    const url = pageUrl('listed-id');
    const result = await fetchPage({ url, provider: 'jina-reader/fetch' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((await gw.upstream()).map((e) => e.host)).toEqual(['r.jina.ai']);
  });

  it('leaves the title out when the page has none', async () => {
    const url = `${pageUrl('untitled')}/untitled`;
    // (For jina the gateway takes the first heading as the title when the page names none.)
    for (const provider of ['firecrawl', 'exa', 'tavily']) {
      const result = await fetchPage({ url, provider });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf<FetchOut>(result).title, provider).toBeNull();
      expect(textOf(result), provider).toMatch(new RegExp(`^Source: ${url} \\(`));
    }
  });

  it('pages a long page by start_index, every later part from the cache', async () => {
    const url = `${pageUrl('paged')}/long-page`;
    const first = await fetchPage({ url, provider: 'exa', max_length: 16_000 });
    expect(first.isError, textOf(first)).toBeFalsy();
    const a = structuredOf<FetchOut>(first);
    expect(a.total_length).toBeGreaterThan(55_000);
    expect(a).toMatchObject({ start_index: 0, truncated: true });
    expect(a.content.length).toBeLessThanOrEqual(16_000);
    expect(a.next_start_index).toBe(a.end_index);
    // The hint says "this tool": a client may list it under another name, or have its own web_fetch.
    expect(textOf(first)).toContain(
      `call this tool again with start_index=${a.next_start_index} (from cache`,
    );
    expect(a.next).toContain(`call this tool again with start_index=${a.next_start_index} (from cache`);
    expect(textOf(first)).not.toContain('web_fetch');

    let whole = a.content;
    let next = a.next_start_index;
    let parts = 1;
    while (next !== null) {
      const more = await fetchPage({ url, provider: 'exa', max_length: 16_000, start_index: next });
      const part = structuredOf<FetchOut>(more);
      expect(part.start_index).toBe(next);
      whole += part.content;
      next = part.next_start_index;
      parts += 1;
    }
    expect(parts).toBe(Math.ceil(a.total_length / a.end_index));
    expect(whole.length).toBe(a.total_length);
    expect(whole).toMatch(/^Line 00001 of /);
    expect(whole).toMatch(/Line 01200 of \S+$/);
    const sent = await gw.upstream();
    expect(sent.map((e) => e.host)).toEqual(['api.exa.ai']);
  });

  it('refuses a start_index past the end of the page without fetching it twice', async () => {
    const url = pageUrl('past-end');
    await fetchPage({ url, provider: 'exa' });
    const result = await fetchPage({ url, provider: 'exa', start_index: 999_999 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/start_index 999999 is past the end of the page \(total_length \d+\)/);
    expect(await gw.upstream()).toHaveLength(1);
  });

  it('asks each provider for the format, and shows what it returned', async () => {
    const url = pageUrl('formats');
    const html = await fetchPage({ url, provider: 'firecrawl', format: 'html' });
    expect(html.isError, textOf(html)).toBeFalsy();
    expect(structuredOf<FetchOut>(html).content).toMatch(/^<html>.*<h1>Page \//s);
    const text = await fetchPage({ url, provider: 'jina-reader', format: 'text' });
    expect(text.isError, textOf(text)).toBeFalsy();
    const sent = await gw.upstream();
    expect(sent.map((e) => [e.host, e.body])).toEqual([
      ['api.firecrawl.dev', { url, formats: ['html'] }],
      // Jina is sent the URL only: its answer is markdown whatever was asked.
      ['r.jina.ai', { url }],
    ]);
  });

  it('asks firecrawl for markdown when plain text is wanted: it has no text format', async () => {
    const url = pageUrl('firecrawl-text');
    const result = await fetchPage({ url, provider: 'firecrawl', format: 'text' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf<FetchOut>(result).content).toContain(`The text of ${url}.`);
    const sent = await gw.upstream('api.firecrawl.dev');
    expect(sent.map((e) => e.body)).toEqual([{ url, formats: ['markdown'] }]);
    expect(sent[0]?.status).toBe(200);
  });

  it('reports a loopback or private page as blocked by the gateway, fetching nothing', async () => {
    for (const url of ['http://127.0.0.1:8080/admin', 'http://10.1.2.3/internal']) {
      const result = await fetchPage({ url, provider: 'jina-reader' });
      expect(result.isError, url).toBe(true);
      expect(textOf(result)).toBe(
        `Web fetch refused: the gateway blocked ${url} (Blocked URL: internal host, HTTP 400): ` +
          'it does not fetch loopback, private or internal addresses; only public pages can be read.',
      );
    }
    expect(await gw.upstream()).toEqual([]);
  });

  it('reports an upstream fault with the provider and does not cache it', async () => {
    const url = `${pageUrl('broken')}/fault-500`;
    const result = await fetchPage({ url, provider: 'exa' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Web fetch failed: exa failed \(fake api\.exa\.ai says 500\)/);
    expect(textOf(result)).toMatch(/exa is cooling down for \d+ s/);
    const before = await gw.upstream('api.exa.ai');
    expect(before.map((e) => e.status)).toEqual([500]);
    // Once the gateway lifts its cooldown the page is asked for again: a failure is not cached.
    await gw.clearCooldowns();
    await fetchPage({ url, provider: 'exa' });
    expect(await gw.upstream('api.exa.ai')).toHaveLength(2);
  });
});

describe('web_fetch with a prompt against 9router', () => {
  it('answers with the first small chat model the gateway lists, through /v1/responses', async () => {
    const url = pageUrl('asked');
    const progress: Progress[] = [];
    const result = await fetchPage(
      { url, provider: 'exa', prompt: 'What does the page say?' },
      undefined,
      (p) => progress.push(p),
    );
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<FetchOut>(result);
    // The gateway lists xai/grok-4.6 first; openai/gpt-5.4-mini is the first small-looking model.
    expect(out).toMatchObject({ url, model: 'openai/gpt-5.4-mini' });
    expect(out.content).toMatch(/^Echo: Question: What does the page say\?\n/);
    expect(out.content).toContain(`The text of ${url}.`);
    expect(textOf(result)).toMatch(/— openai\/gpt-5\.4-mini's answer from the whole page/);
    expect(progress[0]?.message).toMatch(/asking openai\/gpt-5\.4-mini$/);

    // (Listing chat models makes the gateway ask its provider nodes for theirs: left out here.)
    const sent = (await gw.upstream()).filter((e) => !e.path.endsWith('/models'));
    expect(sent.map((e) => `${e.host} ${e.path}`)).toEqual([
      'api.exa.ai /contents',
      // 9router translates the Responses call into a chat completion for OpenAI.
      'api.openai.com /v1/chat/completions',
    ]);
    const chat = sent[1]?.body as { model: string; max_tokens: number; messages: { role: string }[] };
    expect(chat.model).toBe('gpt-5.4-mini');
    expect(chat.max_tokens).toBe(2048);
    expect(chat.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(JSON.stringify(chat.messages[0])).toMatch(/using only the web page/);
  });

  for (const model of ['fakechat/small', 'fakeresp/small']) {
    it(`answers with GATEWAY_SUMMARY_MODEL=${model}`, async () => {
      const conn = await connectInMemory({ ...gw.env, GATEWAY_SUMMARY_MODEL: model });
      try {
        const url = pageUrl('summary-model');
        const result = await fetchPage({ url, provider: 'exa', prompt: 'Which URL?' }, conn.client);
        expect(result.isError, textOf(result)).toBeFalsy();
        const out = structuredOf<FetchOut>(result);
        expect(out.model).toBe(model);
        expect(out.content).toContain(`The text of ${url}.`);
        const [prefix] = model.split('/');
        const [call] = (await gw.upstream('local')).filter((e) => !e.path.endsWith('/models'));
        expect(call?.path).toBe(
          prefix === 'fakechat' ? '/fakechat/v1/chat/completions' : '/fakeresp/v1/responses',
        );
        expect(call?.body).toMatchObject({ model: 'small' });
      } finally {
        await conn.close();
      }
    });
  }

  it('falls back to GATEWAY_CHAT_MODEL and reads the page from the cache', async () => {
    const conn = await connectInMemory({ ...gw.env, GATEWAY_CHAT_MODEL: 'fakechat/small' });
    try {
      const url = pageUrl('chat-model');
      await fetchPage({ url, provider: 'exa' }, conn.client);
      const result = await fetchPage({ url, provider: 'exa', prompt: 'Anything?' }, conn.client);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf<FetchOut>(result).model).toBe('fakechat/small');
      const hosts = (await gw.upstream()).map((e) => e.host);
      expect(hosts).toEqual(['api.exa.ai', 'local']);
    } finally {
      await conn.close();
    }
  });
});
