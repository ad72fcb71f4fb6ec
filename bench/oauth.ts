/**
 * What OAuth adds to a call once the issuer's keys are cached: web_search over Streamable HTTP
 * (2025-era session) against a server that checks JWT access tokens from a real identity provider
 * (oidc-provider, test/transports/oauth/identity-provider.ts), against the same server with the
 * static token (GATEWAY_MCP_TOKEN), calls interleaved. Run alone: `npx tsx bench/oauth.ts`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startIdentityProvider } from '../test/transports/oauth/identity-provider.js';
import { type BenchService, benchLedgerDir, percentile, ROOT, startReferenceProcess } from './lib.js';

export interface OAuthResult {
  /** p50 of web_search with a JWT checked against the issuer's keys, ms. */
  oauthMs: number;
  /** p50 of the same with the static token, ms. */
  tokenMs: number;
}

const STATIC_TOKEN = 'bench-static-token-0123456789abcdef';

export async function benchOAuth(calls: number, service: BenchService): Promise<OAuthResult> {
  const idp = await startIdentityProvider();
  const servers: ChildProcess[] = [];
  try {
    const env = {
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: service.apiKey,
      GATEWAY_SEARCH_MODEL: 'tavily',
      GATEWAY_MCP_TOKEN: STATIC_TOKEN,
    };
    const plain = await startHttp(env, servers);
    const publicUrl = await freeUrl();
    const oauth = await startHttp(
      { ...env, GATEWAY_OAUTH_ISSUER: idp.issuer, GATEWAY_PUBLIC_URL: publicUrl.base },
      servers,
      publicUrl.port,
    );
    const token = await idp.machineToken(`${publicUrl.base}/mcp`, 'search');
    const clients = [await connect(plain, STATIC_TOKEN), await connect(oauth, token)];
    const times: [number[], number[]] = [[], []];
    const search = (client: Client, i: number) =>
      client.callTool({ name: 'web_search', arguments: { query: `oauth bench ${i}`, max_results: 3 } });
    // Warm-up: connections, the issuer's metadata and keys.
    for (let i = 0; i < 20; i++) for (const client of clients) await search(client, i);
    for (let i = 0; i < calls; i++) {
      for (const [k, client] of clients.entries()) {
        const started = performance.now();
        await search(client, i);
        times[k]?.push(performance.now() - started);
      }
    }
    await Promise.all(clients.map((client) => client.close()));
    return { tokenMs: percentile(times[0] ?? [], 0.5), oauthMs: percentile(times[1] ?? [], 0.5) };
  } finally {
    for (const server of servers) server.kill('SIGTERM');
    await idp.close();
  }
}

async function startHttp(env: Record<string, string>, servers: ChildProcess[], port = 0): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'dist/cli.js'), '--transport', 'http', '--port', String(port)],
    {
      env: {
        PATH: process.env.PATH ?? '',
        GATEWAY_LOG_LEVEL: 'info',
        GATEWAY_LEDGER_DIR: benchLedgerDir(),
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  servers.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
  });
}

/** A free loopback port and its base URL: the OAuth server's public URL must be known before it starts. */
async function freeUrl(): Promise<{ port: number; base: string }> {
  const { freePort } = await import('../test/nine-router/process.js');
  const port = await freePort();
  return { port, base: `http://127.0.0.1:${port}` };
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'bench-oauth', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const service = await startReferenceProcess();
  try {
    const { oauthMs, tokenMs } = await benchOAuth(process.argv.includes('--quick') ? 100 : 400, service);
    console.log(
      `| OAuth added time per call, p50 | ${(oauthMs - tokenMs).toFixed(2)} ms (web_search ${oauthMs.toFixed(2)} ms with a JWT) | ${tokenMs.toFixed(2)} ms (the static token) | goal ≤ 2 ms |`,
    );
  } finally {
    await service.close();
  }
}
