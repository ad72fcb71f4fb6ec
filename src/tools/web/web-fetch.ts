import { z } from 'zod';
import { modelIdSchema } from '../../config/model-ids.js';
import { abortable } from '../../gateway/deadline.js';
import { fetchPage, type PageFormat } from '../../gateway/endpoints/fetch.js';
import { ServiceError } from '../../gateway/errors.js';
import { excerpt, formatCount, oneLine } from '../../lib/text.js';
import { isHttpUrl } from '../../lib/urls.js';
import { UserError } from '../../lib/user-error.js';
import { sendBilled } from '../billing.js';
import { ANNOTATIONS, defineTool, type ToolContext, textArgument } from '../define.js';
import { questionConfirmation } from '../models/ask.js';
import { defaultModel } from '../models/default-models.js';
import { type Page, pageOf, pagingInput, pagingOutput, rangeText } from '../paging.js';
import { capped, cappedOrNull, RESULT_BUDGET } from '../result-budget.js';
import { nextStep, success } from '../results.js';
import { type CachedPage, PageCache, pagesOf, sharedPagesOf } from './page-cache.js';
import { resolveWebProvider, withProviderNamed } from './providers.js';
import { answerFromPage, MAX_PAGE_PROMPT_CHARS, noSummaryModelMessage } from './web-fetch-prompt.js';

/** Pages longer than this are cut (and say so): enough for any document worth paging through. */
const MAX_PAGE_CHARS = 5_000_000;

const inputSchema = {
  url: z
    .string()
    .trim()
    .max(4096, 'url must be at most 4096 characters')
    .refine(isHttpUrl, 'url must be an absolute http:// or https:// URL'),
  format: z.enum(['markdown', 'text', 'html']).default('markdown'),
  ...pagingInput,
  provider: modelIdSchema({ field: 'provider', example: 'jina-reader', max: 100 })
    .optional()
    .describe('e.g. jina-reader'),
  prompt: textArgument('prompt', MAX_PAGE_PROMPT_CHARS)
    .optional()
    .describe('A question a small model answers from the page alone'),
};

const outputSchema = {
  url: z.string(),
  title: z.string().nullable(),
  content: z.string(),
  ...pagingOutput,
  /** Prompt mode only: the model that answered (`content` is then its answer). */
  model: z.string().optional(),
  next: nextStep,
};

export const webFetch = defineTool({
  name: 'web_fetch',
  group: 'fetch',
  title: 'Web fetch',
  description:
    'Read a web page as markdown, in parts: each result gives the next start_index (from a cache, no ' +
    'second fetch). With prompt, a small model answers from the page instead (billed).',
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.lookup,
  confirm: {
    kind: 'chat',
    async call(args, ctx) {
      if (!args.prompt) return undefined;
      const model = (await defaultModel('summary', ctx.runtime, ctx.signal)).id;
      if (!model) return undefined;
      return questionConfirmation({ tool: 'web_fetch', text: args.prompt }, model, {
        action: 'Ask a model about a web page',
        details: [
          ['Question', excerpt(args.prompt)],
          ['Page', args.url],
        ],
      });
    },
  },
  async run(args, ctx) {
    const provider = await resolveWebProvider('fetch', args.provider, ctx);
    // The answering model is chosen before the fetch, so a missing one costs nothing.
    const summary = args.prompt ? await defaultModel('summary', ctx.runtime, ctx.signal) : null;
    if (summary && !summary.id) throw new UserError(noSummaryModelMessage());
    const page = await withProviderNamed('fetch', provider, ctx, () =>
      loadPage(provider.id, args.url, args.format, ctx),
    );
    if (args.start_index > 0 && args.start_index >= page.text.length) {
      throw new UserError(
        `start_index ${args.start_index} is past the end of the page (total_length ${page.text.length}). ` +
          'Use start_index=0 or a smaller offset.',
      );
    }
    if (args.prompt && summary?.id) {
      return await answerFromPage(
        page,
        { prompt: args.prompt, start_index: args.start_index },
        summary.id,
        ctx,
      );
    }
    const slice = pageOf(page.text, args.start_index, args.max_length);
    const next = pageNext(slice);
    const structured = { url: page.url, title: page.title, ...slice, ...(next ? { next } : {}) };
    return success(formatPage(structured), structured);
  },
});

/**
 * The whole page, from the cache or from the service (once, whatever the paging). The load is
 * shared by concurrent callers; a caller that cancels stops waiting, the load goes on for the rest.
 * An address the gateway will not read is answered as a refusal, not as a failed call.
 */
export function loadPage(
  provider: string,
  url: string,
  format: PageFormat,
  ctx: ToolContext,
): Promise<CachedPage> {
  return abortable(loadShared(provider, url, format, ctx), ctx.signal).catch((error: unknown) => {
    throw blockedUrlRefusal(error, url) ?? error;
  });
}

function loadShared(provider: string, url: string, asked: PageFormat, ctx: ToolContext): Promise<CachedPage> {
  const format = formatFor(provider, asked);
  const key = PageCache.key(provider, format, url);
  // This process's cache, then the one shared with the other processes: only a page in neither is
  // fetched (by one process, the others waiting for it), so only that is a billed call.
  return pagesOf(ctx.runtime).get(key, () => sharedPagesOf(ctx.runtime).getOrLoad(key, fetchPageOnce));

  async function fetchPageOnce(): Promise<CachedPage> {
    const call = {
      kind: 'fetch',
      tool: 'web_fetch',
      model: provider,
      text: url,
      options: { format },
    } as const;
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
      url: capped(fetched.url, RESULT_BUDGET.url),
      title: cappedOrNull(fetched.title, RESULT_BUDGET.name),
      provider: fetched.provider,
      text,
    };
  }
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

/**
 * What to do after this part: read on, or (an empty page) try another format or provider. The
 * hint says "this tool", never its name: a client may list it under another name, or have a
 * web_fetch of its own (Gemini CLI does).
 */
function pageNext(p: ReturnType<typeof pageOf>): string | undefined {
  if (p.truncated) {
    return (
      `${formatCount(p.total_length - p.end_index)} more characters: call this tool again with ` +
      `start_index=${p.next_start_index} (from cache, no second fetch).`
    );
  }
  if (!p.content.trim()) return 'The page has no readable text: try format "html" or another provider.';
  return undefined;
}

/**
 * The part as markdown: the page's title as a heading on its first part (unless the text begins
 * with that heading itself), where it comes from and which characters these are, the text, and
 * how to read on. A later part is named by its source line alone.
 */
function formatPage(p: { url: string; title: string | null; content: string; next?: string } & Page): string {
  const heading = p.title ? `# ${oneLine(p.title, Number.POSITIVE_INFINITY)}` : '';
  const titled = heading && p.start_index === 0 && !p.content.trimStart().startsWith(heading);
  const head = `${titled ? `${heading}\n` : ''}Source: ${p.url} (${rangeText(p)})`;
  const body = p.content.trim() ? p.content : '';
  return `${head}\n\n${body}${p.next ? `${body ? '\n\n' : ''}[${p.next}]` : ''}`;
}
