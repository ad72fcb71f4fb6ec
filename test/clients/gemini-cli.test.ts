import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { ensureGeminiCli, GEMINI_CLI_VERSION } from '../cached-packages.js';
import { type FakeGemini, FINAL_TEXT, startFakeGemini } from '../harness/fake-gemini.js';
import { expectFramedPage, expectFramedSearch } from '../harness/fence.js';
import { useReferenceService } from '../harness/gateway.js';
import { serverEnvDefaults, tempDir } from '../harness/harness.js';
import {
  type ClientRun,
  expectOneSearch,
  openingOf,
  recordedMessages,
  recordedServer,
  runClient,
} from '../harness/real-client.js';
import { scaled } from '../harness/time.js';

// Real Gemini CLI (pinned), run headless with `-p` against a scripted Gemini API on loopback
// (GOOGLE_GEMINI_BASE_URL), uses the built server over stdio: in a folder its user has trusted
// (~/.gemini/trustedFolders.json; headless in an untrusted folder, this version refuses to start
// and exits 55), it opens the session with `initialize` at protocol 2025-06-18, lists the tools, declares
// `mcp_gateway_web_search` to the model, and runs the call the model makes without asking (the
// server entry is `trust: true`). The server makes exactly one search request to the gateway, and
// the functionResponse the model receives carries the search results. The server runs behind
// test/harness/stdio-tee.mjs, so the test sees what Gemini CLI sent it.

const QUERY = 'model context protocol';
const SEARCH_TOOL = 'mcp_gateway_web_search';
const FETCH_TOOL = 'mcp_gateway_gw_web_fetch';

function settings(server: { command: string; args: string[] }, env: Record<string, string>) {
  return {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    mcpServers: { gateway: { ...server, env, trust: true, timeout: scaled(60_000) } },
  };
}

describe(`Gemini CLI ${GEMINI_CLI_VERSION} searches the web through the server over stdio`, () => {
  const reference = useReferenceService();
  let gemini: string;

  beforeAll(async () => {
    gemini = realpathSync(await ensureGeminiCli());
  }, scaled(300_000));

  /**
   * Gemini CLI run headless with `prompt`, its model `model`, the server (started with
   * `serverArgs`) recorded in `record`.
   */
  async function runGemini(
    model: FakeGemini,
    record: string,
    prompt: string,
    serverArgs: string[] = [],
  ): Promise<ClientRun> {
    const home = dirname(record);
    const work = realpathSync(tempDir('gtm-gemini-work-'));
    const env = { ...serverEnvDefaults(), ...reference.env, GATEWAY_LOG_LEVEL: 'info' };
    mkdirSync(join(home, '.gemini'));
    const server = recordedServer(record);
    const config = settings({ ...server, args: [...server.args, ...serverArgs] }, env);
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(config, null, 2));
    writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [work]: 'TRUST_FOLDER' }));
    return runClient(process.execPath, [gemini, '-m', 'gemini-2.5-flash', '-p', prompt], {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        GEMINI_API_KEY: 'fake-gemini-key',
        GOOGLE_GEMINI_BASE_URL: model.url,
        NO_COLOR: '1',
      },
      timeoutMs: 150_000,
    });
  }

  function reportOnFailure(model: FakeGemini, record: string, run: () => ClientRun | undefined): void {
    onTestFailed(() => {
      const ran = run();
      console.log(`gemini: exit ${ran?.code} ${ran?.signal ?? ''} in ${ran?.ms} ms`);
      console.log(`stdout:\n${ran?.stdout}\nstderr:\n${ran?.stderr}`);
      console.log(`model requests: ${JSON.stringify(model.requests.map((r) => `${r.method} ${r.path}`))}`);
      console.log(`unexpected model paths: ${JSON.stringify(model.unexpected)}`);
      console.log(`tools offered: ${JSON.stringify(model.offeredTools)}`);
      const listed = recordedMessages(record, 'server').find((m) => JSON.stringify(m).includes('"tools":['));
      console.log(
        `tools listed: ${JSON.stringify(listed)
          .match(/"name":"[a-z_]+"/g)
          ?.join(' ')}`,
      );
      console.log(`sent to the server:\n${JSON.stringify(recordedMessages(record), null, 1)}`);
    });
  }

  it('in the 2025-06-18 era', { timeout: scaled(180_000) }, async () => {
    reference.service.reset();
    const record = join(tempDir('gtm-gemini-home-'), 'mcp-stdin.jsonl');
    const model: FakeGemini = await startFakeGemini({ query: QUERY });
    let run: ClientRun | undefined;
    reportOnFailure(model, record, () => run);
    try {
      run = await runGemini(model, record, 'Search the web for MCP.');
    } finally {
      await model.close();
    }

    const sent = recordedMessages(record);
    console.log(`gemini opened with ${JSON.stringify(sent[0]).slice(0, 600)} (${run.ms} ms)`);
    expectOneSearch(run, sent, reference.service.requests, { finalText: FINAL_TEXT, query: QUERY });
    expect(openingOf(sent)).toEqual({ method: 'initialize', protocolVersion: '2025-06-18' });
    expect(sent.map((m) => m.method)).not.toContain('server/discover');

    expect(model.offeredTools).toContain(SEARCH_TOOL);
    expect(model.calls).toEqual([{ name: SEARCH_TOOL, args: { query: QUERY } }]);
    expect(model.unexpected).toEqual([]);

    expect(model.functionResponses).toHaveLength(1);
    const received = model.functionResponses[0];
    console.log(`gemini: the model received\n${JSON.stringify(received, null, 1).slice(0, 2000)}`);
    expect(received?.name).toBe(SEARCH_TOOL);
    const output = String(received?.response.output);
    expect(output).toContain(`Result 1 for ${QUERY} — https://example.com/model-context-protocol/1`);
    // When it searched, and the sites' words in one intact fence.
    expectFramedSearch(output, QUERY);
  });

  it('reads a hostile page: the model sees when it was fetched, from_cache, and one intact fence', {
    timeout: scaled(180_000),
  }, async () => {
    reference.service.reset();
    const record = join(tempDir('gtm-gemini-home-'), 'mcp-stdin.jsonl');
    const url = 'https://example.com/hostile/for-gemini';
    const model = await startFakeGemini({ query: QUERY, call: { tool: 'web_fetch', args: { url } } });
    let run: ClientRun | undefined;
    reportOnFailure(model, record, () => run);
    try {
      // Headless, Gemini CLI denies its own web_fetch and drops with it every MCP tool of that bare
      // name, this server's too (its yolo mode offers it): a prefix (GATEWAY_TOOL_PREFIX) renames it.
      run = await runGemini(model, record, `Read ${url}.`, ['--tool-prefix', 'gw_']);
    } finally {
      await model.close();
    }
    expect(run.code).toBe(0);
    expect(model.calls).toEqual([{ name: FETCH_TOOL, args: { url } }]);
    expect(model.functionResponses).toHaveLength(1);
    const output = String(model.functionResponses[0]?.response.output);
    console.log(`gemini web_fetch: the model received\n${output.slice(0, 1500)}`);
    expectFramedPage(output, url);
    expect(reference.service.requests.filter((r) => r.route === 'fetch')).toHaveLength(1);
  });
});
