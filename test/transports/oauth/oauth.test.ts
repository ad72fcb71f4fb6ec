// The HTTP transport as an OAuth resource server, through the front door: the built server
// spawned with GATEWAY_OAUTH_ISSUER pointing at a real OpenID provider (identity-provider.ts) on
// 127.0.0.1, real SDK clients of both eras doing their own OAuth (authorization code with PKCE,
// client credentials), and tool calls that reach the reference service.

import { createServer } from 'node:net';
import {
  ClientCredentialsProvider,
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
  type OAuthClientProvider,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { OAuthClientProvider as LegacyOAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError as LegacyUnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEra, MODERN } from '../../harness/eras.js';
import { useReferenceService } from '../../harness/gateway.js';
import { spawnServer, textOf } from '../../harness/harness.js';
import {
  eventually,
  type HttpServerProcess,
  INITIALIZE,
  MCP_HEADERS,
  startHttpCli,
  toolCall,
} from '../../harness/http-harness.js';
import {
  AGENT,
  type IdentityProvider,
  INTROSPECTOR,
  MACHINE,
  OPAQUE_MACHINE,
  startIdentityProvider,
} from './identity-provider.js';

const STATIC_TOKEN = 'static-token-for-the-operator-0123';
const gateway = useReferenceService();
let idp: IdentityProvider;
let server: HttpServerProcess;
/** The service's base URL, which is also GATEWAY_PUBLIC_URL. */
let base: string;
/** The resource tokens must be issued for. */
let resource: string;

beforeAll(async () => {
  idp = await startIdentityProvider();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  resource = `${base}/mcp`;
  server = await startHttpCli(
    {
      ...gateway.env,
      GATEWAY_LOG_LEVEL: 'debug',
      GATEWAY_OAUTH_ISSUER: idp.issuer,
      GATEWAY_PUBLIC_URL: base,
      GATEWAY_OAUTH_REQUIRE_SCOPES: 'true',
      GATEWAY_OAUTH_CLIENT_ID: INTROSPECTOR.id,
      GATEWAY_OAUTH_CLIENT_SECRET: INTROSPECTOR.secret,
      GATEWAY_MCP_TOKEN: STATIC_TOKEN,
      GATEWAY_MCP_TOKEN_USER: 'ops@example.com',
    },
    ['--port', String(port)],
  );
});
afterAll(async () => {
  expect(await server?.stop()).toBe(0);
  await idp?.close();
  // No token or client secret ever reaches the log.
  for (const secret of [STATIC_TOKEN, INTROSPECTOR.secret, MACHINE.secret, OPAQUE_MACHINE.secret]) {
    expect(server.stderr()).not.toContain(secret);
  }
  expect(server.stderr()).not.toMatch(/eyJ[\w-]{20,}\./);
});

describe('the protected-resource metadata (RFC 9728)', () => {
  it.each(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'])(
    'is served at %s',
    async (path) => {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource,
        authorization_servers: [idp.issuer],
        scopes_supported: ['search', 'fetch', 'video', 'audio', 'models'],
        bearer_methods_supported: ['header'],
        resource_name: 'gateway-tools-mcp',
      });
    },
  );
});

