// POST /v1/search: deterministic results, so tests can assert on exact titles and URLs.
import { jsonReply, type Reply, RequestError } from './http-util.js';
import { type JsonObject, jsonObjectBody, optionalString, requireModel } from './request-body.js';
import type { RouteContext } from './router.js';

const SEARCH_PROVIDERS = new Set(['tavily', 'brave', 'exa', 'serper', 'searxng', 'search-combo']);
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
  if (/\banswer\b/i.test(query)) return `Short answer about ${query}.`;
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

export function search(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const provider = requireModel(body);
  if (!SEARCH_PROVIDERS.has(provider)) throw new RequestError(400, `Unknown provider: ${provider}`);
  const query = body.query;
  if (typeof query !== 'string' || query.trim() === '') throw new RequestError(400, 'query is required');
  if (CONTROL_CHARACTERS.test(query)) throw new RequestError(400, 'query contains control characters');
  const searchType = validateEnum(body.search_type, 'search_type', SEARCH_TYPES) ?? 'web';
  validateEnum(body.time_range, 'time_range', TIME_RANGES);
  const filter = parseDomainFilter(body.domain_filter);
  const count = resultCount(body);
  const offset = typeof body.offset === 'number' && body.offset > 0 ? Math.floor(body.offset) : 0;

  const hosts = resultHosts(filter);
  const slug = slugOf(query);
  const titlePrefix = searchType === 'news' ? 'News: ' : '';
  const results = Array.from({ length: count }, (_, index) => {
    const n = offset + index + 1;
    const host = hosts[index % hosts.length] ?? 'example.com';
    return {
      title: `${titlePrefix}Result ${n} for ${query}`,
      url: `https://${host}/${slug}/${n}`,
      display_url: `${host}/${slug}/${n}`,
      // About as long as a real provider's snippet (~160 characters).
      snippet: `Snippet ${n} about ${query}: what it is, how it works in practice, the trade-offs people hit, and links for further reading.`,
      position: n,
      score: Math.round((0.99 - index * 0.03) * 100) / 100,
      published_at: n % 2 === 0 ? new Date(Date.UTC(2024, 0, n)).toISOString() : null,
      favicon_url: null,
      content: null,
      metadata: {},
      citation: {},
    };
  });
  return jsonReply({
    provider,
    query,
    results,
    answer: answerFor(query),
    usage: { queries_used: 1, search_cost_usd: 0.008 },
    metrics: { response_time_ms: 42 },
    errors: [],
  });
}
