import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { CODEX_VERSION, ensureCodex } from '../cached-packages.js';
import { type FakeOpenAI, FINAL_TEXT, startFakeOpenAI } from '../harness/fake-openai.js';
import { expectFramedPage, expectFramedSearch } from '../harness/fence.js';
import { useReferenceService } from '../harness/gateway.js';
import { serverEnvDefaults, tempDir } from '../harness/harness.js';
import {
  type ClientRun,
  expectOneSearch,
  openingOf,
  outputText,
  recordedMessages,
  recordedServer,
  runClient,
} from '../harness/real-client.js';
import { scaled } from '../harness/time.js';

// Real OpenAI Codex CLI (pinned), run as `codex exec` against a scripted Responses API on loopback,
// uses the built server over stdio: it opens the MCP session (with `initialize` in the 2025 era,
// its default; with `server/discover` in the 2026-07-28 era, opted into as MODES says), lists the
// tools, offers `web_search` to the model in its `mcp__gateway` namespace, and runs
// the call the model makes without asking anyone. The server makes exactly one search request to
// the gateway, and the function_call_output the model receives carries the search results. The
// server runs behind test/harness/stdio-tee.mjs, so the test sees what Codex sent it.

const QUERY = 'model context protocol';
/** `codex exec` run as a script runs it: no repository, no session kept, no colours. */
const EXEC = ['exec', '--strict-config', '--skip-git-repo-check', '--ephemeral', '--color', 'never'];

// Codex speaks 2026-07-28 to a stdio server only with both opt-ins: the feature, and
// CODEX_MCP_PROTOCOL_VERSION=2026-07-28 in that server's env; with the feature alone it still
// opens with `initialize` at 2025-06-18.
interface Mode {
  name: string;
  features: string[];
  serverEnv: Record<string, string>;
  opens: string;
  not: string;
}

const MODES: Mode[] = [
  { name: '2025 era (default)', features: [], serverEnv: {}, opens: 'initialize', not: 'server/discover' },
  {
    name: '2026-07-28 era (mcp_2026_07_28 feature + server env marker)',
    features: ['mcp_2026_07_28'],
    serverEnv: { CODEX_MCP_PROTOCOL_VERSION: '2026-07-28' },
    opens: 'server/discover',
    not: 'initialize',
  },
];

/** A TOML string: JSON's escapes are TOML basic-string escapes. */
const toml = (value: string): string => JSON.stringify(value);

function configToml(
  model: FakeOpenAI,
  server: { command: string; args: string[] },
  env: Record<string, string>,
) {
  const envTable = Object.entries(env)
    .map(([k, v]) => `${k} = ${toml(v)}`)
    .join(', ');
  return [
    'model = "gpt-5"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${toml(model.url)}`,
    'env_key = "FAKE_OPENAI_API_KEY"',
    'wire_api = "responses"',
    '',
    '[mcp_servers.gateway]',
    `command = ${toml(server.command)}`,
    `args = [${server.args.map(toml).join(', ')}]`,
    `env = { ${envTable} }`,
    'startup_timeout_sec = 60',
    'tool_timeout_sec = 60',
    '',
  ].join('\n');
}

