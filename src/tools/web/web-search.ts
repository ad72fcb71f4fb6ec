import { z } from 'zod';
import { modelIdSchema } from '../../config/model-ids.js';
import { type SearchResponse, search } from '../../gateway/endpoints/search.js';
import { fenced, fenceMark } from '../../lib/fence.js';
import { displayDate, isoSeconds, oneLine, withoutControlChars } from '../../lib/text.js';
import { sendBilled } from '../billing.js';
import { ANNOTATIONS, defineTool } from '../define.js';
import { capped, cappedOrNull, RESULT_BUDGET } from '../result-budget.js';
import { success } from '../results.js';
import { resolveWebProvider, withProviderNamed } from './providers.js';

const domain = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .transform((d) =>
    d
      .replace(/^[a-z]+:\/\//i, '')
      .replace(/[/?#].*$/, '')
      .replace(/^-/, '')
      .toLowerCase(),
  )
  .refine((d) => /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(d), 'must be a domain such as github.com');

const inputSchema = {
  query: z
    .string()
    .max(400, 'query must be at most 400 characters')
    .transform(withoutControlChars)
    .refine((q) => q.length > 0, 'query must not be empty'),
  max_results: z.number().int().min(1).max(20).default(5),
  search_type: z.enum(['web', 'news']).default('web'),
  time_range: z.enum(['day', 'week', 'month', 'year', 'any']).optional(),
  include_domains: z.array(domain).max(20).optional().describe('e.g. ["github.com"]'),
  exclude_domains: z.array(domain).max(20).optional(),
  country: z.string().trim().min(2).max(32).optional().describe('e.g. "us"'),
  language: z.string().trim().min(2).max(16).optional().describe('e.g. "en"'),
  provider: modelIdSchema({ field: 'provider', example: 'tavily', max: 100 })
    .optional()
    .describe('e.g. tavily, brave'),
};

const outputSchema = {
  query: z.string(),
  provider: z.string(),
  results: z.array(
    z.object({
      title: z.string(),
      url: z.string(),
      snippet: z.string(),
      published_at: z.string().nullable(),
    }),
  ),
  answer: z.string().nullable(),
  searched_at: z.string(),
};

export const webSearch = defineTool({
  name: 'web_search',
  group: 'search',
  title: 'Web search',
  description:
    "Search the web: results with title, URL, date and snippet, and the provider's answer if any. " +
    "One paid query per call: prefer one precise query. Read a result with this server's web_fetch.",
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.lookup,
  async run(args, ctx) {
    const provider = await resolveWebProvider('search', args.provider, ctx);
    const domains = [...(args.include_domains ?? []), ...(args.exclude_domains ?? []).map((d) => `-${d}`)];
    const call = { kind: 'search', tool: 'web_search', model: provider.id, text: args.query } as const;
    const found = await withProviderNamed('search', provider, ctx, () =>
      sendBilled(ctx, call, () =>
        search(
          ctx.runtime.service.client,
          {
            model: provider.id,
            query: args.query,
            max_results: args.max_results,
            search_type: args.search_type,
            time_range: args.time_range,
            domain_filter: domains.length > 0 ? domains : undefined,
            country: args.country,
            language: args.language,
          },
          ctx.signal,
        ),
      ),
    );
    // Whatever the provider sent, every field is bounded (and says so when cut).
    const results = found.results.slice(0, args.max_results).map((r) => ({
      title: capped(r.title, RESULT_BUDGET.name),
      url: capped(r.url, RESULT_BUDGET.url),
      snippet: capped(r.snippet, RESULT_BUDGET.snippet),
      published_at: cappedOrNull(r.published_at, RESULT_BUDGET.name),
    }));
    const answer = cappedOrNull(found.answer, RESULT_BUDGET.answer);
    const query = capped(found.query, RESULT_BUDGET.answer);
    const by = capped(found.provider, RESULT_BUDGET.name);
    const out = { query, provider: by, results, answer, searched_at: isoSeconds(new Date()) };
    return success(formatResults(out), out);
  },
});

/**
 * The text: when and with what it was searched, then the sites' words fenced: the answer and
 * every result's title, URL, date and snippet (as bounded above).
 */
function formatResults(found: {
  query: string;
  provider: string;
  results: SearchResponse['results'];
  answer: string | null;
  searched_at: string;
}): string {
  const { query, provider, results, answer } = found;
  if (results.length === 0) {
    return `No results for "${oneLine(query, RESULT_BUDGET.name)}" (${provider}, searched ${found.searched_at}). Try fewer or broader words, or drop the filters.`;
  }
  const lines: string[] = [];
  if (answer) lines.push(`Answer: ${oneLine(answer, Number.POSITIVE_INFINITY)}`, '');
  results.forEach((r, i) => {
    const date = r.published_at ? ` — ${displayDate(r.published_at)}` : '';
    lines.push(`${i + 1}. ${oneLine(r.title, Number.POSITIVE_INFINITY)} — ${r.url}${date}`);
    if (r.snippet) lines.push(oneLine(r.snippet, Number.POSITIVE_INFINITY));
  });
  const list = lines.join('\n');
  const mark = fenceMark([list]);
  return fenced(mark, `Searched ${found.searched_at} (${provider}); the sites' words are`, list);
}
