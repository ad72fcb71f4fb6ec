// web_fetch, with and without a prompt, on both gateways: the cases both can produce run on each
// (describe.each); provider faults, provider nodes and each provider's own request shape, which
// only 9router has, at the end. What only the reference service makes is in web-fetch.test.ts.
// Both make a page's text from its URL: `untitled` leaves the title out, `long` makes it
// about 60,000 characters.
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  BACKENDS,
  type BackendName,
  billableRequests,
  pageFetchesSent as fetchesSent,
} from '../../harness/backends.js';
import { expectOneFence } from '../../harness/fence.js';
import { type Connected, connectInMemory, structuredOf, textOf } from '../../harness/harness.js';
import { unique, useRealGateway } from '../../nine-router/use.js';

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
  prompt?: string;
  model?: string;
}

function fetchPage(target: Connected, args: Record<string, unknown>, onprogress?: (p: Progress) => void) {
  return target.client.callTool({ name: 'web_fetch', arguments: args }, CallToolResultSchema, { onprogress });
}

/** A page URL nobody fetched before (the server caches pages by URL). */
const pageUrl = (label: string) => `https://docs.example.org/${unique(label)}`;

/** What each gateway lists and answers: its first fetch provider, a page's sentence, its models. */
const GATEWAY: Record<
  BackendName,
  {
    firstFetchProvider: string;
    sentence(url: string): string;
    longPageLines: number;
    /** The model web_fetch picks for a prompt: the first small-looking chat model listed. */
    smallModel: string;
    /** A chat model the gateway answers with, for GATEWAY_CHAT_MODEL. */
    chatModel: string;
  }
> = {
  'the reference service': {
    firstFetchProvider: 'jina-reader',
    sentence: (url) => `This is the content of ${url}.`,
    longPageLines: 1000,
    smallModel: 'openai/gpt-4o-mini',
    chatModel: 'anthropic/claude-sonnet-4',
  },
  '9router': {
    firstFetchProvider: 'tavily',
    sentence: (url) => `The text of ${url}.`,
    longPageLines: 1200,
    // It lists xai/grok-4.6 first; openai/gpt-5.4-mini is the first small-looking model.
    smallModel: 'openai/gpt-5.4-mini',
    chatModel: 'fakechat/small',
  },
};

const PROVIDERS = ['jina-reader', 'tavily', 'firecrawl', 'exa'] as const;

