// The two gateways a suite runs the same cases against, with `describe.each(BACKENDS)`: the
// reference service (test/reference-service), which imitates 9router and injects faults on demand,
// and the real gateway, 9router (test/nine-router), with fake upstream providers behind it. Each
// block gets its backend and an in-memory server connected to it. A file that uses them is named
// `*.real.test.ts`: the real gateway needs the real-gateway project's global set-up.
import { beforeAll } from 'vitest';
import { type JournalEntry, type RealGateway, useRealGateway } from '../nine-router/use.js';
import type { ReferenceService, RouteName } from '../reference-service/index.js';
import { useGateway } from './gateway.js';
import type { Connected } from './harness.js';

export type BackendName = 'the reference service' | '9router';

export interface Backend {
  name: BackendName;
  /** An SDK client connected in memory to a server pointed at this backend. */
  conn: Connected;
  /** The settings of that server: the backend's address and key, and the block's own settings. */
  env: Record<string, string>;
  /** The key the server sends to the gateway. */
  apiKey: string;
  /** The reference service, when it is the backend: its recorded requests, counters, faults. */
  reference?: ReferenceService;
  /** The real gateway, when it is the backend: the journal of what reached its upstreams. */
  nineRouter?: RealGateway;
}

export interface BackendOptions {
  /** More server settings; called once the backend runs (e.g. to name a working directory). */
  env?: () => Record<string, string>;
  /** Loopback hosts (host:port) downloads may reach besides the backend's own. */
  privateHosts?: () => string[];
}

function useReferenceBackend(options: BackendOptions = {}): Backend {
  const backend = { name: 'the reference service' } as Backend;
  let settings: Record<string, string> = {};
  const gateway = useGateway({
    env: () => {
      const hosts = options.privateHosts?.() ?? [];
      settings = {
        ...(hosts.length ? { GATEWAY_ALLOW_PRIVATE_URLS: hosts.join(',') } : {}),
        ...options.env?.(),
      };
      return settings;
    },
  });
  // After useGateway's own beforeAll (hooks run in order): the service and server are up.
  beforeAll(() => {
    backend.reference = gateway.service;
    backend.conn = gateway.conn;
    backend.apiKey = gateway.service.apiKey;
    backend.env = {
      GATEWAY_BASE_URL: gateway.service.url,
      GATEWAY_API_KEY: gateway.service.apiKey,
      ...settings,
    };
  });
  return backend;
}

function useNineRouterBackend(options: BackendOptions = {}): Backend {
  const backend = { name: '9router' } as Backend;
  let settings: Record<string, string> = {};
  const gateway = useRealGateway({
    env: (info) => {
      // Finished videos come from the fake upstream, on loopback too.
      const hosts = [new URL(info.upstreamUrl).host, ...(options.privateHosts?.() ?? [])];
      settings = { GATEWAY_ALLOW_PRIVATE_URLS: hosts.join(','), ...options.env?.() };
      return settings;
    },
  });
  beforeAll(() => {
    backend.nineRouter = gateway;
    backend.conn = gateway.conn;
    backend.apiKey = gateway.info.apiKey;
    backend.env = { ...gateway.env, ...settings };
  });
  return backend;
}

/** Starts a backend and its server for the enclosing describe block (its hooks). */
export type UseBackend = (options?: BackendOptions) => Backend;

/** For `describe.each(BACKENDS)('… on %s', (_name, use) => { const backend = use(); … })`. */
export const BACKENDS: readonly (readonly [BackendName, UseBackend])[] = [
  ['the reference service', useReferenceBackend],
  ['9router', useNineRouterBackend],
];

/** Reference routes that cost nothing: model lists, voices and health. */
const FREE_ROUTES: ReadonlySet<RouteName> = new Set([
  'models',
  'models.kind',
  'models.info',
  'voices',
  'health',
]);

/**
 * What the test sent that a provider would bill, one line each: on the reference service every
 * request but the free routes; on 9router every request that reached a fake upstream but a
 * provider's own model list (the gateway asks for those when it lists models).
 */
export async function billableRequests(backend: Backend): Promise<string[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => !FREE_ROUTES.has(r.route))
      .map((r) => `${r.method} ${r.path}`);
  }
  const journal = (await backend.nineRouter?.upstream()) ?? [];
  return journal
    .filter((e) => !(e.method === 'GET' && e.path.endsWith('/models')))
    .map((e) => `${e.method} ${e.host}${e.path}`);
}

const FETCH_HOSTS: Record<string, string> = {
  'r.jina.ai': 'jina-reader',
  'api.tavily.com': 'tavily',
  'api.firecrawl.dev': 'firecrawl',
  'api.exa.ai': 'exa',
};

/** The page URL a 9router fetch provider was asked for, in its own field. */
function targetOf(entry: JournalEntry | undefined): unknown {
  const body = entry?.body as Record<string, unknown> | undefined;
  return body?.url ?? (body?.urls as unknown[] | undefined)?.[0] ?? (body?.ids as unknown[] | undefined)?.[0];
}

/** The page fetches of this test: the provider and the page asked for. */
export async function pageFetchesSent(backend: Backend): Promise<{ provider: string; url: unknown }[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => r.route === 'fetch')
      .map((r) => {
        const body = r.body as { model: string; url: string };
        return { provider: body.model, url: body.url };
      });
  }
  const journal = (await backend.nineRouter?.upstream()) ?? [];
  return journal
    .filter((e) => FETCH_HOSTS[e.host] && !e.path.endsWith('/search'))
    .map((e) => ({ provider: FETCH_HOSTS[e.host] ?? e.host, url: targetOf(e) }));
}
