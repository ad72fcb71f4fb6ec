import { z } from 'zod';
import { modelIdSchema } from '../../config/model-ids.js';
import { fenced, fenceMark } from '../../lib/fence.js';
import { excerpt, formatCount, oneLine } from '../../lib/text.js';
import { estimateTokens } from '../../lib/tokens.js';
import { isHttpUrl } from '../../lib/urls.js';
import { UserError } from '../../lib/user-error.js';
import { ANNOTATIONS, defineTool, textArgument } from '../define.js';
import { questionConfirmation } from '../models/ask.js';
import { defaultModel } from '../models/default-models.js';
import { type Page, pagingInput, pagingOutput, rangeText } from '../paging.js';
import { nextStep, success } from '../results.js';
import { type Freshness, freshnessText, loadPage } from './page-load.js';
import { CUT_TOKENS, type PagePart, partCap, partOf, RESULT_TOKENS } from './page-part.js';
import { resolveWebProvider, withProviderNamed } from './providers.js';
import { answerFromPage, MAX_PAGE_PROMPT_CHARS, noSummaryModelMessage } from './web-fetch-prompt.js';

const inputSchema = {
  url: z
    .string()
    .trim()
    .max(4096, 'url must be at most 4096 characters')
    .refine(isHttpUrl, 'url must be an absolute http:// or https:// URL'),
  format: z.enum(['markdown', 'text', 'html']).default('markdown'),
  ...pagingInput,
  max_tokens: z
    .number()
    .int()
    .min(100)
    .max(1_000_000)
    .optional()
    .describe('Instead of max_length (estimated)'),
  max_age_seconds: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .optional()
    .describe('Oldest cached copy to take; 0 fetches again'),
  provider: modelIdSchema({ field: 'provider', example: 'jina-reader', max: 100 })
    .optional()
    .describe('e.g. jina-reader'),
  prompt: textArgument('prompt', MAX_PAGE_PROMPT_CHARS)
    .optional()
    .describe('A question a small model answers from the page alone'),
};

const outputSchema = {
  url: z.string(),
  final_url: z.string().nullable(),
  title: z.string().nullable(),
  content: z.string(),
  ...pagingOutput,
  fetched_at: z.string(),
  from_cache: z.boolean(),
  remaining_tokens: z.number().int(),
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
    'second fetch). max_age_seconds=0 fetches again, billed again. With prompt, a small model ' +
    'answers from the page instead (billed).',
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
    const loaded = await withProviderNamed('fetch', provider, ctx, () =>
      loadPage(provider.id, args.url, args.format, args.max_age_seconds, ctx),
    );
    const page = loaded.page;
    if (args.start_index > 0 && args.start_index >= page.text.length) {
      throw new UserError(
        `start_index ${args.start_index} is past the end of the page (total_length ${page.text.length}). ` +
          'Use start_index=0 or a smaller offset.',
      );
    }
    if (args.prompt && summary?.id) {
      return await answerFromPage(
        loaded,
        { prompt: args.prompt, start_index: args.start_index },
        summary.id,
        ctx,
      );
    }
    // Each form of the result (the text; the structured content as JSON) within CUT_TOKENS:
    // what the estimate of a form finds over it is taken off the part, a round or two at most.
    let cap = partCap(page);
    for (let round = 0; ; round++) {
      const part = partOf(page, args.start_index, args, cap);
      // A token the part does not hold (not the whole page: a long one is read part by part).
      const mark = fenceMark([part.content, page.title, page.url, page.final_url]);
      const next = pageNext(part);
      const { clamped: _said, ...paging } = part;
      const structured = {
        url: page.url,
        final_url: page.final_url ?? null,
        title: page.title,
        ...paging,
        fetched_at: page.fetched_at,
        from_cache: loaded.from_cache,
        ...(next ? { next } : {}),
      };
      const text = formatPage(structured, mark);
      const over = Math.max(estimateTokens(text), estimateTokens(JSON.stringify(structured))) - CUT_TOKENS;
      if (over <= 0 || round === 4) return success(text, structured);
      cap = Math.max(estimateTokens(part.content) - over - 100, 100);
    }
  },
});

/**
 * What to do after this part: read on, or (an empty page) try another format or provider. The
 * hint says "this tool", never its name: a client may list it under another name, or have a
 * web_fetch of its own (Gemini CLI does).
 */
function pageNext(p: PagePart): string | undefined {
  const cut = p.clamped ? `Cut short: a result holds at most ${formatCount(RESULT_TOKENS)} tokens. ` : '';
  if (p.truncated) {
    return (
      `${cut}${formatCount(p.total_length - p.end_index)} more characters, about ` +
      `${formatCount(p.remaining_tokens)} tokens (an estimate): call this tool again with ` +
      `start_index=${p.next_start_index} (from cache, no second fetch).`
    );
  }
  if (!p.content.trim()) return 'The page has no readable text: try format "html" or another provider.';
  return undefined;
}

/**
 * The part as markdown: where it comes from, which characters these are, when the gateway fetched
 * it and whether from the cache, then the page's own words (its title as a heading on the first
 * part, unless the text begins with it) fenced, and how to read on.
 */
function formatPage(
  p: { url: string; final_url: string | null; title: string | null; content: string; next?: string } & Page &
    Freshness,
  mark: string,
): string {
  const heading = p.title ? `# ${oneLine(p.title, Number.POSITIVE_INFINITY)}` : '';
  const titled = heading && p.start_index === 0 && !p.content.trimStart().startsWith(heading);
  const body = `${titled ? `${heading}\n\n` : ''}${p.content.trim() ? p.content : ''}`;
  return [
    `Source: ${p.url} (${rangeText(p)}), ${freshnessText(p)}`,
    fenced(mark, "The page's text is", body),
    ...(p.next ? [`[${p.next}]`] : []),
  ].join('\n');
}
