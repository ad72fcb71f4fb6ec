// The connection pools of the service client. `calls` carries the gateway's short JSON calls
// (search, fetch, model lists, job polls, submits); `transfers` its long ones (streamed answers,
// speech, uploads, downloads), which can hold a connection for minutes: kept apart, a burst of
// transfers never makes a short call wait for a connection, past its own timeout. Both reach the
// gateway (and the hosts GATEWAY_ALLOW_PRIVATE_URLS lists). `guarded` carries downloads from other
// hosts, which may reach public addresses only (url-guard.ts).
//
// Without a proxy, the guard runs in the DNS lookup of every connection, so it sees the address
// the socket really uses. With a proxy, the connection goes to the proxy, which resolves the
// target itself: the target's name is then resolved and checked before the request is handed to
// the proxy (assertPublicHost), and hosts NO_PROXY exempts keep the connect-time check as well.

import type * as Undici from 'undici';
import type { Dispatcher } from 'undici';
import type { ProxySettings } from '../config/proxy-settings.js';
import { assertPublicHost, publicOnlyLookup } from './url-guard.js';

export interface Dispatchers {
  calls: Dispatcher;
  transfers: Dispatcher;
  guarded: Dispatcher;
}

const GATEWAY_POOL = { keepAliveTimeout: 10_000, connections: 32 };
const GUARDED_POOL = { keepAliveTimeout: 10_000, connections: 8, connect: { lookup: publicOnlyLookup } };
/** Always reached directly: a proxy elsewhere cannot reach this machine's loopback (the gateway usually is there). */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** `undici` is passed in: it is loaded on the first request, not at start-up. */
export function createDispatchers(undici: typeof Undici, proxy: ProxySettings | undefined): Dispatchers {
  if (!proxy) {
    return {
      calls: new undici.Agent(GATEWAY_POOL),
      transfers: new undici.Agent(GATEWAY_POOL),
      guarded: new undici.Agent(GUARDED_POOL),
    };
  }
  // Explicit values (never undefined): undici would otherwise read this process's environment,
  // not the settings the server was started with.
  const { httpProxy, httpsProxy, noProxy } = proxy;
  const gateway = () =>
    new undici.EnvHttpProxyAgent({
      ...GATEWAY_POOL,
      httpProxy,
      httpsProxy,
      noProxy: [noProxy, ...LOOPBACK].filter(Boolean).join(','),
    });
  return {
    calls: gateway(),
    transfers: gateway(),
    guarded: new undici.EnvHttpProxyAgent({ ...GUARDED_POOL, httpProxy, httpsProxy, noProxy }).compose(
      checkTargetFirst,
    ),
  };
}

/** Resolves and checks each request's target before it is dispatched (to the proxy, or directly). */
const checkTargetFirst: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
  const { hostname } = new URL(String(options.origin));
  assertPublicHost(hostname)
    .then(() => dispatch(options, handler))
    .catch((error: Error) =>
      handler.onResponseError?.(null as unknown as Dispatcher.DispatchController, error),
    );
  return true;
};
