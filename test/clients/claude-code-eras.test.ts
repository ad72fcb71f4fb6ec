import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CLAUDE_CODE_NEW_ERA_VERSION, ensureClaudeCode } from '../cached-packages.js';
import { type FakeAnthropic, FINAL_TEXT, startFakeAnthropic } from '../harness/fake-anthropic.js';
import { expectFramedPage, expectFramedSearch, ISO_SECOND } from '../harness/fence.js';
import { useReferenceService } from '../harness/gateway.js';
import { serverEnvDefaults, tempDir } from '../harness/harness.js';
import {
  type ClientRun,
  recordedLines,
  recordedMessages,
  recordedServer,
  runClient,
} from '../harness/real-client.js';
import { scaled } from '../harness/time.js';

// Real Claude Code (pinned), run with `-p` against a scripted model on loopback, uses the built
// server over stdio in both MCP eras: by default it opens with `server/discover` (2026-07-28), and
// with MCP_PROTOCOL_NEGOTIATION=legacy with `initialize` (2025). In each, Claude Code lists the
// server's tools and offers `mcp__gateway__web_search` to the model (by name, its schema loaded
// through ToolSearch), the model calls it, the server makes exactly one search request to the
// gateway, and the tool_result the model receives is the same in both eras. The server runs
// behind test/harness/stdio-tee.mjs, which records the lines each side wrote, so the test sees
// which era was spoken.

const QUERY = 'model context protocol';
const SEARCH_TOOL = 'mcp__gateway__web_search';
const FETCH_TOOL = 'mcp__gateway__web_fetch';
const VERSION_META = 'io.modelcontextprotocol/protocolVersion';

const ERAS = [
  { name: '2026-07-28 (default negotiation)', env: {}, opens: 'server/discover', other: 'initialize' },
  {
    name: '2025 (MCP_PROTOCOL_NEGOTIATION=legacy)',
    env: { MCP_PROTOCOL_NEGOTIATION: 'legacy' },
    opens: 'initialize',
    other: 'server/discover',
  },
] as const;

interface Message {
  id?: string | number;
  method?: string;
  params?: { protocolVersion?: string; _meta?: Record<string, unknown> };
  result?: { protocolVersion?: string; supportedVersions?: string[] };
}

