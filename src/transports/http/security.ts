import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { hostname as machineName, networkInterfaces } from 'node:os';
import { type Config, ConfigError } from '../../config/config.js';

/**
 * Who may talk to the HTTP transport: the Host and Origin checks that stop DNS rebinding (a web
 * page whose name suddenly resolves to 127.0.0.1 must not reach a local server), the bearer token,
 * and the start-up rule that a server reachable from other machines always needs that token.
 */
export type SecuritySettings = Pick<
  Config,
  'host' | 'mcpToken' | 'allowedHosts' | 'allowedOrigins' | 'oauthIssuer' | 'publicUrl'
>;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

/** Refuses, at start-up, the configurations that would expose the gateway key to a network. */
export function assertSafeBinding(settings: SecuritySettings): void {
  // Either credential keeps strangers out: OAuth asks every request for a token too.
  if (settings.mcpToken || settings.oauthIssuer) return;
  if (!isLoopbackHost(settings.host)) {
    throw new ConfigError(
      `refusing to listen on ${settings.host} without GATEWAY_MCP_TOKEN (--mcp-token): anyone who can reach ` +
        'that address could spend your gateway key; set a token of 16+ characters (or GATEWAY_OAUTH_ISSUER ' +
        'for a team), or bind 127.0.0.1',
    );
  }
  for (const [list, name] of [
    [settings.allowedHosts, 'GATEWAY_ALLOWED_HOSTS (--allowed-hosts)'],
    [settings.allowedOrigins, 'GATEWAY_ALLOWED_ORIGINS (--allowed-origins)'],
  ] as const) {
    if (list.includes('*')) {
      throw new ConfigError(
        `${name} "*" turns off DNS-rebinding protection and needs GATEWAY_MCP_TOKEN (--mcp-token)`,
      );
    }
  }
}

/** A host name as the URL parser writes it: lower case, IPv6 in brackets, no port. */
export function normalizeHostname(host: string): string | undefined {
  const trimmed = host.trim();
  const withBrackets = isIP(trimmed) === 6 ? `[${trimmed}]` : trimmed;
  try {
    return new URL(`http://${withBrackets}`).hostname;
  } catch {
    return undefined;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export class RequestGuard {
  private readonly hostnames = new Set<string>();
  private readonly anyHost: boolean;
  private readonly origins: Set<string>;
  private readonly anyOrigin: boolean;
  private readonly tokenDigest: Buffer | undefined;

  constructor(settings: SecuritySettings) {
    const named = [...LOOPBACK_NAMES, settings.host, ...settings.allowedHosts.filter((h) => h !== '*')];
    // Behind a proxy, clients send the public name.
    if (settings.publicUrl) named.push(new URL(settings.publicUrl).hostname);
    // A wildcard bind answers on every interface: the names this machine goes by are its own.
    if (WILDCARD_HOSTS.has(settings.host.trim())) named.push(machineName(), ...interfaceAddresses());
    for (const name of named) {
      const normalized = normalizeHostname(name);
      if (normalized) this.hostnames.add(normalized);
    }
    this.anyHost = settings.allowedHosts.includes('*');
    this.anyOrigin = settings.allowedOrigins.includes('*');
    this.origins = new Set(settings.allowedOrigins.filter((o) => o !== '*').map(originOf));
    this.tokenDigest = settings.mcpToken ? sha256(settings.mcpToken) : undefined;
  }

  /** Why the Host header is refused, or undefined when it is fine. */
  hostProblem(req: IncomingMessage): string | undefined {
    const header = req.headers.host;
    if (!header) return 'the request has no Host header';
    if (this.anyHost) return undefined;
    let name: string;
    try {
      name = new URL(`http://${header}`).hostname;
    } catch {
      return `the Host header "${header.slice(0, 100)}" is not a host name`;
    }
    if (this.hostnames.has(name)) return undefined;
    return `Host "${name}" is not allowed; add it to GATEWAY_ALLOWED_HOSTS if clients really use that name`;
  }

  /** Why the Origin header is refused, or undefined when it is absent or allowed. */
  originProblem(req: IncomingMessage): string | undefined {
    const origin = req.headers.origin;
    if (origin === undefined || this.anyOrigin) return undefined;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return `Origin "${origin.slice(0, 100)}" is not allowed`;
    }
    if (this.origins.has(url.origin) || this.hostnames.has(url.hostname)) return undefined;
    return `Origin "${url.origin}" is not allowed; add it to GATEWAY_ALLOWED_ORIGINS if it is yours`;
  }

  /** True when no token is configured, or the request carries it as a bearer token. */
  authorized(req: IncomingMessage): boolean {
    return !this.tokenDigest || this.sentStaticToken(req);
  }

  /** True when a token is configured and the request carries it as a bearer token. */
  sentStaticToken(req: IncomingMessage): boolean {
    if (!this.tokenDigest) return false;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match?.[1]) return false;
    // Hashes have equal lengths, so the comparison takes the same time whatever was sent.
    return timingSafeEqual(sha256(match[1]), this.tokenDigest);
  }

  /** CORS headers for a request from an allowed browser origin (none without an Origin). */
  corsHeaders(req: IncomingMessage, preflight: boolean): Record<string, string> {
    const origin = req.headers.origin;
    if (!origin || this.originProblem(req)) return {};
    const headers: Record<string, string> = {
      'access-control-allow-origin': origin,
      vary: 'Origin',
      'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate',
    };
    if (preflight) {
      headers['access-control-allow-methods'] = 'GET, POST, DELETE, OPTIONS';
      headers['access-control-allow-headers'] =
        'authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id';
      headers['access-control-max-age'] = '600';
    }
    return headers;
  }
}

function originOf(text: string): string {
  try {
    return new URL(text.trim()).origin;
  } catch {
    return text.trim();
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((info) => info.address)
    .filter((address) => !address.includes('%'));
}
