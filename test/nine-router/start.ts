// The real gateway for tests, whole: 9router installed (once per machine), the fake upstreams,
// the TLS proxy in front of them, 9router started against both and configured.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificates } from './certificates.js';
import { configureGateway, type GatewaySetup } from './configure.js';
import { Dashboard } from './dashboard.js';
import { ensureNineRouter, NINE_ROUTER_VERSION } from './install.js';
import { startNineRouter } from './process.js';
import { startTlsProxy, UPSTREAM_HOSTS } from './tls-proxy.js';
import { startUpstream } from './upstream/server.js';

export interface TestGateway extends GatewaySetup {
  version: string;
  /** The gateway's base URL (http://127.0.0.1:<port>). */
  url: string;
  pid: number;
  /** The fake upstreams' own loopback address: journal, files, self-hosted providers, nodes. */
  upstreamUrl: string;
  /** The dashboard session, for clearing cooldowns. */
  dashboardCookie: string;
  logFile: string;
  /** Proxy destinations refused (anything but the fake upstream hosts). */
  refused: string[];
  stop(): Promise<void>;
}

export interface StartOptions {
  /** false: a gateway as a new user has it, with no key and no provider (docs/gateway.md). */
  configure?: boolean;
}

export async function startTestGateway(options: StartOptions = {}): Promise<TestGateway> {
  const appDir = await ensureNineRouter();
  const home = mkdtempSync(join(tmpdir(), 'gtm-9router-'));
  const certs = await makeCertificates(home, UPSTREAM_HOSTS);
  const upstream = await startUpstream();
  const proxy = await startTlsProxy(certs, upstream.server);
  let router: Awaited<ReturnType<typeof startNineRouter>> | undefined;
  const stop = async () => {
    await router?.stop();
    await proxy.close();
    await upstream.close();
    rmSync(home, { recursive: true, force: true });
  };
  try {
    router = await startNineRouter(appDir, home, {
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      NO_PROXY: '127.0.0.1,localhost,::1',
      NODE_EXTRA_CA_CERTS: certs.caFile,
    });
    const dashboard = await Dashboard.login(router.url);
    const setup =
      options.configure === false
        ? { apiKey: '', providerKeys: {} }
        : await configureGateway(dashboard, upstream.url);
    return {
      ...setup,
      version: NINE_ROUTER_VERSION,
      url: router.url,
      pid: router.pid,
      upstreamUrl: upstream.url,
      dashboardCookie: dashboard.session,
      logFile: router.logFile,
      refused: proxy.refused,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
