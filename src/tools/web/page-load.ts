import { abortable } from '../../gateway/deadline.js';
import { fetchPage, type PageFormat } from '../../gateway/endpoints/fetch.js';
import { ServiceError } from '../../gateway/errors.js';
import { formatCount, isoSeconds, oneLine } from '../../lib/text.js';
import { UserError } from '../../lib/user-error.js';
import { sendBilled } from '../billing.js';
import type { ToolContext } from '../define.js';
import { capped, cappedOrNull, RESULT_BUDGET } from '../result-budget.js';
import { type CachedPage, PageCache, pagesOf, sharedPagesOf } from './page-cache.js';

/** Pages longer than this are cut (and say so): enough for any document worth paging through. */
const MAX_PAGE_CHARS = 5_000_000;

/** A page as a call got it: from a cache, or fetched by the gateway for this call. */
export interface LoadedPage {
  page: CachedPage & { fetched_at: string };
  from_cache: boolean;
}

/**
 * The whole page, from the cache or from the service (once, whatever the paging), no older than
 * `maxAgeSeconds` (0: fetched again, billed again; unset: whatever the cache still holds). The
 * load is shared by concurrent callers; a caller that cancels stops waiting, the load goes on for
 * the rest. An address the gateway will not read is answered as a refusal, not as a failed call.
 */
export function loadPage(
  provider: string,
  url: string,
  format: PageFormat,
  maxAgeSeconds: number | undefined,
  ctx: ToolContext,
): Promise<LoadedPage> {
  return abortable(loadFresh(provider, url, format, maxAgeSeconds, ctx), ctx.signal).catch(
    (error: unknown) => {
      throw blockedUrlRefusal(error, url) ?? error;
    },
  );
}

async function loadFresh(
  provider: string,
  url: string,
  asked: PageFormat,
  maxAgeSeconds: number | undefined,
  ctx: ToolContext,
): Promise<LoadedPage> {
  const format = formatFor(provider, asked);
  const key = PageCache.key(provider, format, url);
  const pages = pagesOf(ctx.runtime);
  const shared = sharedPagesOf(ctx.runtime);
  let fetchedHere = false;
  const fetchOnce = () => {
    fetchedHere = true;
    return fetchPageOnce(provider, url, format, ctx);
  };
  if (maxAgeSeconds !== 0) {
    // This process's cache, then the one shared with the other processes: only a page in neither
    // is fetched (by one process, the others waiting for it), so only that is a billed call.
    const page = await pages.get(key, () => shared.getOrLoad(key, fetchOnce));
    const fresh =
      fetchedHere ||
      maxAgeSeconds === undefined ||
      Date.now() - Date.parse(page.fetched_at ?? '') <= maxAgeSeconds * 1000;
    // The very object the cache holds, so what is worked out once per page (its tokens) is kept.
    // A copy kept without its time (by an older server sharing the cache) is fetched again.
    if (page.fetched_at && fresh) return { page: page as LoadedPage['page'], from_cache: !fetchedHere };
  }
  // Asked for afresh, or the copy in the cache is older than allowed: fetched again, and kept in
  // place of the old copy for every process.
  const page = await fetchPageOnce(provider, url, format, ctx);
  pages.put(key, page);
  await shared.set(key, page).catch(() => undefined);
  return { page, from_cache: false };
}

async function fetchPageOnce(
  provider: string,
  url: string,
  format: PageFormat,
  ctx: ToolContext,
): Promise<CachedPage & { fetched_at: string }> {
  const call = { kind: 'fetch', tool: 'web_fetch', model: provider, text: url, options: { format } } as const;
  const fetched = await sendBilled(ctx, call, () =>
    fetchPage(
      ctx.runtime.service.client,
      { model: provider, url, format },
      // The load is shared by concurrent callers, so one caller's cancellation must not abort it.
      undefined,
    ),
  );
  const text =
    fetched.text.length > MAX_PAGE_CHARS
      ? `${fetched.text.slice(0, MAX_PAGE_CHARS)}\n\n[Page cut at ${formatCount(MAX_PAGE_CHARS)} characters.]`
      : fetched.text;
  // The page is paged; its URL and title are not, so they are bounded here.
  return {
    url: capped(url, RESULT_BUDGET.url),
    final_url: cappedOrNull(fetched.final_url, RESULT_BUDGET.url),
    title: cappedOrNull(fetched.title, RESULT_BUDGET.name),
    provider: fetched.provider,
    text,
    fetched_at: isoSeconds(new Date()),
  };
}

/** When and how the page was got, as every result of it says. */
export interface Freshness {
  fetched_at: string;
  from_cache: boolean;
  final_url: string | null;
}

/** "fetched 2026-11-28T10:22:03Z, from cache: yes", and the final URL after a redirect. */
export function freshnessText(f: Freshness): string {
  const moved = f.final_url ? `; final URL ${oneLine(f.final_url, Number.POSITIVE_INFINITY)}` : '';
  return `fetched ${f.fetched_at}, from cache: ${f.from_cache ? 'yes' : 'no'}${moved}`;
}

/**
 * The gateway's refusal of a target URL (400 "Blocked URL: ..."), said as what it is: not a
 * wrong argument to fix by trial, but an address the gateway will not read. Null for any other error.
 */
function blockedUrlRefusal(error: unknown, url: string): UserError | null {
  if (!(error instanceof ServiceError) || error.status !== 400) return null;
  const reason = /Blocked URL:[^.]*/i.exec(error.message)?.[0];
  if (!reason) return null;
  const why = /internal host/i.test(reason)
    ? ' it does not fetch loopback, private or internal addresses; only public pages can be read.'
    : '';
  return new UserError(
    `Web fetch refused: the gateway blocked ${url} (${reason}, HTTP 400)${why ? `:${why}` : '.'}`,
  );
}

/**
 * The format to ask the provider for. The gateway passes the format on to firecrawl as is, and
 * firecrawl has no `text` format: it refuses the request, and the gateway then locks its account
 * for every caller. Markdown is the nearest plain text it has.
 */
function formatFor(provider: string, asked: PageFormat): PageFormat {
  return asked === 'text' && provider === 'firecrawl' ? 'markdown' : asked;
}
