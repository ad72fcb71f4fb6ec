// Keeps the server from becoming a proxy into the local network. The server itself fetches only
// two kinds of URL: an audio `url` an agent passes to audio_transcribe, and a finished video's URL
// the gateway answers with (plus every redirect hop of both). A prompt injection can steer the
// first, a compromised gateway the second; neither may reach loopback, private, link-local
// (cloud metadata at 169.254.169.254) or other non-public addresses. Exempt: the gateway's own
// origin (the user configured it, and it usually is on loopback), and the hosts listed in
// GATEWAY_ALLOW_PRIVATE_URLS (`*` = any). Names are checked on the addresses they resolve to,
// at connect time, so DNS rebinding cannot slip a private address past the check.

import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isNonPublicAddress, parseHostEntry } from '../lib/addresses.js';
import { ServiceError } from './errors.js';

// node:net is taken when first needed, not at start-up (most runs never download).
const isIP = (text: string) => process.getBuiltinModule('node:net').isIP(text);

/** A refused destination, as a ServiceError the tools turn into a sentence (never retried). */
export function blockedUrlError(host: string, address: string): ServiceError {
  const shown = host === address ? host : `${host} (${address})`;
  return new ServiceError({
    kind: 'blocked',
    message: `Refused to connect to ${shown}: a loopback, private or link-local address is never fetched for a URL from a tool argument or a service answer`,
    maybeDelivered: false,
  });
}

export class UrlGuard {
  private readonly anyHost: boolean;
  private readonly allowed: { hostname: string; port: string }[];

  constructor(
    private readonly gatewayOrigin: string,
    allowPrivate: readonly string[],
  ) {
    this.anyHost = allowPrivate.includes('*');
    this.allowed = allowPrivate.filter((h) => h !== '*').flatMap((entry) => parseHostEntry(entry) ?? []);
  }

  /** `trusted`: connect as is (the gateway, an allowed host). `guarded`: non-public addresses refused. */
  classify(url: URL): 'trusted' | 'guarded' {
    if (url.origin === this.gatewayOrigin || this.anyHost) return 'trusted';
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const listed = this.allowed.some((a) => a.hostname === url.hostname && (!a.port || a.port === port));
    return listed ? 'trusted' : 'guarded';
  }

  /** Throws for an address literal in a non-public range (literals never reach the DNS lookup). */
  assertPublicLiteral(url: URL): void {
    if (isNonPublicAddress(url.hostname)) throw blockedUrlError(url.hostname, url.hostname);
  }
}

/**
 * A DNS lookup for the guarded connection pool: resolves as usual, then refuses the connection
 * when any address the name resolves to is non-public. The socket connects to exactly the
 * addresses checked here, so there is no window between check and use.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  process
    .getBuiltinModule('node:dns')
    .lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const blocked = addresses.find((a) => isNonPublicAddress(a.address));
      if (blocked) return callback(blockedUrlError(hostname, blocked.address), '', 0);
      if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return callback(null, first.address, first.family);
    });
};

/**
 * For a download sent through a proxy, which resolves the name and connects itself: resolves the
 * name here first and refuses it when any address is non-public, so a name pointing into the
 * local network is never handed to the proxy. A name that does not resolve here is left to the
 * proxy (behind many corporate proxies only the proxy resolves public names); what a name
 * resolves to from the proxy's side of the network is the proxy's to police.
 */
export function assertPublicHost(hostname: string): Promise<void> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) {
    return isNonPublicAddress(bare) ? Promise.reject(blockedUrlError(hostname, bare)) : Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    process.getBuiltinModule('node:dns').lookup(bare, { all: true }, (error, addresses) => {
      const blocked = error ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
      if (blocked) reject(blockedUrlError(hostname, blocked.address));
      else resolve();
    });
  });
}