describe(`Claude Code ${CLAUDE_CODE_NEW_ERA_VERSION} searches the web through the server over stdio`, () => {
  const reference = useReferenceService();
  const received: Record<string, unknown> = {};
  let claude: string;

  beforeAll(async () => {
    claude = await ensureClaudeCode(CLAUDE_CODE_NEW_ERA_VERSION);
  }, scaled(300_000));

  it.each(ERAS)(
    'in the $name era',
    async (era) => {
      reference.service.reset();
      const home = tempDir('gtm-claude-');
      const log = join(home, 'mcp.jsonl');
      const config = join(home, 'mcp.json');
      const server = { ...serverEnvDefaults(), ...reference.env, GATEWAY_LOG_LEVEL: 'info' };
      const mcpServers = { gateway: { ...recordedServer(log), env: server } };
      writeFileSync(config, JSON.stringify({ mcpServers }));

      const model = await startFakeAnthropic(QUERY);
      let run: ClientRun | undefined;
      onTestFailed(() => report(era.name, model, log, run));
      try {
        run = await runClaude(claude, config, home, {
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: 'sk-ant-test-key',
          ...era.env,
        });
      } finally {
        await model.close();
      }
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ is_error: false, result: FINAL_TEXT });

      // The era: what Claude Code opened with, and what each side said the version was.
      const lines = recordedLines(log);
      const sent = recordedMessages(log, 'client') as Message[];
      const answered = recordedMessages(log, 'server') as Message[];
      const methods = sent.map((m) => m.method);
      expect(methods[0]).toBe(era.opens);
      // Claude Code falls back to `initialize` when a server does not answer its first
      // server/discover within its bound (about 3 s), as after a slow start.
      const firstAnswer = lines.find((l) => l.from === 'server')?.ms;
      expect(methods, `the server first answered ${firstAnswer} ms after it started`).not.toContain(
        era.other,
      );
      expect(methods).toEqual(expect.arrayContaining(['tools/list', 'tools/call']));
      const call = sent.find((m) => m.method === 'tools/call');
      const opening = answered.find((m) => m.id !== undefined && m.id === sent[0]?.id);
      if (era.opens === 'server/discover') {
        expect(opening?.result?.supportedVersions).toContain('2026-07-28');
        expect(call?.params?._meta?.[VERSION_META]).toBe('2026-07-28');
      } else {
        expect(sent[0]?.params?.protocolVersion).toMatch(/^2025-/);
        expect(opening?.result?.protocolVersion).toBe(sent[0]?.params?.protocolVersion);
        expect(call?.params?._meta?.[VERSION_META]).toBeUndefined();
      }

      // The model was offered the tool (listed by name, then its schema), called it once, and got
      // one result back: the search results.
      expect(model.toolCalls.at(-1)).toBe(SEARCH_TOOL);
      expect(model.requests.at(-1)?.tools).toContain(SEARCH_TOOL);
      expect(model.toolCalls.filter((name) => name !== 'ToolSearch')).toEqual([SEARCH_TOOL]);
      expect(model.toolResults).toHaveLength(1);
      const result = model.toolResults[0];
      expect(result?.is_error).toBeFalsy();
      expect(result?.content).toEqual([
        {
          type: 'text',
          text: expect.stringContaining(
            `1. Result 1 for ${QUERY} — https://example.com/model-context-protocol/1`,
          ),
        },
      ]);

      // When it searched, and the sites' words in one intact fence.
      const seen = String((result?.content as { text?: string }[] | undefined)?.[0]?.text);
      const fence = expectFramedSearch(seen, QUERY);

      const searches = reference.service.requests.filter((r) => r.route === 'search');
      expect(searches).toHaveLength(1);
      expect(searches[0]?.body).toMatchObject({ query: QUERY });

      // The same but for when it searched and the fence's token, drawn fresh for each result.
      received[era.opens] = seen.replace(new RegExp(ISO_SECOND), '<time>').replaceAll(fence.mark, '<mark>');
    },
    180_000,
  );

  it('reads a hostile page: the model sees when it was fetched, from_cache, and one intact fence', async () => {
    reference.service.reset();
    const home = tempDir('gtm-claude-');
    const log = join(home, 'mcp.jsonl');
    const config = join(home, 'mcp.json');
    const server = { ...serverEnvDefaults(), ...reference.env, GATEWAY_LOG_LEVEL: 'info' };
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { gateway: { ...recordedServer(log), env: server } } }),
    );
    const url = 'https://example.com/hostile/for-claude';
    const model = await startFakeAnthropic(QUERY, { tool: 'web_fetch', args: { url } });
    let run: ClientRun | undefined;
    onTestFailed(() => report('web_fetch', model, log, run));
    try {
      run = await runClaude(
        claude,
        config,
        home,
        { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-ant-test-key' },
        FETCH_TOOL,
      );
    } finally {
      await model.close();
    }
    expect(run.code).toBe(0);
    expect(model.toolCalls.filter((name) => name !== 'ToolSearch')).toEqual([FETCH_TOOL]);
    expect(model.toolResults).toHaveLength(1);
    const content = model.toolResults[0]?.content as { type: string; text: string }[];
    expect(content).toHaveLength(1);
    const seen = content[0]?.text ?? '';
    console.log(`claude: the model received\n${seen.slice(0, 1500)}`);
    const fence = expectFramedPage(seen, url);
    expect(fence.after).toBe('');
    expect(reference.service.requests.filter((r) => r.route === 'fetch')).toHaveLength(1);
  }, 180_000);

  it('gives the model the same tool_result in both eras, but for its time and fence token', () => {
    expect(Object.keys(received).sort()).toEqual(['initialize', 'server/discover']);
    expect(received['server/discover']).toEqual(received.initialize);
  });
});

/** `claude -p` with only the server of `config`, allowed to call its `tool` without asking. */
function runClaude(
  claude: string,
  config: string,
  home: string,
  env: Record<string, string>,
  tool = SEARCH_TOOL,
): Promise<ClientRun> {
  const args = [
    '-p',
    tool === SEARCH_TOOL
      ? `Search the web for "${QUERY}".`
      : 'Read the page https://example.com/hostile/for-claude.',
    '--mcp-config',
    config,
    '--strict-mcp-config',
    '--allowedTools',
    tool,
    '--output-format',
    'json',
    '--no-session-persistence',
  ];
  const quiet = {
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  // Nothing of this process's environment but PATH: no real key or setting can leak in. stdin is
  // closed: the prompt is an argument, and an open stdin would be waited on.
  return runClient(claude, args, {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, ...quiet, ...env },
    timeoutMs: 150_000,
  });
}

/** What each side did, printed when a test fails. */
function report(era: string, model: FakeAnthropic, log: string, run: ClientRun | undefined): void {
  const requests = model.requests.map((r) => `${r.method} ${r.path} tools=[${r.tools.join(',')}]`);
  console.log(
    [
      `--- ${era}`,
      `model requests:\n${requests.join('\n')}`,
      `unexpected paths: ${model.unexpected.join(', ') || 'none'}`,
      `tool calls: ${model.toolCalls.join(', ')}`,
      `tool_result: ${JSON.stringify(model.toolResults)}`,
      `MCP lines:\n${existsSync(log) ? readFileSync(log, 'utf8').slice(0, 8000) : '(none recorded)'}`,
      `server stderr:\n${existsSync(`${log}.stderr`) ? readFileSync(`${log}.stderr`, 'utf8') : '(none)'}`,
      `claude exit ${run?.code}\nstdout: ${run?.stdout.slice(0, 2000)}\nstderr: ${run?.stderr.slice(0, 2000)}`,
    ].join('\n'),
  );
}
