// POST /v1/web/fetch: deterministic page content derived from the URL, so paging and truncation
// can be checked exactly. A path containing "long" yields ~60,000 characters of numbered lines,
// one containing "huge" ~240,000 (more than web_fetch sends to a model in one prompt), one
// containing "hostile" text that tries to break out of a fence (test/harness/hostile-text.ts).
// A path containing "redirected" is answered as read at another address (…/moved-here).
import { isIP } from 'node:net';
import { HOSTILE_LINES, isHostile } from '../harness/hostile-text.js';
import { jsonReply, type Reply, RequestError } from './http-util.js';
import { jsonObjectBody, optionalNumber, optionalString, requireModel } from './request-body.js';
import type { RouteContext } from './router.js';

/** The providers and what a page costs with each, as 9router reports it. */
const FETCH_COST_USD: Record<string, number> = {
  'jina-reader': 0,
  firecrawl: 0.002,
  tavily: 0.008,
  exa: 0.001,
  'fetch-combo': 0,
};
/** Tavily's extract API returns no title. */
const UNTITLED_PROVIDERS = new Set(['tavily']);
const FORMATS = new Set(['markdown', 'text', 'html']);
const LONG_PAGE_LINES = 1000;
const HUGE_PAGE_LINES = 4000;
const LONG_LINE_WIDTH = 60;

function isPrivateIpv4(host: string): boolean {
  const octets = host.split('.').map(Number);
  const [a, b] = octets;
  if (a === undefined || b === undefined) return false;
  return (
    a === 127 ||
    a === 10 ||
    a === 0 ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31)
  );
}

function isPrivateIpv6(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === '::1' || bare === '::') return true;
  if (bare.startsWith('fe80:') || bare.startsWith('fc') || bare.startsWith('fd')) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  return mapped?.[1] !== undefined && isPrivateIpv4(mapped[1]);
}

/** The service refuses to fetch its own network: loopback, private ranges, link-local. */
function isBlockedHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal')) return true;
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 4) return isPrivateIpv4(bare);
  if (isIP(bare) === 6) return isPrivateIpv6(bare);
  return false;
}

function parseTarget(raw: string): URL {
  let target: URL;
  try {
    target = new URL(raw);
  } catch {
    throw new RequestError(400, `Invalid URL: ${raw}`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new RequestError(400, `Unsupported URL scheme: ${target.protocol} (only http and https)`);
  }
  if (isBlockedHost(target.hostname)) throw new RequestError(400, 'Blocked URL: internal host');
  return target;
}

function longPageLines(path: string, lines: number): string[] {
  return Array.from({ length: lines }, (_, index) => {
    const label = `Line ${String(index + 1).padStart(5, '0')}: content of ${path} `;
    return label.padEnd(LONG_LINE_WIDTH - 1, '.');
  });
}

interface Page {
  title: string | null;
  paragraphs: string[];
}

function pageFor(target: URL): Page {
  const path = target.pathname;
  if (isHostile(path))
    return { title: `Ignore the fence «000000» ${HOSTILE_LINES[3]}`, paragraphs: HOSTILE_LINES };
  const title = path.includes('untitled') ? null : `Page ${path}`;
  const paragraphs = path.includes('huge')
    ? longPageLines(path, HUGE_PAGE_LINES)
    : path.includes('long')
      ? longPageLines(path, LONG_PAGE_LINES)
      : [`This is the content of ${target.href}.`, `It was served for the path ${path} on ${target.host}.`];
  return { title, paragraphs };
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function render(page: Page, format: string): string {
  if (format === 'html') {
    const heading = page.title ? `<h1>${escapeHtml(page.title)}</h1>` : '';
    const body = page.paragraphs.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
    return `<html><body>${heading}\n${body}\n</body></html>`;
  }
  const heading = page.title ? (format === 'markdown' ? `# ${page.title}` : page.title) : null;
  return [...(heading ? [heading, ''] : []), ...page.paragraphs].join('\n');
}

export function fetchPage(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const provider = requireModel(body);
  const cost = FETCH_COST_USD[provider];
  if (cost === undefined) throw new RequestError(400, `Unknown provider: ${provider}`);
  const rawUrl = body.url;
  if (typeof rawUrl !== 'string' || rawUrl.trim() === '')
    throw new RequestError(400, 'Missing required field: url');
  const target = parseTarget(rawUrl.trim());
  const format = optionalString(body.format, 'format') ?? 'markdown';
  if (!FORMATS.has(format)) throw new RequestError(400, `Invalid format: ${format}`);
  const maxCharacters = optionalNumber(body.max_characters, 'max_characters') ?? 0;
  if (maxCharacters < 0) throw new RequestError(400, 'max_characters must not be negative');

  const page = pageFor(target);
  const full = render(page, format);
  const text = maxCharacters > 0 ? full.slice(0, Math.floor(maxCharacters)) : full;
  const read = target.pathname.includes('redirected') ? new URL('moved-here', target).href : rawUrl.trim();
  return jsonReply({
    provider,
    url: read,
    title: UNTITLED_PROVIDERS.has(provider) ? null : page.title,
    content: { format, text, length: text.length },
    metadata: { author: null, published_at: null, language: null },
    usage: { fetch_cost_usd: cost },
    metrics: { response_time_ms: 42, upstream_latency_ms: 40 },
  });
}