describe.each(BACKENDS)('web_fetch on %s', (name, use) => {
  const backend = use();
  const gateway = GATEWAY[name];
  const fetchHere = (args: Record<string, unknown>, onprogress?: (p: Progress) => void) =>
    fetchPage(backend.conn, args, onprogress);

  it('discovers the first fetch provider the gateway lists and returns a short page whole', async () => {
    const url = pageUrl('discovered');
    const result = await fetchHere({ url });
    expect(result.isError, textOf(result)).toBeFalsy();
    const out = structuredOf<FetchOut>(result);
    expect(out).toMatchObject({ url, start_index: 0, truncated: false, next_start_index: null });
    expect(out.content).toContain(gateway.sentence(url));
    expect(out.end_index).toBe(out.total_length);
    expect(out.content.length).toBe(out.total_length);
    expect(textOf(result)).toContain(`Source: ${url} (${out.total_length} characters)`);
    expect(await fetchesSent(backend)).toEqual([{ provider: gateway.firstFetchProvider, url }]);
  });

  for (const provider of PROVIDERS) {
    it(`reads a page with ${provider}`, async () => {
      const url = pageUrl(provider);
      const result = await fetchHere({ url, provider });
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = structuredOf<FetchOut>(result);
      expect(out.url).toBe(url);
      expect(out.content).toContain(gateway.sentence(url));
      // The page itself, without the reader's header lines (jina's Title:, URL Source:, ...).
      expect(out.content).toMatch(/^# Page \//);
      expect(out.content).not.toMatch(/^(Title|URL Source|Markdown Content):/m);
      // Tavily's extract API has no title; the others name the page.
      const title = provider === 'tavily' ? null : `Page ${new URL(url).pathname}`;
      expect(out.title).toBe(title);
      // The page's heading once: the page's own, not the title's again above it.
      const text = textOf(result);
      expect(text.startsWith(`Source: ${url}`)).toBe(true);
      expect(text.split('\n').filter((line) => line === `# ${title}`)).toHaveLength(title ? 1 : 0);
      expect(await fetchesSent(backend)).toEqual([{ provider, url }]);
    });
  }

  it('takes a provider id as the gateway lists it (jina-reader/fetch)', async () => {
    const url = pageUrl('listed-id');
    const result = await fetchHere({ url, provider: 'jina-reader/fetch' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await fetchesSent(backend)).toEqual([{ provider: 'jina-reader', url }]);
  });

  it('leaves the title out when the page has none', async () => {
    const url = `${pageUrl('untitled')}/untitled`;
    // (For jina 9router takes the first heading as the title when the page names none.)
    for (const provider of ['firecrawl', 'exa', 'tavily']) {
      const result = await fetchHere({ url, provider });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf<FetchOut>(result).title, provider).toBeNull();
      expect(textOf(result), provider).toMatch(new RegExp(`^Source: ${url} \\(`));
    }
  });

  it('pages a long page by start_index with a continuation hint, every later part from the cache', async () => {
    const url = `${pageUrl('paged')}/long-page`;
    const first = await fetchHere({ url, provider: 'exa', max_length: 16_000 });
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
      const more = await fetchHere({ url, provider: 'exa', max_length: 16_000, start_index: next });
      const part = structuredOf<FetchOut>(more);
      expect(part.start_index).toBe(next);
      whole += part.content;
      next = part.next_start_index;
      parts += 1;
    }
    expect(parts).toBe(Math.ceil(a.total_length / a.end_index));
    expect(whole.length).toBe(a.total_length);
    expect(whole).toMatch(/^Line 00001\b/m);
    const last = String(gateway.longPageLines).padStart(5, '0');
    expect(whole.split('\n').at(-1)).toMatch(new RegExp(`^Line ${last}\\b`));
    expect(await fetchesSent(backend)).toEqual([{ provider: 'exa', url }]);
  });

  it('refuses a start_index past the end of the page without fetching it twice', async () => {
    const url = pageUrl('past-end');
    await fetchHere({ url, provider: 'exa' });
    const result = await fetchHere({ url, provider: 'exa', start_index: 999_999 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/start_index 999999 is past the end of the page \(total_length \d+\)/);
    expect(await fetchesSent(backend)).toHaveLength(1);
  });

  it('returns the format asked for: html from firecrawl', async () => {
    const url = pageUrl('formats');
    const html = await fetchHere({ url, provider: 'firecrawl', format: 'html' });
    expect(html.isError, textOf(html)).toBeFalsy();
    expect(structuredOf<FetchOut>(html).content).toMatch(/^<html>.*<h1>Page \//s);
  });

  it('reports a loopback or private page as blocked by the gateway', async () => {
    for (const url of ['http://127.0.0.1:8080/admin', 'http://10.1.2.3/internal']) {
      const result = await fetchHere({ url, provider: 'jina-reader' });
      expect(result.isError, url).toBe(true);
      expect(textOf(result)).toBe(
        `Web fetch refused: the gateway blocked ${url} (Blocked URL: internal host, HTTP 400): ` +
          'it does not fetch loopback, private or internal addresses; only public pages can be read.',
      );
    }
  });

  it('accepts only http and https URLs', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'javascript:alert(1)', 'not a url']) {
      const result = await fetchHere({ url });
      expect(result.isError, url).toBe(true);
      expect(textOf(result)).toContain('url');
    }
    expect(await billableRequests(backend)).toEqual([]);
  });

  describe('with a prompt', () => {
    it('answers from the page with the first small chat model the gateway lists, instead of the page', async () => {
      const url = pageUrl('asked');
      const progress: Progress[] = [];
      const result = await fetchHere({ url, provider: 'exa', prompt: 'What does the page say?' }, (p) =>
        progress.push(p),
      );
      expect(result.isError, textOf(result)).toBeFalsy();
      const out = structuredOf<FetchOut>(result);
      expect(out).toMatchObject({
        url,
        title: `Page ${new URL(url).pathname}`,
        model: gateway.smallModel,
        start_index: 0,
        truncated: false,
        next_start_index: null,
      });
      expect(out.end_index).toBe(out.total_length);
      // The echo model answers with what it was given: the question and the page.
      expect(out.content).toContain('Echo: Question: What does the page say?');
      expect(out.content).toContain(gateway.sentence(url));
      const head = `Source: ${url} — ${gateway.smallModel}'s answer from the whole page`;
      expect(textOf(result).startsWith(head), textOf(result)).toBe(true);
      // The title is the page's words: inside the fence, with the answer drawn from the page.
      const fence = expectOneFence(textOf(result), [out.content]);
      expect(fence.inside.startsWith(`# Page ${new URL(url).pathname}\n\n`)).toBe(true);
      expect(progress[0]?.message?.endsWith(`asking ${gateway.smallModel}`), progress[0]?.message).toBe(true);
    });

    it('falls back to GATEWAY_CHAT_MODEL, and reads a page fetched before from the cache', async () => {
      const conn = await connectInMemory({ ...backend.env, GATEWAY_CHAT_MODEL: gateway.chatModel });
      try {
        const url = pageUrl('chat-model');
        await fetchPage(conn, { url, provider: 'exa' });
        const result = await fetchPage(conn, { url, provider: 'exa', prompt: 'Anything?' });
        expect(result.isError, textOf(result)).toBeFalsy();
        expect(structuredOf<FetchOut>(result).model).toBe(gateway.chatModel);
        expect(await fetchesSent(backend)).toEqual([{ provider: 'exa', url }]);
      } finally {
        await conn.close();
      }
    });

    it('bounds the prompt, and sends nothing', async () => {
      for (const prompt of ['', 'x'.repeat(2_001)]) {
        const result = await fetchHere({ url: pageUrl('bounded'), prompt });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toContain('prompt');
      }
      expect(await billableRequests(backend)).toEqual([]);
    });
  });
});

