import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { progressGate } from '../../src/mcp/progress-gate.js';
import { GatewayServer, type RequestExtra, RpcError } from '../../src/mcp/server.js';

// The protocol layer on its own (the SDK's Server as this project wraps it), with handlers made
// for the test: what JSON-RPC and MCP require of initialize, ping, unknown methods, bad params,
// failures and cancellation.
const SECRET = 'sk-protocol-test-0123456789';

interface Harness {
  server: GatewayServer;
  answers: JSONRPCMessage[];
  errors: string[];
  send(message: Record<string, unknown>): Promise<void>;
  answerTo(id: number | string): Promise<JSONRPCMessage>;
  slowCalls: RequestExtra[];
}

const request = <M extends string, P extends z.ZodType>(method: M, params: P) =>
  z.object({ method: z.literal(method), params });
const anyParams = z.optional(z.looseObject({}));

function testServer(log: { error(m: string): void; debug(m: string): void }): GatewayServer {
  return new GatewayServer(
    { name: 'test-server', version: '1.2.3' },
    { capabilities: { tools: { listChanged: false } }, instructions: 'Use the tools.' },
    log,
  );
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.server.close();
});

async function connect(): Promise<Harness> {
  const errors: string[] = [];
  const slowCalls: RequestExtra[] = [];
  const server = testServer({ error: (m) => errors.push(m), debug: () => undefined });
  server.handle(ListToolsRequestSchema, () => ({ tools: [] }));
  server.handle(request('test/echo', z.object({ text: z.string() })), (r) => ({
    echoed: r.params.text,
  }));
  server.handle(request('test/bug', anyParams), () => {
    throw new Error(`exploded near ${SECRET}`);
  });
  server.handle(request('test/refused', anyParams), () => {
    throw new RpcError(-32602, 'Invalid params: no');
  });
  server.handle(
    request('test/slow', anyParams),
    (_r, extra) =>
      new Promise((resolve) => {
        slowCalls.push(extra);
        extra.mcpReq.signal.addEventListener('abort', () => resolve({ late: true }));
      }),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const answers: JSONRPCMessage[] = [];
  clientSide.onmessage = (message) => answers.push(message);
  await server.connect(serverSide);
  await clientSide.start();
  const answerTo = async (id: number | string) => {
    for (let i = 0; i < 100; i++) {
      const found = answers.find((a) => 'id' in a && a.id === id);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no answer to ${id}`);
  };
  const h: Harness = {
    server,
    answers,
    errors,
    slowCalls,
    send: (message) => clientSide.send({ jsonrpc: '2.0', ...message } as JSONRPCMessage),
    answerTo,
  };
  open.push(h);
  return h;
}

describe('GatewayServer', () => {
  it('completes an SDK client handshake with its name, capabilities and instructions', async () => {
    const server = testServer({ error: () => undefined, debug: () => undefined });
    server.handle(ListToolsRequestSchema, () => ({ tools: [] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'c', version: '1' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    expect(client.getServerVersion()).toEqual({ name: 'test-server', version: '1.2.3' });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    expect(client.getInstructions()).toBe('Use the tools.');
    expect(await client.listTools()).toEqual({ tools: [] });
    expect(await client.ping()).toEqual({});
    await client.close();
  });

  it('agrees on a supported protocol version and offers its latest for any other', async () => {
    const h = await connect();
    const older = SUPPORTED_PROTOCOL_VERSIONS.find((v) => v !== LATEST_PROTOCOL_VERSION) as string;
    const clientInfo = { name: 'raw', version: '1' };
    const init = (protocolVersion?: string) => ({ protocolVersion, capabilities: {}, clientInfo });
    await h.send({ id: 1, method: 'initialize', params: init(older) });
    await h.send({ id: 2, method: 'initialize', params: init('1999-01-01') });
    await h.send({ id: 3, method: 'initialize', params: init() });
    expect(await h.answerTo(1)).toMatchObject({ result: { protocolVersion: older } });
    expect(await h.answerTo(2)).toMatchObject({ result: { protocolVersion: LATEST_PROTOCOL_VERSION } });
    // initialize is the SDK's own handler: its refusal is the SDK's (-32603, zod's issues as JSON).
    expect(await h.answerTo(3)).toMatchObject({
      error: { code: expect.any(Number), message: expect.stringContaining('protocolVersion') },
    });
  });

  it("answers params its schema refuses with -32602 naming the field, for its own methods and the SDK's", async () => {
    const h = await connect();
    await h.send({ id: 'e', method: 'test/echo', params: { text: 5 } });
    await h.send({ id: 'p', method: 'tools/list', params: { cursor: 5 } });
    expect(await h.answerTo('e')).toMatchObject({
      error: { code: -32602, message: 'Invalid params for test/echo: text must be a string, not 5' },
    });
    expect(await h.answerTo('p')).toMatchObject({
      error: {
        code: -32602,
        message: 'Invalid params for tools/list: cursor must be a string, not 5',
      },
    });
  });

  it('answers unknown methods with -32601 and leaves notifications and responses unanswered', async () => {
    const h = await connect();
    await h.send({ method: 'notifications/initialized' });
    await h.send({ method: 'notifications/whatever', params: { x: 1 } });
    await h.send({ id: 'r', result: {} });
    await h.send({ id: 4, method: 'resources/list' });
    await h.send({ id: 5, method: 'test/echo', params: { text: 'hi' } });
    expect(await h.answerTo(4)).toMatchObject({ error: { code: -32601, message: 'Method not found' } });
    expect(await h.answerTo(5)).toEqual({ jsonrpc: '2.0', id: 5, result: { echoed: 'hi' } });
    expect(h.answers).toHaveLength(2);
  });

  it('sends an RpcError as it is, and a bug as -32603 without its message, which is logged', async () => {
    const h = await connect();
    await h.send({ id: 6, method: 'test/refused' });
    await h.send({ id: 7, method: 'test/bug' });
    expect(await h.answerTo(6)).toMatchObject({ error: { code: -32602, message: 'Invalid params: no' } });
    const bug = await h.answerTo(7);
    expect(bug).toMatchObject({ error: { code: -32603, message: 'Internal error' } });
    expect(JSON.stringify(bug)).not.toContain(SECRET);
    expect(h.errors.join('\n')).toContain('test/bug failed');
  });

  it('aborts a cancelled request, sends it no answer, and goes on serving', async () => {
    const h = await connect();
    await h.send({ id: 8, method: 'test/slow' });
    await h.send({ id: 9, method: 'test/slow' });
    await waitFor(() => h.slowCalls.length === 2);
    await h.send({ method: 'notifications/cancelled', params: { requestId: 8, reason: 'not needed' } });
    expect(h.slowCalls[0]?.mcpReq.signal.aborted).toBe(true);
    expect(h.slowCalls[0]?.mcpReq.signal.reason).toBe('not needed');
    expect(h.slowCalls[1]?.mcpReq.signal.aborted).toBe(false);
    await h.send({ id: 10, method: 'ping' });
    expect(await h.answerTo(10)).toMatchObject({ result: {} });
    expect(h.answers.some((a) => 'id' in a && a.id === 8)).toBe(false);
  });

  it('aborts every running request when the connection closes', async () => {
    const h = await connect();
    await h.send({ id: 11, method: 'test/slow' });
    await waitFor(() => h.slowCalls.length === 1);
    await h.server.close();
    expect(h.slowCalls[0]?.mcpReq.signal.aborted).toBe(true);
  });

  it('sends progress on the request it belongs to, and none once the request is cancelled', async () => {
    const h = await connect();
    await h.send({ id: 12, method: 'test/slow', params: { _meta: { progressToken: 'p' } } });
    await waitFor(() => h.slowCalls.length === 1);
    const call = h.slowCalls[0] as RequestExtra;
    // The SDK sends whatever a handler notifies, cancelled or not: the progress gate stops it.
    const gate = progressGate(
      {
        progressToken: call.mcpReq._meta?.progressToken,
        signal: call.mcpReq.signal,
        notify: call.mcpReq.notify,
      },
      { debug: () => undefined },
    );
    await gate.progress({ progress: 1 });
    await h.send({ method: 'notifications/cancelled', params: { requestId: 12 } });
    await gate.progress({ progress: 2 });
    await gate.settle();
    const progress = h.answers.filter((a) => 'method' in a && a.method === 'notifications/progress');
    expect(progress).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } },
    ]);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}
