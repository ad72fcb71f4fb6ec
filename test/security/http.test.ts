import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpServerProcess, INITIALIZE, MCP_HEADERS, startHttpCli } from '../harness/http-harness.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

// The HTTP transport as an attacker on the same machine, or a web page doing DNS rebinding,
// would try it: odd spellings of Host, the token in the wrong places, and what the
// unauthenticated /healthz gives away.

const TOKEN = 'http-security-token-0123456789';
let service: ReferenceService;
let server: HttpServerProcess;

beforeAll(async () => {
  service = await startReferenceService();
  server = await startHttpCli({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_MCP_TOKEN: TOKEN,
    GATEWAY_LOG_LEVEL: 'debug',
  });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  await service.close();
});

/** node:http, so the Host header is ours to choose. */
function post(headers: Record<string, string>, path = '/mcp') {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      new URL(path, server.url),
      { method: 'POST', headers: { ...MCP_HEADERS, ...headers } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(INITIALIZE));
  });
}

const port = () => new URL(server.url).port;
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('DNS rebinding, in the spellings a rebinding page can produce', () => {
  it('refuses every Host that is not this machine, checked before the token', async () => {
    for (const host of [
      `localhost.:${port()}`, // trailing dot: another name to the browser
      `localhost.evil.example:${port()}`,
      `127.0.0.1.nip.io:${port()}`,
      `7f000001.rebind.network:${port()}`,
      `evil.example:${port()}`,
    ]) {
      const refused = await post({ ...bearer, host });
      expect(refused.status, host).toBe(403);
      expect(refused.body, host).toMatch(/is not allowed; add it to GATEWAY_ALLOWED_HOSTS/);
    }
    expect((await post({ ...bearer, host: `127.0.0.1:${port()}` })).status).toBe(200);
  });
});

describe('the bearer token', () => {
  it('is accepted only as the whole bearer credential of the Authorization header', async () => {
    const wrong: Record<string, string>[] = [
      {},
      { authorization: TOKEN },
      { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { authorization: `Bearer ${TOKEN} ${TOKEN}` },
      { 'x-api-key': TOKEN },
      { cookie: `token=${TOKEN}` },
    ];
    for (const headers of wrong) {
      const refused = await post(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(refused.body).not.toContain(TOKEN);
    }
    expect((await post({}, `/mcp?token=${TOKEN}`)).status).toBe(403);
    expect((await post({ authorization: `bearer ${TOKEN}` })).status).toBe(200);
  });

  it('never shows up in the logs, even at debug level with refused attempts', () => {
    expect(server.stderr()).toContain('bearer token required');
    expect(server.stderr()).toContain('refused POST /mcp');
    expect(server.stderr()).not.toContain(TOKEN.slice(0, 16));
  });

  it('/healthz, the one open route, tells only status, version and counts', async () => {
    const res = await fetch(new URL('/healthz', server.url));
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['in_flight', 'mode', 'sessions', 'status', 'version']);
    expect(JSON.stringify(body)).not.toContain(service.url);
  });
});
