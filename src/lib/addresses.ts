// IP addresses and host entries, as the URL guard and the settings read them: which addresses no
// public web host has, and `host` or `host:port` as GATEWAY_ALLOW_PRIVATE_URLS lists them.

import type { BlockList } from 'node:net';

// node:net is taken when first needed, not at start-up (most runs never download).
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
