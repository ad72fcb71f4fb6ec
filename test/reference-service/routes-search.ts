// POST /v1/search: deterministic results, so tests can assert on exact titles and URLs.
import { HOSTILE_LINES, isHostile } from '../harness/hostile-text.js';
import { jsonReply, type Reply, RequestError } from './http-util.js';
import { type JsonObject, jsonObjectBody, optionalString, requireModel } from './request-body.js';
import type { RouteContext } from './router.js';

/**
 * How each provider's answer looks once 9router has normalised it: the provider it names (brave
 * is brave-search, a combo names the member that served it), whether results carry a score and
 * full text, whether the total is known, and the first result's date in the provider's format.
 */
interface SearchProvider {
  served: string;
  scored: boolean;
  fullText: boolean;
  totalKnown: boolean;
  date: string;
}

const TAVILY: SearchProvider = {
  served: 'tavily',
  scored: true,
  fullText: false,
  totalKnown: true,
  date: '2026-01-15',
};
const BRAVE: SearchProvider = {
  served: 'brave-search',
  scored: false,
  fullText: false,
  totalKnown: false,
  date: '2026-01-15T08:00:00',
};

const SEARCH_PROVIDERS: Record<string, SearchProvider> = {
  tavily: TAVILY,
  'search-combo': TAVILY,
  exa: { served: 'exa', scored: true, fullText: true, totalKnown: true, date: '2026-01-15T09:30:00.000Z' },
  serper: { served: 'serper', scored: false, fullText: false, totalKnown: false, date: 'Jan 15, 2026' },
  brave: BRAVE,
  'brave-search': BRAVE,
  searxng: { served: 'searxng', scored: true, fullText: false, totalKnown: false, date: '2026-01-15' },
};
const TIME_RANGES = new Set(['day', 'week', 'month', 'year', 'any']);
const SEARCH_TYPES = new Set(['web', 'news']);
const DEFAULT_HOSTS = ['example.com', 'example.org', 'example.net'];
const MAX_RESULTS_CAP = 20;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL_CHARACTERS = /[\u0000-\u001f]/;

interface DomainFilter {
  include: string[];
  exclude: string[];
}

function parseDomainFilter(value: unknown): DomainFilter {
  if (value === undefined || value === null) return { include: [], exclude: [] };
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
    throw new RequestError(400, 'domain_filter must be an array of domains');
  }
  const domains = (value as string[]).map((entry) => entry.trim().toLowerCase()).filter(Boolean);
  return {
    include: domains.filter((domain) => !domain.startsWith('-')),
    exclude: domains.filter((domain) => domain.startsWith('-')).map((domain) => domain.slice(1)),
  };
}

function isUnder(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** Hosts results may use: the included domains round-robin, else a default host not excluded. */
function resultHosts(filter: DomainFilter): string[] {
  const allowed = (host: string) => !filter.exclude.some((domain) => isUnder(host, domain));
  const included = filter.include.filter(allowed);
  if (included.length > 0) return included;
  const fallback = DEFAULT_HOSTS.find(allowed);
  return [fallback ?? 'search-results.test'];
}

function slugOf(query: string): string {
  const slug = query
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return slug || 'q';
}

function answerFor(query: string): unknown {
  if (/objanswer/i.test(query)) {
    return { source: 'openai', text: `Synthesised answer about ${query}.`, model: 'gpt-4o-mini' };
  }
  if (/\banswer\b/i.test(query))
    return `Short answer about ${query}.${isHostile(query) ? ` ${HOSTILE_LINES.join('\n')}` : ''}`;
  return null;
}

function resultCount(body: JsonObject): number {
  const requested = body.max_results;
  if (requested === undefined || requested === null) return 5;
  if (typeof requested !== 'number' || !Number.isFinite(requested)) {
    throw new RequestError(400, 'max_results must be a number');
  }
  return Math.max(1, Math.min(Math.floor(requested), MAX_RESULTS_CAP));
}

function validateEnum(value: unknown, field: string, allowed: Set<string>): string | undefined {
  const text = optionalString(value, field);
  if (text !== undefined && !allowed.has(text)) throw new RequestError(400, `Invalid ${field}: ${text}`);
  return text;
}

function resultOf(options: {
  provider: SearchProvider;
  query: string;
  n: number;
  index: number;
  host: string;
  slug: string;
  titlePrefix: string;
  retrievedAt: string;
}): Record<string, unknown> {
  const { provider, query, n, index, host, slug } = options;
  // About as long as a real provider's snippet (~160 characters).
  const snippet = isHostile(query)
    ? `Snippet ${n}. ${HOSTILE_LINES.join('\n')}`
    : `Snippet ${n} about ${query}: what it is, how it works in practice, the trade-offs people hit, and links for further reading.`;
  const text = `${snippet} Full text.`;
  return {
    title: isHostile(query)
      ? `Result ${n} «000000» ${HOSTILE_LINES[3]}`
      : `${options.titlePrefix}Result ${n} for ${query}`,
    url: `https://${host}/${slug}/${n}`,
    display_url: `${host}/${slug}/${n}`,
    snippet,
    position: n,
    score: provider.scored ? Math.round((0.99 - index * 0.03) * 100) / 100 : null,
    published_at: index === 0 ? provider.date : null,
    favicon_url: null,
    content: provider.fullText ? { format: 'text', text, length: text.length } : null,
    metadata: { author: null, language: null, source_type: null, image_url: null },
    citation: { provider: provider.served, retrieved_at: options.retrievedAt, rank: n },
    provider_raw: null,
  };
}

export function search(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const id = requireModel(body);
  const provider = SEARCH_PROVIDERS[id];
  if (!provider) throw new RequestError(400, `Unknown provider: ${id}`);
  const query = body.query;
  if (typeof query !== 'string' || query.trim() === '')
    throw new RequestError(400, 'Missing required field: query');
  if (CONTROL_CHARACTERS.test(query)) {
    // 9router counts this as the provider failing: the account is locked for 30 s, and the error
    // comes in the cooldown's bare form, with Retry-After.
    throw new RequestError(
      400,
      `[${provider.served}] Query contains invalid control characters (reset after 30s)`,
      { type: null, code: null, headers: { 'retry-after': '30' } },
    );
  }
  const searchType = validateEnum(body.search_type, 'search_type', SEARCH_TYPES) ?? 'web';
  validateEnum(body.time_range, 'time_range', TIME_RANGES);
  const filter = parseDomainFilter(body.domain_filter);
  const count = resultCount(body);
  const offset = typeof body.offset === 'number' && body.offset > 0 ? Math.floor(body.offset) : 0;

  const hosts = resultHosts(filter);
  const slug = slugOf(query);
  const titlePrefix = searchType === 'news' ? 'News: ' : '';
  const retrievedAt = new Date().toISOString();
  const results = Array.from({ length: count }, (_, index) =>
    resultOf({
      provider,
      query,
      n: offset + index + 1,
      index,
      host: hosts[index % hosts.length] ?? 'example.com',
      slug,
      titlePrefix,
      retrievedAt,
    }),
  );
  return jsonReply({
    provider: provider.served,
    query,
    results,
    answer: answerFor(query),
    usage: { queries_used: 1, search_cost_usd: 0.008 },
    metrics: {
      response_time_ms: 42,
      upstream_latency_ms: 40,
      total_results_available: provider.totalKnown ? count : null,
    },
    errors: [],
  });
}
