import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseCommandLine } from '../../src/config/config.js';
import { ServiceError } from '../../src/gateway/errors.js';
import { UserError } from '../../src/lib/user-error.js';
import { createServer } from '../../src/mcp/create-server.js';
import { closeRuntime, createRuntime, type Runtime } from '../../src/runtime.js';
import { sendBilled } from '../../src/tools/billing.js';
import { type Confirmation, defineTool } from '../../src/tools/define.js';
import { FailedStep, success } from '../../src/tools/results.js';
import { tempDir, textOf } from '../harness/harness.js';
import { ledgerCalls } from '../harness/ledger.js';

// The call pipeline's contract, checked with tools built for it: what no real tool should ever do
// (break its output schema, throw, echo the key, bill what it did not declare) must still end in
// a clean answer, with nothing sent that the person did not approve.
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

describe('tools/call through the pipeline', () => {
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

describe('inputs settled before a tool runs', () => {
  // GATEWAY_CONFIRM=chat, a client that accepts every confirmation, and tools that send billed
  // chat calls: each send is counted, and nothing here reaches a network.
  const sent: string[] = [];
  const ran: string[] = [];
  const chat = (text: string) => ({ kind: 'chat' as const, tool: 'test', model: 'test/model', text });
  const billing = (
    name: string,
    confirm: ((args: { text: string }) => Promise<Confirmation | undefined>) | undefined,
    sends: number,
  ) =>
    defineTool({
      name,
      group: 'chat',
      title: name,
      description: name,
      inputSchema: { text: z.string() },
      outputSchema: { text: z.string() },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
      ...(confirm ? { confirm: { kind: 'chat' as const, call: confirm } } : {}),
      run: async (args, ctx) => {
        ran.push(name);
        for (let i = 0; i < sends; i++)
          await sendBilled(ctx, chat(`${args.text} ${i}`), async () => sent.push(`${name} ${i}`));
        return success('sent', { text: args.text });
      },
    });
  const shown = (args: { text: string }) =>
    Promise.resolve({ call: chat(`${args.text} 0`), action: 'Ask', details: [] } satisfies Confirmation);
  const asked: string[] = [];
  let conn: { client: Client; runtime: Runtime; dir: string };

  beforeAll(async () => {
    const dir = tempDir('gtm-ledger-');
    const env = {
      GATEWAY_BASE_URL: 'http://127.0.0.1:9',
      GATEWAY_API_KEY: KEY,
      GATEWAY_LOG_LEVEL: 'error',
      GATEWAY_CONFIRM: 'chat',
      GATEWAY_LEDGER_DIR: dir,
    };
    const runtime = createRuntime(parseCommandLine([], env, tempDir()).config);
    runtime.log.error = (message) => logged.push(message);
    const server = createServer(runtime, [
      billing('declares', shown, 1),
      billing('bills_undeclared', undefined, 1),
      billing('bills_twice', shown, 2),
      billing(
        'confirm_refuses',
        async () => {
          throw new UserError('No such model: test/none.');
        },
        1,
      ),
    ]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client(
      { name: 'asking', version: '1' },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: {} };
    });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    conn = { client, runtime, dir };
  });

  afterAll(async () => {
    await conn.client.close();
    await closeRuntime(conn.runtime);
  });

  const call = (name: string, text: string) =>
    conn.client.callTool({ name, arguments: { text } }) as Promise<CallToolResult>;
  const rows = () => ledgerCalls(conn.dir).map(({ begin, end }) => [begin.words, end?.outcome]);

  it('asks for a declared call before the tool runs, then sends it once', async () => {
    expect(textOf(await call('declares', 'first'))).toBe('sent');
    expect(asked).toEqual(['Ask with test/model? The gateway bills it when it is sent.']);
    expect(sent).toEqual(['declares 0']);
    expect(rows()).toEqual([['first 0', 'accepted']]);
  });

  it('refuses, as the bug it is, a billed call of an asked-for kind that the tool did not declare', async () => {
    const before = { asked: asked.length, sent: sent.length, rows: rows().length };
    const result = await call('bills_undeclared', 'sneaky');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^bills_undeclared failed unexpectedly: .*without the approval .*This is a bug/,
    );
    expect(asked).toHaveLength(before.asked);
    expect(sent).toHaveLength(before.sent);
    expect(rows()).toHaveLength(before.rows);
  });

  it('lets one approval pay for one call: a second billed call of its kind is refused', async () => {
    const before = { sent: sent.length, rows: rows().length };
    const result = await call('bills_twice', 'twice');
    expect(textOf(result)).toMatch(/^bills_twice failed unexpectedly: .*without the approval/);
    expect(sent.slice(before.sent)).toEqual(['bills_twice 0']);
    expect(rows().slice(before.rows)).toEqual([['twice 0', 'accepted']]);
  });

  it('answers a refusal thrown while settling the inputs in its own words, without running the tool', async () => {
    const before = { asked: asked.length, ran: ran.length };
    const result = await call('confirm_refuses', 'x');
    expect(result).toEqual({ content: [{ type: 'text', text: 'No such model: test/none.' }], isError: true });
    expect(asked).toHaveLength(before.asked);
    expect(ran).toHaveLength(before.ran);
  });
});
