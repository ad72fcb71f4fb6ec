import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useReferenceService } from '../../harness/gateway.js';
import { connectInMemory, connectStdio, runCli, tempDir, testClient, textOf } from '../../harness/harness.js';
import { connectHttp, disconnect, HTTP_KINDS, startHttpCli } from '../../harness/http-harness.js';
import { submitsOf, until } from '../../harness/video.js';

// Confirm before spending (GATEWAY_CONFIRM): a client with elicitation asks its user before a
// billed call is sent; declined, dismissed or cancelled, nothing reaches the gateway and the
// result says so; a client without elicitation gets the call as without the setting.
const reference = useReferenceService();

interface AskingClient {
  client: Client;
  asked: ElicitRequest['params'][];
  /** What the user answers next. */
  answer: ElicitResult['action'] | 'never';
}

function askingClient(answer: AskingClient['answer']): AskingClient {
  const client = new Client(
    { name: 'asking-client', version: '1' },
    { capabilities: { elicitation: { form: {} } } },
  );
  const state: AskingClient = { client, asked: [], answer };
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    state.asked.push(request.params);
    if (state.answer === 'never') return new Promise<ElicitResult>(() => undefined);
    return state.answer === 'accept' ? { action: 'accept', content: {} } : { action: state.answer };
  });
  return state;
}

const VIDEO = { prompt: 'a paper boat in the rain', duration: 6, aspect_ratio: '16:9', wait_seconds: 0 };
const generate = (client: Client, signal?: AbortSignal) =>
  client.callTool(
    { name: 'video_generate', arguments: VIDEO },
    undefined,
    signal ? { signal } : {},
  ) as Promise<CallToolResult>;

describe('confirmations in memory', () => {
  it('asks before a video is generated, with what, which model and which options', async () => {
    const user = askingClient('decline');
    const conn = await connectInMemory({ ...reference.env, GATEWAY_CONFIRM: 'video' }, [], user.client);
    try {
      const before = submitsOf(reference.service).length;
      const declined = await generate(user.client);
      expect(declined.isError).toBe(true);
      expect(textOf(declined)).toBe(
        'The user declined: Generate a video with xai/grok-imagine-video was not sent, and nothing was billed. Do not retry unless the user asks for it.',
      );
      expect(user.asked).toEqual([
        {
          mode: 'form',
          message:
            'Generate a video with xai/grok-imagine-video? The gateway bills it when it is sent.\n' +
            'Prompt: a paper boat in the rain\nDuration: 6 s\nAspect ratio: 16:9',
          requestedSchema: { type: 'object', properties: {} },
        },
      ]);
      user.answer = 'cancel';
      expect(textOf(await generate(user.client))).toMatch(
        /^The user dismissed the confirmation: Generate a video /,
      );
      expect(submitsOf(reference.service)).toHaveLength(before);

      user.answer = 'accept';
      const accepted = await generate(user.client);
      expect(accepted.isError, textOf(accepted)).toBeFalsy();
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
      expect(user.asked).toHaveLength(3);
    } finally {
      await conn.close();
    }
  });

  it('asks only for the kinds named, and for every kind with all', async () => {
    const user = askingClient('decline');
    const conn = await connectInMemory({ ...reference.env, GATEWAY_CONFIRM: 'speech' }, [], user.client);
    try {
      const before = reference.service.counters.speech ?? 0;
      const speech = (await user.client.callTool({
        name: 'audio_speech',
        arguments: { text: 'Say this', model: 'openai/tts-1/alloy' },
      })) as CallToolResult;
      expect(textOf(speech)).toMatch(
        /^The user declined: Turn text into speech with openai\/tts-1\/alloy was not sent/,
      );
      expect(reference.service.counters.speech ?? 0).toBe(before);
      expect((await generate(user.client)).isError).toBeFalsy();
      expect(user.asked).toHaveLength(1);
    } finally {
      await conn.close();
    }
    const all = askingClient('decline');
    const everything = await connectInMemory({ ...reference.env, GATEWAY_CONFIRM: 'all' }, [], all.client);
    try {
      const asked = (await all.client.callTool({
        name: 'ask_model',
        arguments: { prompt: 'Hello?' },
      })) as CallToolResult;
      expect(textOf(asked)).toMatch(/^The user declined: Ask a model with \S+ was not sent/);
      expect(all.asked[0]?.message).toContain('Prompt: Hello?');
    } finally {
      await everything.close();
    }
  });

  it('sends as today to a client without elicitation', async () => {
    const conn = await connectInMemory({ ...reference.env, GATEWAY_CONFIRM: 'all' }, [], testClient());
    try {
      const before = submitsOf(reference.service).length;
      expect((await generate(conn.client)).isError).toBeFalsy();
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
    } finally {
      await conn.close();
    }
  });

  it('sends nothing when the call is cancelled while the user is being asked', async () => {
    const user = askingClient('never');
    const conn = await connectInMemory({ ...reference.env, GATEWAY_CONFIRM: 'video' }, [], user.client);
    try {
      const before = submitsOf(reference.service).length;
      const abort = new AbortController();
      const call = generate(user.client, abort.signal);
      await until(() => user.asked.length === 1, 5_000, 'the confirmation');
      abort.abort('changed my mind');
      await expect(call).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(submitsOf(reference.service)).toHaveLength(before);
    } finally {
      await conn.close();
    }
  });
});