describe('a request without a good token', () => {
  it('without one gets 401 pointing to the metadata, with the scopes to ask for', async () => {
    const response = await initialize({});
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", ` +
        'scope="search fetch video audio models"',
    );
  });

  const now = () => Math.floor(Date.now() / 1000);
  const bad: [string, () => Promise<string>][] = [
    ['from another issuer', () => idp.sign({ iss: 'http://127.0.0.1:9/other-issuer', aud: resource })],
    ['for another audience', () => idp.sign({ aud: 'https://api.example.com' })],
    ['expired', () => idp.sign({ aud: resource, iat: now() - 900, exp: now() - 120 })],
    ['not valid yet', () => idp.sign({ aud: resource, nbf: now() + 600 })],
    ['without a subject', () => idp.sign({ aud: resource, sub: undefined })],
    [
      'signed by another key under the issuer key id',
      async () => {
        const { privateKey } = await generateKeyPair('ES256');
        return new SignJWT({ sub: 'mallory', aud: resource, iss: idp.issuer, exp: now() + 300 })
          .setProtectedHeader({ alg: 'ES256', kid: 'idp-key-1' })
          .sign(privateKey);
      },
    ],
    [
      'unsigned (alg: none)',
      async () => {
        const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: 'mallory', aud: resource, iss: idp.issuer, exp: now() + 300 })}.`;
      },
    ],
    [
      'signed with HMAC (HS256) over the public key',
      async () => {
        const jwks = (await (await fetch(`${idp.issuer}/jwks`)).json()) as { keys: { x: string }[] };
        const secret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]));
        return new SignJWT({ sub: 'mallory', aud: resource, iss: idp.issuer, exp: now() + 300 })
          .setProtectedHeader({ alg: 'HS256', kid: 'idp-key-1' })
          .sign(secret);
      },
    ],
    [
      'issued by the provider for another resource',
      () => idp.machineToken('http://127.0.0.1:9/mcp', 'search'),
    ],
    ['opaque and unknown to the provider', async () => 'an-opaque-token-nobody-issued-0123456789'],
  ];
  it.each(bad)('%s gets 401 invalid_token', async (_what, token) => {
    const response = await initialize({ authorization: `Bearer ${await token()}` });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer error="invalid_token"/);
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('is refused for that reason alone: the same token made right is taken', async () => {
    const response = await initialize({ authorization: `Bearer ${await idp.sign({ aud: resource })}` });
    expect(response.status).toBe(200);
  });
});

describe('a person with an agent: authorization code with PKCE', () => {
  it('2026-07-28: the SDK v2 client signs in and calls web_search as that person', async () => {
    const auth = new AgentAuth();
    const first = new ModernClient(
      { name: 'agent', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await expect(
      first.connect(new ModernHttpTransport(new URL(resource), { authProvider: auth })),
    ).rejects.toThrow(UnauthorizedError);
    const transport = new ModernHttpTransport(new URL(resource), { authProvider: auth });
    await transport.finishAuth(await idp.approve(auth.authorizationUrl(), 'alice'));
    const client = new ModernClient(
      { name: 'agent', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(transport);
    const before = gateway.service.counters.search;
    const result = (await client.callTool({
      name: 'web_search',
      arguments: { query: 'oauth' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(gateway.service.counters.search).toBe(before + 1);
    expect(
      await eventually(() => server.stderr().includes(`web_search called by alice (client ${AGENT.id})`)),
    ).toBe(true);
    await client.close();
  });

  it('2025 era: the SDK v1 client signs in and calls web_search as that person', async () => {
    const auth = new AgentAuth();
    const first = new LegacyClient({ name: 'agent', version: '1' });
    await expect(
      first.connect(new LegacyHttpTransport(new URL(resource), { authProvider: auth })),
    ).rejects.toThrow(LegacyUnauthorizedError);
    const params = await idp.approve(auth.authorizationUrl(), 'bob');
    const transport = new LegacyHttpTransport(new URL(resource), { authProvider: auth });
    await transport.finishAuth(params.get('code') ?? '');
    const client = new LegacyClient({ name: 'agent', version: '1' });
    await client.connect(transport);
    const result = (await client.callTool({
      name: 'web_search',
      arguments: { query: 'oauth' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(
      await eventually(() => server.stderr().includes(`web_search called by bob (client ${AGENT.id})`)),
    ).toBe(true);
    await transport.terminateSession();
    await client.close();
  });
});

describe('a machine agent: client credentials', () => {
  it('2026-07-28: the SDK v2 ClientCredentialsProvider gets a token and calls web_search', async () => {
    const client = new ModernClient(
      { name: 'ci', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    const authProvider = new ClientCredentialsProvider({
      clientId: MACHINE.id,
      clientSecret: MACHINE.secret,
      scope: 'search fetch',
      expectedIssuer: idp.issuer,
    });
    await client.connect(new ModernHttpTransport(new URL(resource), { authProvider }));
    const result = (await client.callTool({
      name: 'web_search',
      arguments: { query: 'ci' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(
      await eventually(() =>
        server.stderr().includes(`web_search called by ${MACHINE.id} (client ${MACHINE.id})`),
      ),
    ).toBe(true);
    await client.close();
  });

  it('an opaque token is introspected (RFC 7662) and taken', async () => {
    const token = await idp.machineToken(resource, 'search', OPAQUE_MACHINE);
    expect(token).not.toContain('.');
    const client = new LegacyClient({ name: 'opaque', version: '1' });
    const transport = new LegacyHttpTransport(new URL(resource), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    const result = (await client.callTool({
      name: 'web_search',
      arguments: { query: 'opaque' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(
      await eventually(() => server.stderr().includes(`web_search called by ${OPAQUE_MACHINE.id}`)),
    ).toBe(true);
    await transport.terminateSession();
    await client.close();
  });
});

describe('scopes per tool family, when required', () => {
  let token: string;
  beforeAll(async () => {
    token = await idp.machineToken(resource, 'search fetch');
  });
  const headers = () => ({ authorization: `Bearer ${token}` });

  it('2025 era: web_search is allowed, video_generate refused with 403 insufficient_scope', async () => {
    const opened = await initialize(headers());
    const session = opened.headers.get('mcp-session-id') ?? '';
    await opened.body?.cancel();
    const sessionHeaders = {
      ...MCP_HEADERS,
      ...headers(),
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    };
    await post(sessionHeaders, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const refused = await post(sessionHeaders, toolCall(2, 'video_generate', { prompt: 'a cat' }));
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", error_description="video_generate needs the scope video", ' +
        `scope="search fetch video", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
    const allowed = await post(sessionHeaders, toolCall(3, 'web_search', { query: 'scoped' }));
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('"result"');
  });

  it('2026-07-28 and legacy SSE: video_generate refused, web_search allowed', async () => {
    const before = gateway.service.counters['videos.generations'];
    for (const kind of ['2026', 'sse'] as const) {
      const client =
        kind === '2026'
          ? new ModernClient(
              { name: 'scoped', version: '1' },
              { versionNegotiation: { mode: { pin: MODERN } } },
            )
          : new LegacyClient({ name: 'scoped', version: '1' });
      const transport =
        kind === '2026'
          ? new ModernHttpTransport(new URL(resource), { requestInit: { headers: headers() } })
          : new SSEClientTransport(new URL('/sse', base), { requestInit: { headers: headers() } });
      await (client as LegacyClient).connect(transport as SSEClientTransport);
      const call = (name: string, args: Record<string, unknown>) =>
        (client as LegacyClient).callTool({ name, arguments: args }) as Promise<CallToolResult>;
      await expect(call('video_generate', { prompt: 'a cat' })).rejects.toThrow(
        /403|insufficient_scope|scope/i,
      );
      expect((await call('web_search', { query: kind })).isError).toBeFalsy();
      await client.close();
    }
    expect(gateway.service.counters['videos.generations']).toBe(before);
    expect(server.stderr()).toContain('refused video_generate: the token lacks the scope video');
  });

  it('the static token stands for its one person, with every tool', async () => {
    const opened = await initialize({ authorization: `Bearer ${STATIC_TOKEN}` });
    expect(opened.status).toBe(200);
    const client = new LegacyClient({ name: 'operator', version: '1' });
    const transport = new LegacyHttpTransport(new URL(resource), {
      requestInit: { headers: { authorization: `Bearer ${STATIC_TOKEN}` } },
    });
    await client.connect(transport);
    const result = (await client.callTool({
      name: 'web_search',
      arguments: { query: 'operator' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(await eventually(() => server.stderr().includes('web_search called by ops@example.com'))).toBe(
      true,
    );
    await transport.terminateSession();
    await client.close();
  });
});

describe("each person's budget, by the token's subject", () => {
  it('limits each person apart (GATEWAY_LIMITS_PER_USER) and everyone together (GATEWAY_LIMITS)', async () => {
    const port = await freePort();
    const own = `http://127.0.0.1:${port}`;
    const budgeted = await startHttpCli(
      {
        ...gateway.env,
        GATEWAY_OAUTH_ISSUER: idp.issuer,
        GATEWAY_PUBLIC_URL: own,
        GATEWAY_LIMITS_PER_USER: 'search=2/day',
        GATEWAY_LIMITS: 'search=3/day',
      },
      ['--port', String(port)],
    );
    try {
      const search = async (person: string, query: string) => {
        const token = await idp.sign({ sub: person, aud: `${own}/mcp`, scope: 'search' });
        const client = new LegacyClient({ name: person, version: '1' });
        const transport = new LegacyHttpTransport(new URL(`${own}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        });
        await client.connect(transport);
        try {
          return (await client.callTool({ name: 'web_search', arguments: { query } })) as CallToolResult;
        } finally {
          await client.close();
        }
      };
      const before = gateway.service.counters.search ?? 0;
      expect((await search('alice', 'alice one')).isError).toBeFalsy();
      expect((await search('alice', 'alice two')).isError).toBeFalsy();
      const third = await search('alice', 'alice three');
      expect(third.isError).toBe(true);
      expect(textOf(third)).toMatch(/GATEWAY_LIMITS_PER_USER/);
      // Another person still has room of their own, until everyone's limit is reached.
      expect((await search('bob', 'bob one')).isError).toBeFalsy();
      const team = await search('bob', 'bob two');
      expect(team.isError).toBe(true);
      expect(textOf(team)).toMatch(/GATEWAY_LIMITS\b(?!_PER_USER)/);
      expect((gateway.service.counters.search ?? 0) - before).toBe(3);
    } finally {
      await budgeted.stop();
    }
  });
});

describe("each person's saved files, 2026-07-28", () => {
  it("lists a file to the person whose call saved it, not to another person's client of the same process", async () => {
    const clientOf = async (person: string) => {
      const token = await idp.sign({ sub: person, aud: resource, scope: 'search audio' });
      const client = new ModernClient(
        { name: person, version: '1' },
        { versionNegotiation: { mode: { pin: MODERN } } },
      );
      await client.connect(
        new ModernHttpTransport(new URL(resource), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    const [alice, bob] = [await clientOf('alice'), await clientOf('bob')];
    try {
      const spoken = (await alice.callTool({
        name: 'audio_speech',
        arguments: { text: 'for alice alone', model: 'openai/tts-1/alloy' },
      })) as CallToolResult;
      expect(spoken.isError).toBeFalsy();
      const link = spoken.content.find((part) => part.type === 'resource_link');
      expect(link?.uri).toMatch(/^gateway-tools:\/\/output\//);
      const listed = async (client: ModernClient) =>
        (await client.listResources()).resources.map((r) => r.uri);
      expect(await listed(alice)).toContain(link?.uri);
      expect(await listed(bob)).not.toContain(link?.uri);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('sessions', () => {
  it("a session opened with one subject's token is not found with another's", async () => {
    const mine = { authorization: `Bearer ${await idp.machineToken(resource, 'search')}` };
    const theirs = { authorization: `Bearer ${await idp.machineToken(resource, 'search', OPAQUE_MACHINE)}` };
    const opened = await initialize(mine);
    const session = opened.headers.get('mcp-session-id') ?? '';
    await opened.body?.cancel();
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/list' };
    const as = (who: Record<string, string>) => ({
      ...MCP_HEADERS,
      ...who,
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    });
    expect((await post(as(theirs), list)).status).toBe(404);
    expect((await post(as(mine), list)).status).toBe(200);
  });
});

describe('start-up', () => {
  it('GATEWAY_OAUTH_ISSUER without GATEWAY_PUBLIC_URL is refused with what to set', async () => {
    const started = spawnServer({ ...gateway.env, GATEWAY_OAUTH_ISSUER: idp.issuer }, [
      '--transport',
      'http',
      '--port',
      '0',
    ]);
    expect(await started.exited).toBe(2);
    expect(started.stderr()).toContain('GATEWAY_OAUTH_ISSUER needs GATEWAY_PUBLIC_URL');
  });

  it('stdio is unchanged: the caller is the local user', async () => {
    const client = await connectEra('2025-era', { stdio: { ...gateway.env, GATEWAY_LOG_LEVEL: 'debug' } });
    await client.callTool('usage', {});
    expect(await eventually(() => /usage called by local:\S+/.test(client.stderr()))).toBe(true);
    await client.close();
  });
});

/** A coding agent's OAuth state, as the SDK clients of both eras ask for it. */
class AgentAuth implements OAuthClientProvider, LegacyOAuthClientProvider {
  private saved: { access_token: string; token_type: string } | undefined;
  private verifier = '';
  private url: URL | undefined;
  get redirectUrl() {
    return AGENT.redirectUri;
  }
  get clientMetadata() {
    return {
      client_name: 'coding agent',
      redirect_uris: [AGENT.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return { client_id: AGENT.id };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: { access_token: string; token_type: string }) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.url = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** Where the client sent the person's browser. */
  authorizationUrl(): URL {
    if (!this.url) throw new Error('the client never started the authorization');
    return this.url;
  }
}

function initialize(headers: Record<string, string>): Promise<Response> {
  return post({ ...MCP_HEADERS, ...headers }, INITIALIZE);
}

function post(headers: Record<string, string>, body: unknown): Promise<Response> {
  return fetch(resource, { method: 'POST', headers, body: JSON.stringify(body) });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
