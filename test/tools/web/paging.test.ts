import { describe, expect, it } from 'vitest';
import { pageOf } from '../../../src/tools/paging.js';
import { PageCache } from '../../../src/tools/web/page-cache.js';

describe('pageOf', () => {
  it('pages through a text without losing or repeating a character', () => {
    const text = Array.from({ length: 500 }, (_, i) => `line ${i} ${'x'.repeat(i % 37)}`).join('\n');
    let start = 0;
    let rebuilt = '';
    let pages = 0;
    while (true) {
      const page = pageOf(text, start, 1000);
      expect(page.content.length).toBeLessThanOrEqual(1000);
      expect(page.total_length).toBe(text.length);
      rebuilt += page.content;
      pages++;
      if (page.next_start_index === null) break;
      expect(page.truncated).toBe(true);
      start = page.next_start_index;
    }
    expect(rebuilt).toBe(text);
    expect(pages).toBeGreaterThan(text.length / 1000);
  });

  it('prefers a line break near the limit and never splits a surrogate pair', () => {
    const text = `${'a'.repeat(95)}\n${'b'.repeat(100)}`;
    expect(pageOf(text, 0, 100).end_index).toBe(96);
    const emoji = `${'a'.repeat(9)}😀tail`;
    const page = pageOf(emoji, 0, 10);
    expect(page.end_index).toBe(9);
  });
});

describe('PageCache', () => {
  const page = (text: string) => ({ url: 'u', title: null, provider: 'p', text });

  it('loads once for concurrent and later callers', async () => {
    const cache = new PageCache();
    let loads = 0;
    const load = async () => {
      loads++;
      return page('x');
    };
    await Promise.all([cache.get('k', load), cache.get('k', load)]);
    await cache.get('k', load);
    expect(loads).toBe(1);
  });

  it('forgets failed loads, expires old entries and evicts the least recently used', async () => {
    const cache = new PageCache(50, 2, 1_000);
    await expect(cache.get('bad', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    let loads = 0;
    await cache.get('bad', async () => {
      loads++;
      return page('ok');
    });
    expect(loads).toBe(1);
    await cache.get('a', async () => page('a'));
    await cache.get('b', async () => page('b'));
    await new Promise((r) => setTimeout(r, 0));
    expect(cache.size).toBe(2);
    await new Promise((r) => setTimeout(r, 60));
    let reloaded = false;
    await cache.get('a', async () => {
      reloaded = true;
      return page('a');
    });
    expect(reloaded).toBe(true);
  });

  it('bounds the total characters', async () => {
    const cache = new PageCache(60_000, 10, 100);
    await cache.get('a', async () => page('a'.repeat(60)));
    await cache.get('b', async () => page('b'.repeat(60)));
    await new Promise((r) => setTimeout(r, 0));
    expect(cache.size).toBe(1);
  });
});
