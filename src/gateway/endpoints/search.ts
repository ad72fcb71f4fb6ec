import type { ServiceClient } from '../client.js';
import { asArray, asObject, asString } from '../normalize.js';

export interface SearchRequest {
  model: string;
  query: string;
  max_results?: number;
  search_type?: 'web' | 'news';
  time_range?: 'day' | 'week' | 'month' | 'year' | 'any';
  /** Domains to include; a leading `-` excludes. */
  domain_filter?: string[];
  country?: string;
  language?: string;
  offset?: number;
}

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
  published_at: string | null;
}

export interface SearchResponse {
  provider: string;
  query: string;
  results: SearchHit[];
  answer: string | null;
}

export async function search(
  client: ServiceClient,
  req: SearchRequest,
  signal?: AbortSignal,
): Promise<SearchResponse> {
  const { data } = await client.json<unknown>({
    method: 'POST',
    path: '/v1/search',
    json: req,
    signal,
    // A search or fetch is billed by its provider: sent again only when it surely was not taken.
    retry: 'billed',
  });
  const body = asObject(data);
  const results = asArray(body.results).map((raw): SearchHit => {
    const r = asObject(raw);
    const content = asObject(r.content);
    return {
      title: (asString(r.title) ?? '').trim() || asString(r.url) || '(untitled)',
      url: asString(r.url) ?? '',
      snippet: (asString(r.snippet) ?? asString(content.text) ?? '').trim(),
      published_at: asString(r.published_at) ?? null,
    };
  });
  return {
    provider: asString(body.provider) ?? req.model,
    query: asString(body.query) ?? req.query,
    results: results.filter((r) => r.url),
    answer: readAnswer(body.answer),
  };
}

/** `answer` may be null, a string, or `{source, text, model}`. */
function readAnswer(answer: unknown): string | null {
  if (typeof answer === 'string') return answer.trim() || null;
  const text = asString(asObject(answer).text);
  return text?.trim() || null;
}
