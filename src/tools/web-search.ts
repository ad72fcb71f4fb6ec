import { z } from 'zod';
import { type SearchResponse, search } from '../service/search.js';
import { noProviderMessage, resolveWebProvider } from './support/providers.js';
import { failure, failureFrom, success } from './support/results.js';
import { displayDate, oneLine, withoutControlChars } from './support/text.js';
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
    .refine((q) => q.length > 0, 'query must not be empty'),
  max_results: z.number().int().min(1).max(20).default(5),
  search_type: z.enum(['web', 'news']).default('web'),
  time_range: z.enum(['day', 'week', 'month', 'year', 'any']).optional(),
  include_domains: z.array(domain).max(20).optional().describe('e.g. ["github.com"]'),
  exclude_domains: z.array(domain).max(20).optional(),
  country: z.string().trim().min(2).max(32).optional().describe('e.g. "us"'),
  language: z.string().trim().min(2).max(16).optional().describe('e.g. "en"'),
  provider: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._:/@+-]{1,100}$/, 'provider must be an id such as tavily')
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
};

export const webSearch = defineTool({
  name: 'web_search',
  group: 'search',
  title: 'Web search',
  description:
    'Search the web: numbered results (title, URL, date, snippet) and an answer when the provider has one. ' +
    'One paid query per call: prefer one precise query. Read a result with web_fetch.',
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
      return success(formatResults(found, results), {
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

function formatResults(found: SearchResponse, results: SearchResponse['results']): string {
  if (results.length === 0) {
    return `No results for "${found.query}" (${found.provider}). Try fewer or broader words, or drop the filters.`;
  }
  const lines: string[] = [];
  if (found.answer) lines.push(`Answer: ${oneLine(found.answer, 1200)}`, '');
  results.forEach((r, i) => {
    const date = r.published_at ? ` — ${displayDate(r.published_at)}` : '';
    lines.push(`${i + 1}. ${oneLine(r.title, 200)} — ${r.url}${date}`);
    if (r.snippet) lines.push(oneLine(r.snippet));
  });
  return lines.join('\n');
}
