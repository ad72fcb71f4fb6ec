import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type Progress,
  type ReadResourceResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { CLI, SERVER_NODE, serverEnvDefaults, tempDir } from './harness.js';
import { diesWithParent } from './lifetime.js';

// One client for both eras of MCP, so that a suite runs in each (describe.each(ERAS)): the v1 SDK
// Client stands for every 2025-era client (initialize, sessions, requests from the server), the
// v2 Client pinned to 2026-07-28 for the new era (server/discover, a `_meta` envelope on each
// request, input asked for with input_required). What a test sees is what the user and the model
// would: the confirmations asked, the roots listings, the log lines, the progress, the results.

export const ERAS = ['2025-era', '2026-07-28'] as const;
export type Era = (typeof ERAS)[number];
export const MODERN = '2026-07-28';

/** How the client reaches the server: the built CLI spawned over stdio, or an HTTP server's URL. */
export type Reach =
  | { stdio: Record<string, string> }
  | {
      http: string;
      kind?: 'streamable' | 'sse' /** GATEWAY_MCP_TOKEN, sent as a bearer token. */;
      token?: string;
    };

export interface UserSide {
  /** The name the client gives itself (the server shapes results for the clients it knows). */
  clientName?: string;
  /** What the user answers a confirmation with; no elicitation capability when absent. */
  answer?: 'accept' | 'decline' | 'cancel';
  /** The client's roots (file: URIs); no roots capability when absent. */
  roots?: string[];
  /** The client shows MCP Apps views (it declares the extension with the HTML profile). */
  views?: boolean;
  /** The least severe log line the client wants. */
  logLevel?: 'debug' | 'info' | 'warning' | 'error';
}

export interface EraClient {
  era: Era;
  user: UserSide;
  /** The confirmation messages the user was shown. */
  asked: string[];
  /** How often the client was asked for its roots. */
  rootsListed: number;
  logs: { level: string; data: unknown }[];
  listTools(): Promise<Tool[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { onprogress?: (progress: Progress) => void; signal?: AbortSignal },
  ): Promise<CallToolResult>;
  listResources(): Promise<{ uri: string; name: string }[]>;
  readResource(uri: string): Promise<ReadResourceResult>;
  stderr(): string;
  close(): Promise<void>;
}

export async function connectEra(era: Era, reach: Reach, user: UserSide = {}): Promise<EraClient> {
  const info = { name: user.clientName ?? `test-${era}`, version: '1.0.0' };
  const capabilities = {
    ...(user.answer ? { elicitation: { form: {} } } : {}),
    ...(user.roots ? { roots: { listChanged: true } } : {}),
    ...(user.views
      ? { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } }
      : {}),
  };
  const state = { asked: [] as string[], rootsListed: 0, logs: [] as EraClient['logs'] };
  const answerOf = (message: string) => {
    state.asked.push(message);
    return user.answer === 'accept'
      ? { action: 'accept' as const, content: {} }
      : { action: user.answer ?? ('cancel' as const) };
  };
  const rootsOf = () => {
    state.rootsListed++;
    return { roots: (user.roots ?? []).map((uri) => ({ uri })) };
  };
  let stderr = '';
  const collect = (stream: { on(event: 'data', listener: (chunk: Buffer) => void): unknown } | null) =>
    stream?.on('data', (chunk) => {
      stderr += chunk.toString();
    });
  /** What a test sees of either client: what the user and the model would, and the calls. */
  const eraClient = (
    calls: Pick<EraClient, 'listTools' | 'callTool' | 'listResources' | 'readResource' | 'close'>,
  ): EraClient => ({
    era,
    user,
    asked: state.asked,
    logs: state.logs,
    get rootsListed() {
      return state.rootsListed;
    },
    stderr: () => stderr,
    ...calls,
  });
  const stdioParams = (env: Record<string, string>) => ({
    ...diesWithParent(SERVER_NODE, [CLI]),
    env: { ...serverEnvDefaults(), GATEWAY_LOG_LEVEL: 'info', ...env },
    cwd: env.CWD ?? tempDir(),
    stderr: 'pipe' as const,
  });

  if (era === '2025-era') {
    const client = new LegacyClient(info, { capabilities });
    if (user.answer)
      client.setRequestHandler(ElicitRequestSchema, (request) => answerOf(request.params.message));
    if (user.roots) client.setRequestHandler(ListRootsRequestSchema, rootsOf);
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      state.logs.push({ level: n.params.level, data: n.params.data });
    });
    const transport =
      'stdio' in reach
        ? new LegacyStdioTransport(stdioParams(reach.stdio))
        : reach.kind === 'sse'
          ? new SSEClientTransport(new URL('/sse', reach.http), httpOptions(reach))
          : new LegacyHttpTransport(new URL('/mcp', reach.http), httpOptions(reach));
    if (transport instanceof LegacyStdioTransport) collect(transport.stderr);
    await client.connect(transport);
    if (user.logLevel) await client.setLoggingLevel(user.logLevel);
    return eraClient({
      listTools: async () => (await client.listTools()).tools,
      callTool: async (name, args, options = {}) =>
        (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult,
      listResources: async () => (await client.listResources()).resources,
      readResource: (uri) => client.readResource({ uri }),
      close: () => client.close(),
    });
  }

  const client = new ModernClient(info, {
    capabilities,
    versionNegotiation: { mode: { pin: MODERN } },
  });
  if (user.answer)
    client.setRequestHandler('elicitation/create', (request) => answerOf(request.params.message));
  if (user.roots) client.setRequestHandler('roots/list', rootsOf);
  client.setNotificationHandler('notifications/message', (n) => {
    state.logs.push({ level: n.params.level, data: n.params.data });
  });
  const transport =
    'stdio' in reach
      ? new ModernStdioTransport(stdioParams(reach.stdio))
      : new ModernHttpTransport(new URL('/mcp', reach.http), httpOptions(reach));
  if (transport instanceof ModernStdioTransport) collect(transport.stderr);
  await client.connect(transport);
  // The era has no logging/setLevel: each request says the level it wants.
  const meta = user.logLevel ? { _meta: { 'io.modelcontextprotocol/logLevel': user.logLevel } } : {};
  return eraClient({
    listTools: async () => (await client.listTools()).tools as Tool[],
    callTool: async (name, args, options = {}) =>
      (await client.callTool({ name, arguments: args, ...meta }, options)) as CallToolResult,
    listResources: async () => (await client.listResources()).resources,
    readResource: (uri) => client.readResource({ uri, ...meta }) as Promise<ReadResourceResult>,
    close: () => client.close(),
  });
}

/** The bearer token of an HTTP reach, on every request the transport sends. */
function httpOptions(reach: { token?: string }) {
  return reach.token ? { requestInit: { headers: { authorization: `Bearer ${reach.token}` } } } : {};
}

/**
 * A 2026-07-28 tools/call of video_generate posted as raw JSON (no SDK client), with the envelope a
 * client that can show forms sends: for replaying an input round's answer by hand.
 */
export async function postModernCall(
  url: string,
  id: number,
  params: Record<string, unknown>,
  token?: string,
): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: unknown } }> {
  const res = await fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      },
    }),
  });
  const text = await res.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text);
  return { status: res.status, body: JSON.parse(json) };
}
