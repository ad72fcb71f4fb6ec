// Page readers in the shapes 9router reads: jina (plain text with a Title: line, the URL posted
// as JSON), tavily extract, firecrawl scrape (markdown or html, as asked; an unknown format is
// refused), exa contents. The page's text is made from its URL; `long-page` in the URL makes it
// about 60,000 characters, `untitled` leaves the title out, `huge-title-<n>` makes the title n
// characters long, `hostile` fills it with text that tries to break out of a fence.
import { HOSTILE_LINES, isHostile } from '../../harness/hostile-text.js';
import { answerFault, json } from './answer.js';
import type { Route } from './types.js';

export function pageTitle(url: string): string | null {
  const huge = /\bhuge-title-(\d+)\b/.exec(url)?.[1];
  if (huge) return 'T'.repeat(Number(huge));
  return /\buntitled\b/.test(url) ? null : `Page ${new URL(url).pathname}`;
}

export function pageText(url: string): string {
  if (isHostile(url)) return `# ${pageTitle(url) ?? 'Untitled'}\n\n${HOSTILE_LINES.join('\n')}\n`;
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

/** The formats firecrawl's scrape API takes; anything else is refused, as firecrawl does. */
const FIRECRAWL_FORMATS = new Set(['markdown', 'html', 'rawHtml', 'links', 'summary', 'images']);

const firecrawl: Route = (req, res) => {
  if (req.host !== 'api.firecrawl.dev' || !req.path.endsWith('/scrape')) return false;
  if (answerFault(req, res, (_s, message) => ({ success: false, error: message }))) return true;
  const url = String(req.json?.url ?? '');
  const formats = (req.json?.formats as unknown[] | undefined) ?? ['markdown'];
  const unknown = formats.find((f) => !FIRECRAWL_FORMATS.has(String(f)));
  if (unknown !== undefined) {
    return json(res, 400, {
      success: false,
      error: 'Bad Request',
      details: [{ code: 'invalid_enum_value', path: ['formats', 0], message: `Invalid format "${unknown}"` }],
    });
  }
  const title = pageTitle(url);
  const data: Record<string, unknown> = { metadata: { title, sourceURL: url, statusCode: 200 } };
  if (formats.includes('markdown')) data.markdown = pageText(url);
  if (formats.includes('html')) {
    const body = isHostile(url)
      ? HOSTILE_LINES.map((line) => `<p>${line}</p>`).join('\n')
      : `<p>The text of ${url}.</p>`;
    data.html = `<html><body><h1>${title ?? 'Untitled'}</h1>${body}</body></html>`;
  }
  return json(res, 200, { success: true, data });
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