describe(`Codex ${CODEX_VERSION} searches the web through the server over stdio`, () => {
  const reference = useReferenceService();
  let codex: string;

  beforeAll(async () => {
    codex = await ensureCodex();
  }, scaled(300_000));

  it.each(MODES)(
    'in the $name',
    async (mode) => {
      reference.service.reset();
      const home = tempDir('gtm-codex-home-');
      const work = tempDir('gtm-codex-work-');
      const record = join(home, 'mcp-stdin.jsonl');
      const env = { ...serverEnvDefaults(), ...reference.env, GATEWAY_LOG_LEVEL: 'info', ...mode.serverEnv };
      const model = await startFakeOpenAI({ query: QUERY });
      let run: ClientRun | undefined;
      onTestFailed(() => {
        console.log(`codex ${mode.name}: exit ${run?.code} ${run?.signal ?? ''} in ${run?.ms} ms`);
        console.log(`stdout:\n${run?.stdout}\nstderr:\n${run?.stderr}`);
        console.log(`unexpected model paths: ${JSON.stringify(model.unexpected)}`);
        console.log(`sent to the server:\n${JSON.stringify(recordedMessages(record), null, 1)}`);
      });
      try {
        writeFileSync(join(home, 'config.toml'), configToml(model, recordedServer(record), env));
        const features = mode.features.flatMap((f) => ['--enable', f]);
        run = await runClient(codex, [...EXEC, ...features, 'Search the web for MCP.'], {
          cwd: work,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: home,
            CODEX_HOME: home,
            FAKE_OPENAI_API_KEY: 'sk-fake',
          },
          timeoutMs: 150_000,
        });
      } finally {
        await model.close();
      }

      const sent = recordedMessages(record);
      console.log(`codex ${mode.name} opened with ${JSON.stringify(sent[0]).slice(0, 600)} (${run.ms} ms)`);
      expectOneSearch(run, sent, reference.service.requests, { finalText: FINAL_TEXT, query: QUERY });
      expect(openingOf(sent).method).toBe(mode.opens);
      expect(sent.map((m) => m.method)).not.toContain(mode.not);

      expect(model.offeredTools).toContain('mcp__gateway/web_search');
      expect(model.calls).toEqual([
        { namespace: 'mcp__gateway', name: 'web_search', arguments: { query: QUERY } },
      ]);
      expect(model.unexpected).toEqual([]);

      expect(model.toolOutputs).toHaveLength(1);
      const received = outputText(model.toolOutputs[0]);
      console.log(`codex ${mode.name}: the model received\n${received.slice(0, 1500)}`);
      expect(received).toContain(`Result 1 for ${QUERY} — https://example.com/model-context-protocol/1`);
      // When it searched, and the sites' words in one intact fence.
      expectFramedSearch(received, QUERY);
    },
    180_000,
  );

  it('reads a hostile page: the model sees when it was fetched, from_cache, and one intact fence', async () => {
    reference.service.reset();
    const home = tempDir('gtm-codex-home-');
    const work = tempDir('gtm-codex-work-');
    const record = join(home, 'mcp-stdin.jsonl');
    const env = { ...serverEnvDefaults(), ...reference.env, GATEWAY_LOG_LEVEL: 'info' };
    const url = 'https://example.com/hostile/for-codex';
    const model = await startFakeOpenAI({ query: QUERY, call: { tool: 'web_fetch', args: { url } } });
    let run: ClientRun | undefined;
    onTestFailed(() => {
      console.log(`codex web_fetch: exit ${run?.code} ${run?.signal ?? ''} in ${run?.ms} ms`);
      console.log(`stdout:\n${run?.stdout}\nstderr:\n${run?.stderr}`);
      console.log(`sent to the server:\n${JSON.stringify(recordedMessages(record), null, 1)}`);
    });
    try {
      writeFileSync(join(home, 'config.toml'), configToml(model, recordedServer(record), env));
      run = await runClient(codex, [...EXEC, `Read ${url}.`], {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk-fake' },
        timeoutMs: 150_000,
      });
    } finally {
      await model.close();
    }
    expect(run.code).toBe(0);
    expect(model.calls).toEqual([{ namespace: 'mcp__gateway', name: 'web_fetch', arguments: { url } }]);
    expect(model.toolOutputs).toHaveLength(1);
    const received = outputText(model.toolOutputs[0]);
    console.log(`codex web_fetch: the model received\n${received.slice(0, 1500)}`);
    expectFramedPage(received, url);
    expect(reference.service.requests.filter((r) => r.route === 'fetch')).toHaveLength(1);
  }, 180_000);
});
