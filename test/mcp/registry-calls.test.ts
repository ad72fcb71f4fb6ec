import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseCommandLine } from '../../src/config/config.js';
import { ServiceError } from '../../src/gateway/errors.js';
import { UserError } from '../../src/lib/user-error.js';
import { createServer } from '../../src/mcp/create-server.js';
import { closeRuntime, createRuntime, type Runtime } from '../../src/runtime.js';
import { defineTool } from '../../src/tools/define.js';
import { FailedStep, success } from '../../src/tools/results.js';
import { tempDir, textOf } from '../harness/harness.js';

// The registry's tools/call contract, checked with tools built for it: what no real tool should
// ever do (break its output schema, throw, echo the key) must still end in a clean answer.
const KEY = 'sk-registry-test-key-0123456789';
const echo = (name: string, run: (args: { text: string }) => unknown, action?: string) =>
  defineTool({
    name,
    group: 'chat',
    title: name,
    ...(action ? { action } : {}),
    description: name,
    inputSchema: { text: z.string().max(10, 'text must be at most 10 characters') },
    outputSchema: { text: z.string() },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async (args) => run(args) as ReturnType<typeof success>,
  });
const tools = [
  echo('says', ({ text }) => success(`said ${text}`, { text })),
  echo('breaks_schema', () => success('wrong shape', { text: 42 })),
  echo('throws', () => {
    throw new Error(`exploded near ${KEY}`);
  }),
  echo('leaks', () => success(`the key is ${KEY}`, { text: `again ${KEY}` })),
  echo(
    'gateway_down',
    () => {
      throw new ServiceError({
        kind: 'network',
        message: `connection refused by the gateway (key ${KEY})`,
        maybeDelivered: false,
      });
    },
    'Gateway call',
  ),
  echo('refuses', () => {
    throw new UserError(`No such file: ${KEY}.txt`);
  }),
  echo('step_breaks', () => {
    throw new FailedStep('Reading the input (nothing was sent)', new TypeError('x is not a function'));
  }),
];
const gatewayDown = new ServiceError({
  kind: 'network',
  message: 'connection refused by the gateway (key ***)',
  maybeDelivered: false,
});

let runtime: Runtime;
let client: Client;
const logged: string[] = [];

beforeAll(async () => {
  const env = { GATEWAY_BASE_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: KEY, GATEWAY_LOG_LEVEL: 'error' };
  runtime = createRuntime(parseCommandLine([], env, tempDir()).config);
  runtime.log.error = (message) => logged.push(message);
  const server = createServer(runtime, tools);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: 'c', version: '1' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});

afterAll(async () => {
  await client.close();
  await closeRuntime(runtime);
});

describe('tools/call through the registry', () => {
  it('hands validated arguments to the tool and returns its result', async () => {
    const result = await client.callTool({ name: 'says', arguments: { text: 'hi' } });
    expect(result).toMatchObject({ structuredContent: { text: 'hi' } });
    expect(textOf(result)).toBe('said hi');
  });

  it('never runs a tool with arguments its schema refuses', async () => {
    const result = await client.callTool({ name: 'says', arguments: { text: 'far too long' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('Invalid arguments for says: text must be at most 10 characters');
  });

  it('turns structured content that breaks the output schema into a reported bug', async () => {
    const result = await client.callTool({ name: 'breaks_schema', arguments: { text: 'x' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(/breaks_schema failed unexpectedly: .*output schema.*This is a bug/);
    expect(logged.at(-1)).toMatch(/^breaks_schema gave structured content its schema refuses: text: /);
  });

  it('turns an unexpected throw into the bug result, logged once with its stack, without the key', async () => {
    const before = logged.length;
    const result = await client.callTool({ name: 'throws', arguments: { text: 'x' } });
    expect(result).toEqual({
      content: [
        {
          type: 'text',
          text: 'throws failed unexpectedly: exploded near ***. This is a bug in gateway-tools-mcp; please report it.',
        },
      ],
      isError: true,
    });
    const lines = logged.slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^throws threw: Error: exploded near .*\n\s+at /);
  });

  it("turns a thrown ServiceError into '<action> failed: …' in the tool's own words, logging no bug", async () => {
    const before = logged.length;
    const result = await client.callTool({ name: 'gateway_down', arguments: { text: 'x' } });
    expect(result).toEqual({
      content: [{ type: 'text', text: `Gateway call failed: ${gatewayDown.describe()}` }],
      isError: true,
    });
    expect(textOf(result)).not.toContain(KEY);
    expect(logged.slice(before)).toEqual([]);
  });

  it('answers a thrown refusal with its own words, logging no bug', async () => {
    const before = logged.length;
    const result = await client.callTool({ name: 'refuses', arguments: { text: 'x' } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'No such file: ***.txt' }], isError: true });
    expect(logged.slice(before)).toEqual([]);
  });

  it('names a failed step instead of the tool, and logs the bug under it', async () => {
    const before = logged.length;
    const result = await client.callTool({ name: 'step_breaks', arguments: { text: 'x' } });
    expect(textOf(result)).toBe(
      'Reading the input (nothing was sent) failed unexpectedly: x is not a function. ' +
        'This is a bug in gateway-tools-mcp; please report it.',
    );
    const lines = logged.slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^step_breaks threw: TypeError: x is not a function\n\s+at /);
  });

  it('scrubs the key from text and structured content of a successful result', async () => {
    const result = await client.callTool({ name: 'leaks', arguments: { text: 'x' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text: 'again ***' });
    expect(textOf(result)).toBe('the key is ***');
  });
});
