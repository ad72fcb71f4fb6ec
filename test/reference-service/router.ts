// Which route a request path names. `/v1/...` and `/api/v1/...` are the same routes, and the
// Responses endpoint also answers at `/responses`.

import type { Reply } from './http-util.js';
import type { ParsedBody } from './request-body.js';
import type { ServiceState } from './state.js';
import type { RouteName } from './types.js';

export interface RouteContext {
  route: RouteName;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string | undefined>;
  body: ParsedBody;
  state: ServiceState;
  /** Aborted when the client goes away or the service closes. */
  signal: AbortSignal;
}

export type RouteHandler = (context: RouteContext) => Reply | Promise<Reply>;

interface RouteSpec {
  name: RouteName;
  method: 'GET' | 'POST';
  pattern: RegExp;
  param?: string;
}

// Order matters: `/models/info` must win over `/models/{kind}`.
const API_ROUTES: readonly RouteSpec[] = [
  { name: 'search', method: 'POST', pattern: /^\/search$/ },
  { name: 'fetch', method: 'POST', pattern: /^\/web\/fetch$/ },
  { name: 'videos.generations', method: 'POST', pattern: /^\/videos\/generations$/ },
  { name: 'videos.edits', method: 'POST', pattern: /^\/videos\/edits$/ },
  { name: 'videos.extensions', method: 'POST', pattern: /^\/videos\/extensions$/ },
  { name: 'videos.poll', method: 'GET', pattern: /^\/videos\/([^/]+)$/, param: 'id' },
  { name: 'speech', method: 'POST', pattern: /^\/audio\/speech$/ },
  { name: 'transcriptions', method: 'POST', pattern: /^\/audio\/transcriptions$/ },
  { name: 'voices', method: 'GET', pattern: /^\/audio\/voices$/ },
  { name: 'responses', method: 'POST', pattern: /^\/responses$/ },
  { name: 'models', method: 'GET', pattern: /^\/models$/ },
  { name: 'models.info', method: 'GET', pattern: /^\/models\/info$/ },
  { name: 'models.kind', method: 'GET', pattern: /^\/models\/([^/]+)$/, param: 'kind' },
];

export type RouteMatch =
  | { kind: 'route'; route: RouteName; params: Record<string, string> }
  | { kind: 'method-not-allowed' }
  | { kind: 'not-found' };

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function apiPath(pathname: string): string | null {
  if (pathname === '/responses') return pathname;
  if (pathname.startsWith('/api/v1/')) return pathname.slice('/api/v1'.length);
  if (pathname.startsWith('/v1/')) return pathname.slice('/v1'.length);
  return null;
}

export function matchRoute(method: string, pathname: string): RouteMatch {
  if (pathname === '/api/health') {
    return method === 'GET' ? { kind: 'route', route: 'health', params: {} } : { kind: 'method-not-allowed' };
  }
  // Finished videos, as a CDN serves them (no auth); the redirect route stands for signed-URL hops.
  const file = /^\/files\/(video|redirect)\/([A-Za-z0-9_-]+)\.mp4$/.exec(pathname);
  if (file?.[2]) {
    return method === 'GET' || method === 'HEAD'
      ? {
          kind: 'route',
          route: file[1] === 'video' ? 'files.video' : 'files.redirect',
          params: { id: file[2] },
        }
      : { kind: 'method-not-allowed' };
  }
  const path = apiPath(pathname);
  if (path === null) return { kind: 'not-found' };
  let pathKnown = false;
  for (const spec of API_ROUTES) {
    const match = spec.pattern.exec(path);
    if (!match) continue;
    if (spec.method !== method) {
      pathKnown = true;
      continue;
    }
    const value = match[1];
    const params = spec.param && value !== undefined ? { [spec.param]: decodeSegment(value) } : {};
    return { kind: 'route', route: spec.name, params };
  }
  return pathKnown ? { kind: 'method-not-allowed' } : { kind: 'not-found' };
}
