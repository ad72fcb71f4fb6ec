import { request } from 'node:http';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/harness.js';
import {
  connectHttp,
  disconnect,
  HTTP_KINDS,
  type HttpServerProcess,
  INITIALIZE,
  MCP_HEADERS,
  startHttpCli,
} from '../../harness/http-harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

const TOKEN = 'mcp-token-0123456789abcdef';

/** An OAuth provider as OAuth-capable clients have one, recording what the client asked of it. */
function oauthProvider(): { provider: OAuthClientProvider; calls: string[] } {
  const calls: string[] = [];
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return 'http://127.0.0.1:1/callback';
    },
    get clientMetadata() {
      return { client_name: 'oauth-capable', redirect_uris: ['http://127.0.0.1:1/callback'] };
    },
    clientInformation: () => undefined,
    saveClientInformation: () => {
      calls.push('saveClientInformation');
    },
    tokens: () => undefined,
    saveTokens: () => {
      calls.push('saveTokens');
    },
    redirectToAuthorization: () => {
      calls.push('redirectToAuthorization');
    },
    saveCodeVerifier: () => {
      calls.push('saveCodeVerifier');
    },
    codeVerifier: () => 'verifier',
  };
  return { provider, calls };
}
let service: ReferenceService;
let env: Record<string, string>;
let open: HttpServerProcess;
let guarded: HttpServerProcess;

