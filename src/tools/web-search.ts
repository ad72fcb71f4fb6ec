import { z } from 'zod';
import { type SearchResponse, search } from '../service/search.js';
import { noProviderMessage, resolveWebProvider } from './support/providers.js';
import { failure, failureFrom, success } from './support/results.js';
import { oneLine, withoutControlChars } from './support/text.js';
import { defineTool } from './types.js';

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
    .refine((q) => q.length > 0, 'query must not be empty')
    .describe('What to search for. Plain words work best; quotes and site: work with most providers.'),
  max_results: z.number().int().min(1).max(20).default(5).describe('How many results, 1-20 (default 5).'),
  search_type: z.enum(['web', 'news']).default('web').describe('web (default) or news for recent articles.'),
  time_range: z
    .enum(['day', 'week', 'month', 'year', 'any'])
    .optional()
    .describe('Only results from the last day, week, month or year.'),
  include_domains: z
    .array(domain)
    .max(20)
    .optional()
    .describe('Only results from these domains, e.g. ["github.com"].'),
  exclude_domains: z.array(domain).max(20).optional().describe('No results from these domains.'),
  country: z
    .string()
    .trim()
    .min(2)
    .max(32)
    .optional()
    .describe('Country to localise results, e.g. "us" or "de".'),
  language: z.string().trim().min(2).max(16).optional().describe('Result language, e.g. "en".'),
  provider: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._:/@+-]{1,100}$/, 'provider must be an id such as tavily')
    .optional()
    .describe(
      'Search provider id such as tavily, brave or exa (default: the configured or first available).',
    ),
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
};

export const webSearch = defineTool({
  name: 'web_search',
  group: 'search',
  title: 'Web search',
  description:
    'Search the web and get a numbered list of results (title, URL, date, snippet), plus a direct answer when the ' +
    'provider gives one. Use it for anything current or outside your training data. Each call is one paid search ' +
    'query, so prefer one precise query over many vague ones. To read a result in full, call web_fetch with its URL.',
  inputSchema,
  outputSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(args, ctx) {
    try {
      const provider = await resolveWebProvider('search', args.provider, ctx);
      if (!provider) return failure(noProviderMessage('search'));
      const domains = [...(args.include_domains ?? []), ...(args.exclude_domains ?? []).map((d) => `-${d}`)];
      const found = await search(
        ctx.runtime.service.client,
        {
          model: provider,
          query: args.query,
          max_results: args.max_results,
          search_type: args.search_type,
          time_range: args.time_range,
          domain_filter: domains.length > 0 ? domains : undefined,
          country: args.country,
          language: args.language,
        },
        ctx.signal,
      );
      const results = found.results.slice(0, args.max_results);
      return success(formatResults(found, results, ctx.toolName('web_fetch')), {
        query: found.query,
        provider: found.provider,
        results,
        answer: found.answer,
      });
    } catch (error) {
      return failureFrom('Web search', error, ctx.runtime.scrub);
    }
  },
});

function formatResults(found: SearchResponse, results: SearchResponse['results'], fetchTool: string): string {
  if (results.length === 0) {
    return `No results for "${found.query}" (${found.provider}). Try fewer or broader words, or drop the filters.`;
  }
  const lines: string[] = [];
  if (found.answer) lines.push(`Answer: ${oneLine(found.answer, 1200)}`, '');
  results.forEach((r, i) => {
    const date = r.published_at ? ` — ${r.published_at.slice(0, 10)}` : '';
    lines.push(`${i + 1}. ${oneLine(r.title, 200)} — ${r.url}${date}`);
    if (r.snippet) lines.push(`   ${oneLine(r.snippet)}`);
  });
  lines.push('', `(${found.provider}; read a page with ${fetchTool})`);
  return lines.join('\n');
}
