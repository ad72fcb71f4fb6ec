// Keeps the server from becoming a proxy into the local network. The server itself fetches only
// two kinds of URL: an audio `url` an agent passes to audio_transcribe, and a finished video's URL
// the gateway answers with (plus every redirect hop of both). A prompt injection can steer the
// first, a compromised gateway the second; neither may reach loopback, private, link-local
// (cloud metadata at 169.254.169.254) or other non-public addresses. Exempt: the gateway's own
// origin (the user configured it, and it usually is on loopback), and the hosts listed in
// GATEWAY_ALLOW_PRIVATE_URLS (`*` = any). Names are checked on the addresses they resolve to,
// at connect time, so DNS rebinding cannot slip a private address past the check.

import type { LookupAddress } from 'node:dns';
import type { BlockList, LookupFunction } from 'node:net';
import { ServiceError } from './errors.js';

// node:net and node:dns are taken when first needed, not at start-up (most runs never download).
const net = () => process.getBuiltinModule('node:net');
const isIP = (text: string) => net().isIP(text);
let nonPublic: BlockList | undefined;

function nonPublicRanges(): BlockList {
  if (nonPublic) return nonPublic;
  const list = new (net().BlockList)();
  for (const [network, prefix] of [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // carrier-grade NAT
    ['127.0.0.0', 8],
    ['169.254.0.0', 16], // link-local, cloud metadata
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ] as const) {
    list.addSubnet(network, prefix, 'ipv4');
  }
  for (const [network, prefix] of [
    ['::', 128],
    ['::1', 128],
    ['::', 96], // IPv4-compatible (deprecated)
    ['100::', 64], // discard
    ['2001:db8::', 32], // documentation
    ['fc00::', 7], // unique local
    ['fe80::', 10], // link-local
    ['fec0::', 10], // site-local (deprecated)
    ['ff00::', 8], // multicast
  ] as const) {
    list.addSubnet(network, prefix, 'ipv6');
  }
  nonPublic = list;
  return list;
}

/** True for an IP address no public web host has (IPv4-mapped, NAT64 and 6to4 forms included). */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 4) return nonPublicRanges().check(bare, 'ipv4');
  const inner = embeddedIpv4(bare);
  if (inner) return nonPublicRanges().check(inner, 'ipv4');
  return nonPublicRanges().check(bare, 'ipv6');
}

/** The IPv4 address inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address, if it is one. */
function embeddedIpv4(ipv6: string): string | undefined {
  const words = ipv6Words(ipv6);
  if (!words) return undefined;
  const quad = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  if (nat64) return quad(words[6]!, words[7]!);
  if (words[0] === 0x2002) return quad(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad included). */
function ipv6Words(ipv6: string): number[] | undefined {
  let text = ipv6.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const words = [...left, ...Array<string>(missing).fill('0'), ...right].map((w) => Number.parseInt(w, 16));
  return words.length === 8 && words.every((w) => w >= 0 && w <= 0xffff) ? words : undefined;
}

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

/** `host` or `host:port` (IPv6 in brackets); undefined when it is not a host. */
export function parseHostEntry(entry: string): { hostname: string; port: string } | undefined {
  const text = entry.trim();
  if (!text || /[/?#@\s]/.test(text)) return undefined;
  try {
    const url = new URL(`http://${isIP(text) === 6 ? `[${text}]` : text}`);
    return { hostname: url.hostname, port: url.port };
  } catch {
    return undefined;
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