describe('confirmations through the built server', () => {
  it('over stdio', async () => {
    const user = askingClient('decline');
    const spawned = await connectStdio({ ...reference.env, GATEWAY_CONFIRM: 'video' }, [], user.client);
    try {
      const before = submitsOf(reference.service).length;
      expect(textOf(await generate(user.client))).toMatch(/^The user declined/);
      user.answer = 'accept';
      expect((await generate(user.client)).isError).toBeFalsy();
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
      expect(spawned.stderr()).toMatch(
        /info: Generate a video with xai\/grok-imagine-video: declined by the user/,
      );
    } finally {
      await spawned.close();
    }
  });

  it.each(HTTP_KINDS)('over %s', async (kind) => {
    const server = await startHttpCli({
      ...reference.env,
      GATEWAY_CONFIRM: 'video',
      CWD: tempDir('gtm-confirm-'),
    });
    const user = askingClient('decline');
    try {
      await connectHttp(server.url, kind, { client: user.client });
      const before = submitsOf(reference.service).length;
      expect(textOf(await generate(user.client))).toMatch(/^The user declined/);
      user.answer = 'accept';
      expect((await generate(user.client)).isError).toBeFalsy();
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
      await disconnect(user.client);
    } finally {
      await server.stop();
    }
  });

  it('does not ask in stateless mode, where the answer would reach another server', async () => {
    const server = await startHttpCli({ ...reference.env, GATEWAY_CONFIRM: 'video' }, ['--stateless']);
    const user = askingClient('decline');
    try {
      await connectHttp(server.url, 'streamable', { client: user.client });
      expect((await generate(user.client)).isError).toBeFalsy();
      expect(user.asked).toEqual([]);
      await disconnect(user.client);
    } finally {
      await server.stop();
    }
  });

  it('doctor says which calls are confirmed and which clients can ask', async () => {
    const run = await runCli(['doctor', '--json'], { ...reference.env, GATEWAY_CONFIRM: 'audio' });
    const checks = (JSON.parse(run.stdout) as { checks: { id: string; message: string }[] }).checks;
    expect(checks.find((c) => c.id === 'confirm')?.message).toBe(
      'Confirmation before billed speech, transcription calls: asked by clients with elicitation (Claude Code, Cursor, VS Code, Codex); other clients, and stateless HTTP, are not asked',
    );
  });

  it('refuses an unknown kind at start-up, naming the choices', async () => {
    const run = await runCli([], { ...reference.env, GATEWAY_CONFIRM: 'video,everything' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'gateway-tools-mcp: invalid GATEWAY_CONFIRM (--confirm): must be kinds of billed call, comma-separated: video, speech, transcription, chat, audio, all (got "video,everything")',
    );
  });
});
