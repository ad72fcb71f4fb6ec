// What a real-gateway test file uses: the gateway the run started, an in-memory server connected
// to it, and the journal of what reached the fake upstreams.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { type Connected, connectInMemory } from '../harness/harness.js';
import { Dashboard } from './dashboard.js';
import type { RealGatewayInfo } from './global-setup.js';
import type { JournalEntry } from './upstream/types.js';

export type { JournalEntry } from './upstream/types.js';

export interface RealGateway {
  info: RealGatewayInfo;
  /** An SDK client connected in memory to a server pointed at the real gateway. */
  conn: Connected;
  /** The server settings that point a server at this gateway (for spawned servers). */
  env: Record<string, string>;
  /** What reached the fake upstreams since this test began, optionally only one host's. */
  upstream(host?: string): Promise<JournalEntry[]>;
  /** Lifts every cooldown the gateway holds (done after each test too). */
  clearCooldowns(): Promise<number>;
}

export interface RealGatewayOptions {
  /** More server settings; a function is called once the gateway is known. */
  env?: Record<string, string> | ((info: RealGatewayInfo) => Record<string, string>);
}

/** A marker that makes a query, prompt or URL unique: 9router caches search answers for minutes. */
export function unique(label = 'q'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export function realGatewayEnv(info: RealGatewayInfo): Record<string, string> {
  return {
    GATEWAY_BASE_URL: info.url,
    GATEWAY_API_KEY: info.apiKey,
    // Finished videos are served by the fake upstream on loopback.
    GATEWAY_ALLOW_PRIVATE_URLS: new URL(info.upstreamUrl).host,
  };
}

export function useRealGateway(options: RealGatewayOptions = {}): RealGateway {
  const info = inject('realGateway');
  const dashboard = Dashboard.from(info.url, info.dashboardCookie);
  let since = 0;
  const seq = async () => {
    const res = await fetch(`${info.upstreamUrl}/__seq`);
    return ((await res.json()) as { seq: number }).seq;
  };
  const gateway: RealGateway = {
    info,
    conn: undefined as unknown as Connected,
    env: realGatewayEnv(info),
    async upstream(host) {
      const res = await fetch(`${info.upstreamUrl}/__journal?since=${since}`);
      const entries = (await res.json()) as JournalEntry[];
      return host ? entries.filter((e) => e.host === host) : entries;
    },
    clearCooldowns: () => dashboard.clearCooldowns(),
  };
  beforeAll(async () => {
    const extra = typeof options.env === 'function' ? options.env(info) : options.env;
    gateway.conn = await connectInMemory({ ...gateway.env, ...extra });
  });
  beforeEach(async () => {
    since = await seq();
  });
  afterEach(async () => {
    await dashboard.clearCooldowns();
    gateway.conn.runtime.service.catalog.clear();
  });
  afterAll(async () => {
    await gateway.conn?.close();
  });
  return gateway;
}
