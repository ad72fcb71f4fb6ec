import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseCommandLine } from '../../../src/config/config.js';
import { InFlightCalls } from '../../../src/transports/http/calls.js';
import {
  assertSafeBinding,
  isLoopbackHost,
  normalizeHostname,
  RequestGuard,
  type SecuritySettings,
} from '../../../src/transports/http/security.js';

const TOKEN = 'a-token-of-sixteen-chars';
const settings = (over: Partial<SecuritySettings> = {}): SecuritySettings => ({
  host: '127.0.0.1',
  mcpToken: undefined,
  allowedHosts: [],
  allowedOrigins: [],
  ...over,
});
const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('isLoopbackHost', () => {
  it('knows loopback from the rest', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host)).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', '128.0.0.1']) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });
});

describe('assertSafeBinding', () => {
  it('refuses an exposed address or a wildcard allow-list without a token', () => {
    expect(() => assertSafeBinding(settings({ host: '0.0.0.0' }))).toThrow(ConfigError);
    expect(() => assertSafeBinding(settings({ allowedHosts: ['*'] }))).toThrow(/needs GATEWAY_MCP_TOKEN/);
    expect(() => assertSafeBinding(settings({ allowedOrigins: ['*'] }))).toThrow(/needs GATEWAY_MCP_TOKEN/);
    expect(() => assertSafeBinding(settings({ host: '0.0.0.0', mcpToken: TOKEN }))).not.toThrow();
    expect(() => assertSafeBinding(settings())).not.toThrow();
  });
});

describe('RequestGuard', () => {
  it('accepts loopback Host names on any port and refuses others', () => {
    const guard = new RequestGuard(settings());
    for (const host of ['localhost:3000', '127.0.0.1', '[::1]:8080', 'LOCALHOST']) {
      expect(guard.hostProblem(request({ host }))).toBeUndefined();
    }
    expect(guard.hostProblem(request({ host: 'evil.example.com:3000' }))).toMatch(/not allowed/);
    expect(guard.hostProblem(request({}))).toMatch(/no Host header/);
  });

  it('accepts the bound host and allowed hosts; "*" accepts any Host', () => {
    const guard = new RequestGuard(settings({ host: '10.1.2.3', allowedHosts: ['mcp.example.com:443'] }));
    expect(guard.hostProblem(request({ host: '10.1.2.3:3000' }))).toBeUndefined();
    expect(guard.hostProblem(request({ host: 'mcp.example.com' }))).toBeUndefined();
    expect(guard.hostProblem(request({ host: 'other.example.com' }))).toBeDefined();
    const open = new RequestGuard(settings({ allowedHosts: ['*'], mcpToken: TOKEN }));
    expect(open.hostProblem(request({ host: 'anything.example' }))).toBeUndefined();
  });

  it('accepts no Origin, local origins and allowed origins; refuses the rest', () => {
    const guard = new RequestGuard(settings({ allowedOrigins: ['https://app.example.com/'] }));
    for (const origin of [undefined, 'http://localhost:5173', 'http://[::1]', 'https://app.example.com']) {
      expect(guard.originProblem(request(origin ? { origin } : {}))).toBeUndefined();
    }
    for (const origin of ['null', 'https://evil.example.com', 'http://app.example.com', 'not a url']) {
      expect(guard.originProblem(request({ origin }))).toMatch(/not allowed/);
    }
  });

  it('checks the bearer token exactly', () => {
    const guard = new RequestGuard(settings({ mcpToken: TOKEN }));
    expect(guard.authorized(request({ authorization: `Bearer ${TOKEN}` }))).toBe(true);
    expect(guard.authorized(request({ authorization: `bearer ${TOKEN}` }))).toBe(true);
    for (const authorization of [
      '',
      TOKEN,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(1)}`,
      `Basic ${TOKEN}`,
    ]) {
      expect(guard.authorized(request({ authorization }))).toBe(false);
    }
    expect(new RequestGuard(settings()).authorized(request({}))).toBe(true);
  });

  it('normalizes host names the way the URL parser does', () => {
    expect(normalizeHostname('::1')).toBe('[::1]');
    expect(normalizeHostname('Example.COM')).toBe('example.com');
    expect(normalizeHostname('bad host')).toBeUndefined();
  });
});

describe('InFlightCalls', () => {
  it('resolves whenIdle when the last call ends, or false at the deadline', async () => {
    const calls = new InFlightCalls();
    expect(await calls.whenIdle(10)).toBe(true);
    const end = calls.begin();
    calls.begin();
    expect(calls.size).toBe(2);
    expect(await calls.whenIdle(10)).toBe(false);
    const idle = new InFlightCalls();
    const done = idle.begin();
    const waiting = idle.whenIdle(10_000);
    done();
    done();
    expect(await waiting).toBe(true);
    end();
    expect(calls.size).toBe(1);
  });
});

describe('http settings', () => {
  it('have safe defaults and are read from env or flags', () => {
    const { config } = parseCommandLine(['--transport', 'http'], {}, '/tmp');
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      stateless: false,
      allowedHosts: [],
      allowedOrigins: [],
      maxSessions: 100,
      sessionIdleSeconds: 1800,
      shutdownGraceMs: 10_000,
    });
    const custom = parseCommandLine(
      ['--max-sessions', '5', '--stateless', '--allowed-hosts', 'a.example, b.example'],
      { GATEWAY_SESSION_IDLE_SECONDS: '60', GATEWAY_ALLOWED_ORIGINS: 'https://app.example.com' },
      '/tmp',
    ).config;
    expect(custom).toMatchObject({
      maxSessions: 5,
      stateless: true,
      sessionIdleSeconds: 60,
      allowedHosts: ['a.example', 'b.example'],
      allowedOrigins: ['https://app.example.com'],
    });
  });

  it('name the variable when a value is out of range', () => {
    expect(() => parseCommandLine([], { GATEWAY_MAX_SESSIONS: '0' }, '/tmp')).toThrow(
      /invalid GATEWAY_MAX_SESSIONS \(--max-sessions\): must be at least 1/,
    );
    expect(() => parseCommandLine(['--mcp-token', 'short'], {}, '/tmp')).toThrow(
      /invalid --mcp-token \(GATEWAY_MCP_TOKEN\): must be at least 16 characters$/,
    );
  });
});
