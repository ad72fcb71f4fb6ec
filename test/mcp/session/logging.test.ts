import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ErrorCode,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/config/config.js';
import { createServer } from '../../../src/mcp/create-server.js';
import { closeRuntime, createRuntime, type Runtime } from '../../../src/runtime.js';
import { defineTool } from '../../../src/tools/define.js';
import { success } from '../../../src/tools/results.js';
import { useReferenceService } from '../../harness/gateway.js';
import { connectStdio, tempDir, textOf } from '../../harness/harness.js';
import { connectHttp, disconnect, HTTP_KINDS, startHttpCli } from '../../harness/http-harness.js';
import { until } from '../../harness/video.js';

// Log lines as MCP notifications/message: what a client gets by default, after logging/setLevel,
// never a secret, and the stderr log unchanged.
const KEY = 'sk-client-log-test-0123456789';
type Line = LoggingMessageNotification['params'];

/** A client that keeps every log line it is sent. */
function loggingClient(): { client: Client; lines: Line[] } {
  const lines: Line[] = [];
  const client = new Client({ name: 'log-client', version: '1' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    lines.push(n.params);
  });
  return { client, lines };
}

const probe = defineTool({
  name: 'log_probe',
  group: 'search',
  title: 'Log probe',
  description: 'Logs one line at each level.',
  inputSchema: {},
  outputSchema: {},
  annotations: { readOnlyHint: true },
  async run(_args, ctx) {
    ctx.log.debug('probe debug');
    ctx.log.info('probe info');
    ctx.log.warn(`probe warn with the key ${KEY}`);
    ctx.log.error('probe error');
    return success('logged', {});
  },
});

describe('log lines in memory', () => {
  let runtime: Runtime;
  const stderr: string[] = [];
  const { client, lines } = loggingClient();

  beforeAll(async () => {
    const env = { GATEWAY_BASE_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: KEY, GATEWAY_LOG_LEVEL: 'info' };
    runtime = createRuntime(parseCommandLine([], env, tempDir()).config);
    for (const level of ['error', 'warn', 'info', 'debug'] as const) {
      runtime.log[level] = (message) => stderr.push(`${level}: ${runtime.scrub(message)}`);
    }
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([createServer(runtime, [probe]).connect(serverSide), client.connect(clientSide)]);
  });
  afterAll(async () => {
    await client.close();
    await closeRuntime(runtime);
  });

  const callProbe = async () => {
    lines.length = 0;
    expect(textOf(await client.callTool({ name: 'log_probe', arguments: {} }))).toBe('logged');
    return lines.map((l) => `${l.level}: ${l.data}`);
  };

  it('declares logging and sends warnings and errors until the client asks for more', async () => {
    expect(client.getServerCapabilities()?.logging).toEqual({});
    expect(await callProbe()).toEqual(['warning: probe warn with the key ***', 'error: probe error']);
    expect(lines.every((l) => l.logger === 'gateway-tools-mcp')).toBe(true);
  });

  it('follows logging/setLevel, down to debug and up to error', async () => {
    await client.setLoggingLevel('debug');
    expect(await callProbe()).toEqual([
      'debug: probe debug',
      'info: probe info',
      'warning: probe warn with the key ***',
      'error: probe error',
    ]);
    await client.setLoggingLevel('error');
    expect(await callProbe()).toEqual(['error: probe error']);
  });

  it('refuses a level MCP does not have with -32602', async () => {
    await expect(client.setLoggingLevel('loud' as never)).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
  });

  it('leaves the stderr log at its own level, whatever the client asked for', async () => {
    await client.setLoggingLevel('emergency');
    stderr.length = 0;
    expect(await callProbe()).toEqual([]);
    expect(stderr).toEqual([
      expect.stringMatching(/^debug: log_probe called by local:/),
      'debug: probe debug',
      'info: probe info',
      'warn: probe warn with the key ***',
      'error: probe error',
    ]);
  });
});

describe('log lines from the built server', () => {
  const reference = useReferenceService();

  const submit = (client: Client) =>
    // Two submits of the same prompt: the duplicate guard is not the point here (test/ledger).
    client.callTool({
      name: 'video_generate',
      arguments: { prompt: 'a kite', wait_seconds: 0, allow_duplicate: true },
    });

  it('tells a stdio client what weakens the server, and the log lines of its calls at its level', async () => {
    const { client, lines } = loggingClient();
    const spawned = await connectStdio({ ...reference.env, GATEWAY_ALLOW_PRIVATE_URLS: '*' }, [], client);
    try {
      await until(() => lines.length > 0, 5_000, 'a start-up warning');
      expect(lines[0]).toMatchObject({
        level: 'warning',
        data: expect.stringContaining('GATEWAY_ALLOW_PRIVATE_URLS is *'),
      });
      await submit(client);
      expect(lines.filter((l) => l.level === 'info')).toEqual([]);
      await client.setLoggingLevel('info');
      await submit(client);
      const accepted = lines.filter((l) => l.level === 'info').map((l) => String(l.data));
      expect(accepted).toEqual([expect.stringMatching(/^video_generate: job \S+ accepted/)]);
      expect(JSON.stringify(lines)).not.toContain(reference.service.apiKey);
      // The stderr log keeps GATEWAY_LOG_LEVEL (info in this harness): both submits are there.
      expect(spawned.stderr().match(/info: video_generate: job \S+ accepted/g)).toHaveLength(2);
    } finally {
      await spawned.close();
    }
  });

  it.each(HTTP_KINDS)(
    'tells a client over %s what weakens the server, on its first request',
    async (kind) => {
      const server = await startHttpCli({ ...reference.env, GATEWAY_ALLOW_PRIVATE_URLS: '*' });
      const { client, lines } = loggingClient();
      try {
        await connectHttp(server.url, kind, { client });
        await client.listTools();
        await client.listTools();
        expect(lines).toEqual([
          expect.objectContaining({
            level: 'warning',
            data: expect.stringContaining('GATEWAY_ALLOW_PRIVATE_URLS is *'),
          }),
        ]);
        await disconnect(client);
      } finally {
        await server.stop();
      }
    },
  );

  it.each(HTTP_KINDS)('sends the log lines of a call on its own stream over %s', async (kind) => {
    const server = await startHttpCli(reference.env);
    const { client, lines } = loggingClient();
    try {
      await connectHttp(server.url, kind, { client });
      await client.setLoggingLevel('info');
      await submit(client);
      expect(lines.map((l) => `${l.level}: ${l.data}`)).toEqual([
        expect.stringMatching(/^info: video_generate: job \S+ accepted/),
      ]);
      await disconnect(client);
    } finally {
      await server.stop();
    }
  });
});