describe('web_fetch on 9router only', () => {
  const gw = useRealGateway();
  const fetchHere = (args: Record<string, unknown>) => fetchPage(gw.conn, args);

  it('fetches nothing upstream for a loopback or private page', async () => {
    for (const url of ['http://127.0.0.1:8080/admin', 'http://10.1.2.3/internal']) {
      expect((await fetchHere({ url, provider: 'jina-reader' })).isError, url).toBe(true);
    }
    expect(await gw.upstream()).toEqual([]);
  });

  it('asks each provider for the format in its own terms', async () => {
    const url = pageUrl('formats');
    expect((await fetchHere({ url, provider: 'firecrawl', format: 'html' })).isError).toBeFalsy();
    const text = await fetchHere({ url, provider: 'jina-reader', format: 'text' });
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
    const result = await fetchHere({ url, provider: 'firecrawl', format: 'text' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf<FetchOut>(result).content).toContain(`The text of ${url}.`);
    const sent = await gw.upstream('api.firecrawl.dev');
    expect(sent.map((e) => e.body)).toEqual([{ url, formats: ['markdown'] }]);
    expect(sent[0]?.status).toBe(200);
  });

  it('reports an upstream fault with the provider and does not cache it', async () => {
    const url = `${pageUrl('broken')}/fault-500`;
    const result = await fetchHere({ url, provider: 'exa' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Web fetch failed: exa failed \(fake api\.exa\.ai says 500\)/);
    expect(textOf(result)).toMatch(/exa is cooling down for \d+ s/);
    const before = await gw.upstream('api.exa.ai');
    expect(before.map((e) => e.status)).toEqual([500]);
    // Once the gateway lifts its cooldown the page is asked for again: a failure is not cached.
    await gw.clearCooldowns();
    await fetchHere({ url, provider: 'exa' });
    expect(await gw.upstream('api.exa.ai')).toHaveLength(2);
  });

  it('asks OpenAI for a prompt through a chat completion the gateway makes of the Responses call', async () => {
    const url = pageUrl('asked');
    const result = await fetchHere({ url, provider: 'exa', prompt: 'What does the page say?' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf<FetchOut>(result).content).toMatch(/^Echo: Question: What does the page say\?\n/);
    // (Listing chat models makes the gateway ask its provider nodes for theirs: left out here.)
    const sent = (await gw.upstream()).filter((e) => !e.path.endsWith('/models'));
    expect(sent.map((e) => `${e.host} ${e.path}`)).toEqual([
      'api.exa.ai /contents',
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
        const result = await fetchPage(conn, { url, provider: 'exa', prompt: 'Which URL?' });
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
});