beforeAll(async () => {
  service = await startReferenceService();
  env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey, GATEWAY_LOG_LEVEL: 'debug' };
  [open, guarded] = await Promise.all([
    startHttpCli({
      ...env,
      GATEWAY_ALLOWED_HOSTS: 'mcp.example.com',
      GATEWAY_ALLOWED_ORIGINS: 'https://app.example.com',
    }),
    startHttpCli({ ...env, GATEWAY_MCP_TOKEN: TOKEN }),
  ]);
});
afterAll(async () => {
  expect(await open.stop()).toBe(0);
  expect(await guarded.stop()).toBe(0);
  await service.close();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http rather than fetch: fetch will not send a Host header of our choosing. */
function raw(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<Raw>((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { method, headers }, (res) => {
      // An SSE stream never ends by itself: its status and headers are all we need.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
        res.destroy();
        return;
      }
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = (base: string, headers: Record<string, string>) =>
  raw(base, 'POST', '/mcp', { ...MCP_HEADERS, ...headers }, JSON.stringify(INITIALIZE));

describe('bearer token (GATEWAY_MCP_TOKEN)', () => {
  it('answers 403 with the header to send for a missing or wrong token on every MCP route', async () => {
    const attempts: [Record<string, string>, RegExp][] = [
      [{}, /no bearer token was sent/],
      [{ authorization: 'Bearer wrong-token-0123456789' }, /the bearer token is wrong/],
      [{ authorization: TOKEN }, /the bearer token is wrong/],
    ];
    for (const [auth, why] of attempts) {
      const init = await initialize(guarded.url, auth);
      expect(init.status).toBe(403);
      expect(init.headers['www-authenticate']).toMatch(
        /^Bearer realm="gateway-tools-mcp", error="invalid_token"/,
      );
      expect(JSON.parse(init.body).error.message).toMatch(why);
      expect(JSON.parse(init.body).error.message).toMatch(
        /takes no OAuth; it takes a static token, sent as the header Authorization: Bearer/,
      );
      expect((await raw(guarded.url, 'GET', '/sse', { accept: 'text/event-stream', ...auth })).status).toBe(
        403,
      );
      expect((await raw(guarded.url, 'POST', '/messages?sessionId=x', auth, '{}')).status).toBe(403);
    }
  });

  it('leads a client with an OAuth provider (as Claude Code and mcp-remote have) to the header, not to OAuth', async () => {
    const oauth = oauthProvider();
    const client = new Client({ name: 'oauth-capable', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', guarded.url), {
      authProvider: oauth.provider,
      requestInit: { headers: { authorization: 'Bearer wrong-token-0123456789' } },
    });
    const failure = await client.connect(transport).then(
      () => undefined,
      (error: Error) => error,
    );
    await client.close();
    expect(failure?.message).toMatch(/the bearer token is wrong; this server takes no OAuth/);
    expect(failure?.message).toMatch(/Authorization: Bearer <the value of GATEWAY_MCP_TOKEN>/);
    expect(oauth.calls).toEqual([]);
    const discovery = await raw(guarded.url, 'GET', '/.well-known/oauth-protected-resource/mcp', {});
    expect(discovery.status).toBe(404);
    expect(JSON.parse(discovery.body).error.message).toMatch(/takes no OAuth; it takes a static token/);
  });

  it('accepts the right token over both transports and leaves /healthz open', async () => {
    expect((await initialize(guarded.url, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    for (const kind of HTTP_KINDS) {
      const client = await connectHttp(guarded.url, kind, { token: TOKEN });
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('web_search');
      await disconnect(client);
      await expect(connectHttp(guarded.url, kind)).rejects.toThrow();
    }
    expect((await raw(guarded.url, 'GET', '/healthz', {})).status).toBe(200);
    expect(guarded.stderr()).toContain('bearer token required');
    expect(guarded.stderr()).not.toContain(TOKEN);
  });
});

describe('DNS-rebinding protection', () => {
  const port = () => new URL(open.url).port;

  it('refuses a foreign Host with 403 and accepts loopback names and allowed hosts', async () => {
    const refused = await initialize(open.url, { host: `evil.example.com:${port()}` });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toMatch(/Host "evil.example.com" is not allowed/);
    expect((await raw(open.url, 'GET', '/sse', { host: 'evil.example.com' })).status).toBe(403);
    for (const host of [`localhost:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`, 'mcp.example.com']) {
      expect((await initialize(open.url, { host })).status).toBe(200);
    }
  });

  it('refuses a foreign Origin with 403 and accepts local and allowed origins', async () => {
    for (const origin of ['http://evil.example.com', 'null', 'https://app.example.com.evil.net']) {
      expect((await initialize(open.url, { origin })).status).toBe(403);
      expect((await raw(open.url, 'POST', '/messages?sessionId=x', { origin }, '{}')).status).toBe(403);
    }
    for (const origin of ['http://localhost:5173', `http://127.0.0.1:${port()}`, 'https://app.example.com']) {
      const ok = await initialize(open.url, { origin });
      expect(ok.status).toBe(200);
      expect(ok.headers['access-control-allow-origin']).toBe(origin);
      expect(ok.headers['access-control-expose-headers']).toContain('mcp-session-id');
    }
  });

  it('answers CORS preflights for allowed origins only', async () => {
    const preflight = (origin: string) =>
      raw(open.url, 'OPTIONS', '/mcp', {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, mcp-session-id',
      });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-headers']).toContain('mcp-session-id');
    expect(allowed.headers['access-control-allow-methods']).toContain('DELETE');
    expect((await preflight('https://evil.example.com')).status).toBe(403);
  });
});

describe('binding', () => {
  it('refuses a non-loopback address without a token: exit 2, one line', async () => {
    for (const args of [
      ['--host', '0.0.0.0'],
      ['--allowed-hosts', '*'],
    ]) {
      const run = await runCli(['--transport', 'http', '--port', '0', ...args], env);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/GATEWAY_MCP_TOKEN/);
    }
  });

  it('serves every interface with a token, and still checks it', async () => {
    const wide = await startHttpCli({ ...env, GATEWAY_MCP_TOKEN: TOKEN }, ['--host', '0.0.0.0']);
    try {
      expect(wide.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      expect(wide.stderr()).toMatch(/TLS/);
      const local = wide.url.replace('0.0.0.0', '127.0.0.1');
      expect((await initialize(local, {})).status).toBe(403);
      expect((await initialize(local, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    } finally {
      expect(await wide.stop()).toBe(0);
    }
  });

  it('exits 2 with one line when the port is taken', async () => {
    const run = await runCli(['--transport', 'http', '--port', new URL(open.url).port], env);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(
      /^gateway-tools-mcp: cannot listen on 127\.0\.0\.1:\d+: .*already in use/,
    );
  });
});
