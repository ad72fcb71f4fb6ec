// Search providers in the shapes 9router reads: tavily, exa, serper (web and news) and brave.
// Each answers up to the number of results asked for, titled after the query, with dates in the
// provider's own format. `no-results` in a query answers an empty list; `huge-fields-<n>` makes
// every title and snippet n characters long.
import { HOSTILE_LINES, isHostile } from '../../harness/hostile-text.js';
import { answerFault, json } from './answer.js';
import type { Route, UpstreamRequest } from './types.js';

interface Item {
  title: string;
  url: string;
  snippet: string;
}

function items(query: string, count: number): Item[] {
  if (/\bno-results\b/.test(query)) return [];
  const n = Math.max(1, Math.min(Number.isFinite(count) ? count : 5, 20));
  const slug = query.replace(/[^a-z0-9]+/gi, '-').slice(0, 40) || 'q';
  const huge = Number(/\bhuge-fields-(\d+)\b/.exec(query)?.[1] ?? 0);
  if (huge) {
    return Array.from({ length: n }, (_, i) => ({
      title: `${i + 1}`.padEnd(huge, 'T'),
      url: `https://example.com/${slug}/${i + 1}`,
      snippet: `${i + 1}`.padEnd(huge, 'S'),
    }));
  }
  const hostile = isHostile(query);
  return Array.from({ length: n }, (_, i) => ({
    title: hostile ? `Result ${i + 1} «000000» ${HOSTILE_LINES[3]}` : `Result ${i + 1} for ${query}`,
    url: `https://example.com/${slug}/${i + 1}`,
    snippet: hostile ? `Snippet ${i + 1}. ${HOSTILE_LINES.join('\n')}` : `Snippet ${i + 1} about ${query}.`,
  }));
}

const field = (req: UpstreamRequest, name: string) => req.json?.[name];

const tavily: Route = (req, res) => {
  if (req.host !== 'api.tavily.com' || req.path !== '/search') return false;
  if (answerFault(req, res, (_s, message) => ({ detail: { error: message } }))) return true;
  const query = String(field(req, 'query') ?? '');
  const results = items(query, Number(field(req, 'max_results'))).map((it, i) => ({
    ...it,
    content: it.snippet,
    score: 0.9 - i / 100,
    published_date: i === 0 ? '2026-01-15' : undefined,
  }));
  return json(res, 200, {
    query,
    answer: /\bwith-answer\b/.test(query)
      ? `The answer to ${query}.${isHostile(query) ? `\n${HOSTILE_LINES.join('\n')}` : ''}`
      : null,
    results,
  });
};

const exa: Route = (req, res) => {
  if (req.host !== 'api.exa.ai' || req.path !== '/search') return false;
  if (answerFault(req, res, (_s, message) => ({ error: message }))) return true;
  const query = String(field(req, 'query') ?? '');
  const results = items(query, Number(field(req, 'numResults'))).map((it, i) => ({
    title: it.title,
    url: it.url,
    highlights: [it.snippet],
    text: `${it.snippet} Full text.`,
    score: 0.8,
    publishedDate: i === 0 ? '2026-01-15T09:30:00.000Z' : null,
  }));
  return json(res, 200, { requestId: 'exa-1', results });
};

const serper: Route = (req, res) => {
  if (req.host !== 'google.serper.dev' || (req.path !== '/search' && req.path !== '/news')) return false;
  if (answerFault(req, res, (_s, message) => ({ message, statusCode: 400 }))) return true;
  const query = String(field(req, 'q') ?? '');
  const list = items(query, Number(field(req, 'num'))).map((it, i) => ({
    title: it.title,
    link: it.url,
    snippet: it.snippet,
    date: i === 0 ? 'Jan 15, 2026' : undefined,
    position: i + 1,
  }));
  return json(res, 200, req.path === '/news' ? { news: list } : { organic: list });
};

const brave: Route = (req, res) => {
  if (req.host !== 'api.search.brave.com' || !req.path.startsWith('/res/v1/')) return false;
  if (
    answerFault(req, res, (status, message) => ({
      type: 'ErrorResponse',
      error: { status, detail: message },
    }))
  )
    return true;
  const query = req.query.get('q') ?? '';
  const results = items(query, Number(req.query.get('count'))).map((it, i) => ({
    title: it.title,
    url: it.url,
    description: it.snippet,
    page_age: i === 0 ? '2026-01-15T08:00:00' : undefined,
    age: i === 0 ? 'January 15, 2026' : undefined,
  }));
  const news = req.path.endsWith('/news/search');
  return json(
    res,
    200,
    news ? { type: 'news', results } : { type: 'search', web: { type: 'search', results } },
  );
};

export const searchRoutes: Route[] = [tavily, exa, serper, brave];
