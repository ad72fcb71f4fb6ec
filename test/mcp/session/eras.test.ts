import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectEra,
  ERAS,
  type Era,
  type EraClient,
  postModernCall,
  type Reach,
  type UserSide,
} from '../../harness/eras.js';
import { useReferenceService } from '../../harness/gateway.js';
import { spawnServer, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { type HttpServerProcess, startHttpCli } from '../../harness/http-harness.js';
import { ledgerCalls } from '../../harness/ledger.js';
import { submitsOf, until } from '../../harness/video.js';

// The same server in both eras of MCP, through the built server on stdio and over Streamable HTTP
// (and legacy SSE for 2025-era clients): tools, a search, a confirmation before a billed call, the
// workspace from the client's roots, log lines at the level asked, progress, and saved files read
// back. A 2025-era client is asked in the middle of a call; a 2026-07-28 client in input_required
// rounds. Either way a billed call is sent once, and only once the user said yes.
const reference = useReferenceService();

const VIDEO = { prompt: 'a paper boat in the rain', duration: 6, aspect_ratio: '16:9', wait_seconds: 0 };
const SPEECH = { text: 'where am I saved', model: 'openai/tts-1/alloy' };

interface Way {
  name: string;
  reach(env: Record<string, string>): Promise<Reach>;
}

const http = (kind: 'streamable' | 'sse'): Way => ({
  name: kind === 'sse' ? 'legacy SSE' : 'Streamable HTTP',
  reach: async (env) => {
    const server = await startHttpCli(env);
    servers.push(server);
    return { http: server.url, kind };
  },
});
const STDIO: Way = { name: 'stdio', reach: async (env) => ({ stdio: env }) };
const WAYS: Record<Era, Way[]> = {
  '2025-era': [STDIO, http('streamable'), http('sse')],
  '2026-07-28': [STDIO, http('streamable')],
};

const servers: HttpServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

describe.each(ERAS)('a %s client', (era) => {
  describe.each(WAYS[era])('over $name', (way) => {
    const open: EraClient[] = [];
    afterAll(async () => {
      await Promise.all(open.splice(0).map((client) => client.close()));
    });
    const connect = async (env: Record<string, string>, user: UserSide = {}) => {
      const client = await connectEra(era, await way.reach({ ...reference.env, ...env }), user);
      open.push(client);
      return client;
    };

    it('lists the tools and gets search results', async () => {
      const client = await connect({});
      const names = (await client.listTools()).map((tool) => tool.name);
      expect(names).toContain('web_search');
      expect(names).toContain('web_fetch');
      const result = await client.callTool('web_search', { query: 'both eras' });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toContain('both eras');
    });

    it('shapes results for the client it names: text alone for Claude Code, whose model reads no more', async () => {
      const claude = await connect({}, { clientName: 'claude-code' });
      const plain = await connect({});
      const [forClaude, forOthers] = await Promise.all([
        claude.callTool('web_search', { query: 'shaped per client' }),
        plain.callTool('web_search', { query: 'shaped per client' }),
      ]);
      expect(forClaude.structuredContent).toBeUndefined();
      expect(forOthers.structuredContent).toMatchObject({ results: expect.any(Array) });
      // The same words but for the search's time and the fence's token, drawn for each result.
      const plainWords = (text: string) =>
        text.replace(/\d{4}-\d\d-\d\dT\S+Z/, '<time>').replace(/«\d+»/g, '«»');
      expect(plainWords(textOf(forClaude))).toBe(plainWords(textOf(forOthers)));
    });

    it('shows views to a client that declares the extension, and none to one that does not', async () => {
      const viewing = await connect({}, { views: true });
      const plain = await connect({});
      const viewOf = (tools: { name: string; _meta?: Record<string, unknown> }[]) =>
        (tools.find((tool) => tool.name === 'video_generate')?._meta?.ui as { resourceUri?: string })
          ?.resourceUri;
      expect(viewOf(await viewing.listTools())).toBe('ui://gateway-tools/video.html');
      expect(viewOf(await plain.listTools())).toBeUndefined();
      const read = await viewing.readResource('ui://gateway-tools/video.html');
      expect(read.contents[0]).toMatchObject({ mimeType: 'text/html;profile=mcp-app' });
    });

    it('asks before a billed call: declined, nothing sent and one row; accepted, one submit and one row; over its limit, refused unasked', async () => {
      const ledger = tempDir('gtm-ledger-');
      const env = { GATEWAY_CONFIRM: 'video', GATEWAY_LEDGER_DIR: ledger, GATEWAY_LIMITS: 'video=1/day' };
      const rows = () =>
        ledgerCalls(ledger).map(({ begin, end }) => [begin.words, end?.outcome, end?.reason]);
      const declining = await connect(env, { answer: 'decline' });
      const before = submitsOf(reference.service).length;
      const declined = await declining.callTool('video_generate', VIDEO);
      expect(textOf(declined)).toMatch(/^The user declined: Generate a video with \S+ was not sent/);
      expect(declining.asked).toEqual([
        expect.stringMatching(
          /^Generate a video with \S+\? The gateway bills it when it is sent\.\nPrompt: a paper boat/,
        ),
      ]);
      expect(submitsOf(reference.service)).toHaveLength(before);
      expect(rows()).toEqual([['a paper boat in the rain', 'declined', 'declined by the user']]);

      const accepting = await connect(env, { answer: 'accept' });
      const accepted = await accepting.callTool('video_generate', {
        ...VIDEO,
        prompt: 'a paper boat, accepted',
      });
      expect(accepted.isError, textOf(accepted)).toBeFalsy();
      expect(accepting.asked).toHaveLength(1);
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
      expect(rows().slice(1)).toEqual([['a paper boat, accepted', 'accepted', undefined]]);

      const over = await accepting.callTool('video_generate', { ...VIDEO, prompt: 'one boat too many' });
      expect(textOf(over)).toMatch(/^Not sent, and nothing billed: the shared limit video=1\/day/);
      expect(accepting.asked).toHaveLength(1);
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
      expect(rows().slice(2)).toEqual([['one boat too many', 'declined', 'limit video=1/day']]);
    });

    it('saves under the first of the roots the client lists, and reads the file back', async () => {
      const root = tempDir('gtm-era-root-');
      const client = await connect({}, { roots: [pathToFileURL(root).href] });
      const result = await client.callTool('audio_speech', SPEECH);
      expect(result.isError, textOf(result)).toBeFalsy();
      const saved = structuredOf<{ file_path: string }>(result).file_path;
      expect(dirname(saved)).toBe(join(root, 'gateway-output'));
      expect(client.rootsListed).toBeGreaterThanOrEqual(1);
      const link = result.content.find((c) => c.type === 'resource_link');
      expect(link && 'uri' in link ? link.uri : undefined).toMatch(/^gateway-tools:\/\/output\//);
      const uri = (link as { uri: string }).uri;
      expect((await client.listResources()).map((r) => r.uri)).toContain(uri);
      const read = await client.readResource(uri);
      expect(read.contents[0]).toMatchObject({ uri, mimeType: 'audio/mpeg' });
    });

    it('sends log lines at the level the client asks for', async () => {
      const root = tempDir('gtm-era-log-');
      const client = await connect({}, { roots: [pathToFileURL(root).href], logLevel: 'info' });
      await client.callTool('audio_speech', SPEECH);
      expect(client.logs.map((line) => line.data)).toContainEqual(
        expect.stringContaining("workspace from the client's roots"),
      );
      expect(client.logs.every((line) => line.level !== 'debug')).toBe(true);
    });

    it('reports progress while a video is followed', async () => {
      const client = await connect({});
      const progress: number[] = [];
      const result = await client.callTool(
        'video_generate',
        { ...VIDEO, prompt: 'followed with progress', wait_seconds: 20 },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(progress.length).toBeGreaterThan(0);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
    });
  });
});

describe('a 2026-07-28 client that sends a used confirmation again', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttpCli({ ...reference.env, GATEWAY_CONFIRM: 'video' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = (id: number, params: Record<string, unknown>) => postModernCall(server.url, id, params);

  // allow_duplicate: the duplicate guard, which would answer the replay with the first job, is off.
  it('is refused: the call was sent once, with the confirmation it was given for', async () => {
    const call = {
      name: 'video_generate',
      arguments: { ...VIDEO, prompt: 'replayed confirmation', allow_duplicate: true },
    };
    const before = submitsOf(reference.service).length;
    const first = await post(1, call);
    expect(first.body.result).toMatchObject({ resultType: 'input_required' });
    const { requestState, inputRequests } = first.body.result as {
      requestState: string;
      inputRequests: Record<string, { method: string }>;
    };
    expect(Object.keys(inputRequests)).toEqual(['confirm']);
    const answered = {
      ...call,
      requestState,
      inputResponses: { confirm: { action: 'accept', content: {} } },
    };
    const sent = await post(2, answered);
    expect(sent.body.result?.isError, JSON.stringify(sent.body)).toBeFalsy();
    expect(submitsOf(reference.service)).toHaveLength(before + 1);

    const again = await post(3, answered);
    expect(JSON.stringify(again.body)).toContain('the confirmation the client sent was already used');
    expect(submitsOf(reference.service)).toHaveLength(before + 1);

    const otherCall = await post(4, {
      ...answered,
      arguments: { ...call.arguments, prompt: 'another video' },
    });
    expect(otherCall.body.result).toMatchObject({ resultType: 'input_required' });
    expect(submitsOf(reference.service)).toHaveLength(before + 1);
  });

  it('is refused when the state was not made by this server', async () => {
    const forged = await post(5, {
      name: 'video_generate',
      arguments: VIDEO,
      requestState: 'v1.e30.AAAA',
      inputResponses: { confirm: { action: 'accept', content: {} } },
    });
    expect(forged.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
  });
});

// Claude Code opens with server/discover and falls back to initialize when the answer is not one
// it takes: asking again, or falling back, must find the connection in neither era yet.
describe('server/discover on stdio, repeated', () => {
  const ENVELOPE = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const discover = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'server/discover',
    params: { _meta: ENVELOPE },
  });

  async function exchange(messages: object[]): Promise<Record<number, { result?: Record<string, unknown> }>> {
    const server = spawnServer({ ...reference.env, GATEWAY_LOG_LEVEL: 'error' });
    try {
      const answers: Record<number, { result?: Record<string, unknown> }> = {};
      for (const message of messages) {
        server.child.stdin.write(`${JSON.stringify(message)}\n`);
        const id = (message as { id: number }).id;
        await until(() => server.stdout().includes(`"id":${id}}`), 10_000, `an answer to ${id}`);
      }
      for (const line of server.stdout().trim().split('\n')) {
        const answer = JSON.parse(line) as { id: number; result?: Record<string, unknown> };
        answers[answer.id] = answer;
      }
      return answers;
    } finally {
      server.child.stdin.end();
      await server.exited;
    }
  }

  it('still takes an initialize afterwards, and serves the 2025 era', async () => {
    const answers = await exchange([
      discover(1),
      discover(2),
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      },
    ]);
    expect(answers[1]?.result?.supportedVersions).toEqual(['2026-07-28']);
    expect(answers[2]?.result?.supportedVersions).toEqual(['2026-07-28']);
    expect(answers[3]?.result).toMatchObject({ protocolVersion: '2025-06-18' });
  });

  it('serves the 2026-07-28 era to a client that goes on with it', async () => {
    const answers = await exchange([
      discover(1),
      discover(2),
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: ENVELOPE } },
    ]);
    const tools = (answers[3]?.result?.tools ?? []) as { name: string }[];
    expect(tools.map((t) => t.name)).toContain('web_search');
  });
});
