import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type RawServer, spawnServer } from './harness.js';
import { scaled } from './time.js';

export type HttpKind = 'streamable' | 'sse';
export const HTTP_KINDS: readonly HttpKind[] = ['streamable', 'sse'];

export interface HttpServerProcess extends RawServer {
  /** e.g. http://127.0.0.1:40123, parsed from the "listening on" line. */
  url: string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns the built CLI with `--transport http --port 0` and waits for its "listening on" line. */
export async function startHttpCli(
  env: Record<string, string>,
  args: string[] = [],
): Promise<HttpServerProcess> {
  const server = spawnServer(env, ['--transport', 'http', '--port', '0', ...args]);
  const early = server.exited.then((code) => {
    throw new Error(`server exited (${code}) before listening: ${server.stderr()}`);
  });
  await Promise.race([server.waitForStderr('listening on '), early]);
  early.catch(() => undefined);
  const match = /listening on (http:\/\/\S+)/.exec(server.stderr());
  if (!match?.[1]) throw new Error(`no URL in: ${server.stderr()}`);
  return {
    ...server,
    url: match[1],
    async stop(signal = 'SIGTERM') {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal);
      return server.exited;
    },
  };
}

export interface HttpClientOptions {
  token?: string;
  headers?: Record<string, string>;
  /** A client set up by the test (handlers for roots, elicitation, log lines); a plain one by default. */
  client?: Client;
}

/** An SDK Client connected over Streamable HTTP (/mcp) or the legacy SSE transport (/sse). */
export async function connectHttp(
  baseUrl: string,
  kind: HttpKind,
  options: HttpClientOptions = {},
): Promise<Client> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const requestInit = { headers };
  const transport =
    kind === 'streamable'
      ? new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit })
      : new SSEClientTransport(new URL('/sse', baseUrl), { requestInit });
  const client = options.client ?? new Client({ name: `test-${kind}`, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Ends the session the way a well-behaved client does (DELETE for Streamable HTTP), then closes. */
export async function disconnect(client: Client): Promise<void> {
  const transport = client.transport;
  if (transport instanceof StreamableHTTPClientTransport)
    await transport.terminateSession().catch(() => undefined);
  await client.close();
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw-http', version: '1' },
  },
} as const;

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const;

/** A raw POST /mcp, for tests of status codes and headers the SDK client hides. */
export function postMcp(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(new URL('/mcp', baseUrl), {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

/** A tools/call message for a raw POST. */
export function toolCall(id: number, name: string, args: Record<string, unknown>) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** Opens a session with a raw initialize and returns its id (the response body is drained). */
export async function openRawSession(baseUrl: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await postMcp(baseUrl, INITIALIZE, headers);
  await res.text();
  const id = res.headers.get('mcp-session-id');
  if (res.status !== 200 || !id) throw new Error(`initialize answered ${res.status} without a session`);
  return id;
}

/**
 * Polls `check` every 50 ms until it returns true, at most `timeoutMs` (scaled by
 * TEST_TIME_FACTOR); false if it never did.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<boolean> {
  const deadline = Date.now() + scaled(timeoutMs);
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

export interface Health {
  status: string;
  sessions: number;
  in_flight: number;
}

/** GET /healthz: counts sessions and calls without touching any session. */
export async function health(baseUrl: string): Promise<Health> {
  const res = await fetch(new URL('/healthz', baseUrl));
  return (await res.json()) as Health;
}
