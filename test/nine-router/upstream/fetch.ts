// Page readers in the shapes 9router reads: jina (plain text with a Title: line, the URL posted
// as JSON), tavily extract,
// firecrawl scrape, exa contents. The page's text is made from its URL; `long-page` in the URL
// makes it about 60,000 characters, `untitled` leaves the title out.
import { answerFault, json } from './answer.js';
import type { Route } from './types.js';

export function pageTitle(url: string): string | null {
  return /\buntitled\b/.test(url) ? null : `Page ${new URL(url).pathname}`;
}

export function pageText(url: string): string {
  if (!/\blong-page\b/.test(url)) return `# ${pageTitle(url) ?? 'Untitled'}\n\nThe text of ${url}.\n`;
  return Array.from({ length: 1200 }, (_, i) =>
    `Line ${String(i + 1).padStart(5, '0')} of ${url}`.padEnd(49, '.'),
  ).join('\n');
}

const jina: Route = (req, res) => {
  if (req.host !== 'r.jina.ai') return false;
  if (answerFault(req, res)) return true;
  // 9router 0.5.69 posts `{url}` to the root; older versions put the URL in the path.
  const target = typeof req.json?.url === 'string' ? req.json.url : decodeURIComponent(req.path.slice(1));
  const title = pageTitle(target);
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(
    `${title ? `Title: ${title}\n\n` : ''}URL Source: ${target}\n\nMarkdown Content:\n${pageText(target)}`,
  );
  return true;
};

const tavily: Route = (req, res) => {
  if (req.host !== 'api.tavily.com' || req.path !== '/extract') return false;
  if (answerFault(req, res, (_s, message) => ({ detail: { error: message } }))) return true;
  const urls = (req.json?.urls as string[] | undefined) ?? [String(req.json?.url ?? '')];
  return json(res, 200, {
    results: urls.map((url) => ({ url, raw_content: pageText(url) })),
    failed_results: [],
  });
};

const firecrawl: Route = (req, res) => {
  if (req.host !== 'api.firecrawl.dev' || !req.path.endsWith('/scrape')) return false;
  if (answerFault(req, res, (_s, message) => ({ success: false, error: message }))) return true;
  const url = String(req.json?.url ?? '');
  return json(res, 200, {
    success: true,
    data: { markdown: pageText(url), metadata: { title: pageTitle(url), sourceURL: url, statusCode: 200 } },
  });
};

const exa: Route = (req, res) => {
  if (req.host !== 'api.exa.ai' || req.path !== '/contents') return false;
  if (answerFault(req, res, (_s, message) => ({ error: message }))) return true;
  const ids = (req.json?.ids as string[] | undefined) ?? (req.json?.urls as string[] | undefined) ?? [];
  return json(res, 200, {
    results: ids.map((url) => ({ id: url, url, title: pageTitle(url), text: pageText(url) })),
  });
};

export const fetchRoutes: Route[] = [jina, tavily, firecrawl, exa];
