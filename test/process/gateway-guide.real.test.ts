import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, connectStdio, PROJECT_ROOT, structuredOf, tempDir } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { NINE_ROUTER_VERSION } from '../nine-router/install.js';
import { startTestGateway, type TestGateway } from '../nine-router/start.js';
import type { JournalEntry } from '../nine-router/upstream/types.js';

// docs/gateway.md, run as written: the blocks marked `<!-- guide-test: run -->` run in one shell
// against a 9router of the pinned version that nobody has configured (no key, no provider), the
// way a new user meets it. Only two things are swapped: the gateway's address (the test's port
// instead of 20128) and `npx -y gateway-tools-mcp` (this build instead of the registry's).
const GUIDE = readFileSync(join(PROJECT_ROOT, 'docs/gateway.md'), 'utf8');
const RUN_MARK = /<!-- guide-test: run -->\s*```sh\n([\s\S]*?)```/g;
const steps = [...GUIDE.matchAll(RUN_MARK)].map((m) => m[1] ?? '');
const PROVIDER_KEY = 'fake-tavily-key-from-the-guide';

describe('docs/gateway.md, followed step by step against a new 9router', () => {
  let gateway: TestGateway;
  let run: { status: number | null; stdout: string; stderr: string; apiKey: string; cwd: string };

  /**
   * Runs guide steps in one shell, in a folder of their own: strict (the first failing command
   * fails the run), or as a user's terminal runs what they paste (on past a failure).
   */
  function runSteps(script: string, env: Record<string, string> = {}, strict = true) {
    const cwd = tempDir('gtm-guide-');
    const result = spawnSync(
      'bash',
      [
        ...(strict ? ['-euo', 'pipefail'] : []),
        '-c',
        script
          .replaceAll('http://127.0.0.1:20128', gateway.url)
          .replaceAll('npx -y gateway-tools-mcp', `node ${JSON.stringify(CLI)}`),
      ],
      {
        cwd,
        encoding: 'utf8',
        timeout: scaled(60_000),
        // stdin not a socket: bash reads /etc/bash.bashrc when stdin is one (as under sshd).
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', HOME: cwd, TAVILY_API_KEY: PROVIDER_KEY, ...env },
      },
    );
    return { result, cwd };
  }

  beforeAll(async () => {
    gateway = await startTestGateway({ configure: false });
    const { result, cwd } = runSteps([...steps, 'printf %s "$GATEWAY_API_KEY" > gateway-api-key'].join('\n'));
    let apiKey = '';
    try {
      apiKey = readFileSync(join(cwd, 'gateway-api-key'), 'utf8');
    } catch {}
    run = { status: result.status, stdout: result.stdout, stderr: result.stderr, apiKey, cwd };
  }, scaled(300_000));

  afterAll(async () => {
    await gateway?.stop();
  });

  it('has the steps a new user runs: start 9router, a key, a search provider, doctor', () => {
    // 9router of the version the tests prove, on loopback; in the background where no terminal is.
    expect(GUIDE).toContain(`npx -y 9router@${NINE_ROUTER_VERSION} --host 127.0.0.1\n`);
    expect(GUIDE).toContain(`npx -y 9router@${NINE_ROUTER_VERSION} --host 127.0.0.1 --tray --no-browser`);
    expect(GUIDE).toContain('export TAVILY_API_KEY=');
    expect(steps.map((s) => /api\/keys|api\/providers|doctor/.exec(s)?.[0])).toEqual([
      'api/keys',
      'api/providers',
      'doctor',
    ]);
  });

  it('writes the two files that hold secrets readable by the user alone (mode 600)', () => {
    for (const file of ['9router.cookies', 'gateway-key.json']) {
      expect(statSync(join(run.cwd, file)).mode & 0o777, file).toBe(0o600);
    }
    expect(GUIDE).toContain('rm 9router.cookies gateway-key.json');
  });

  it("says 9router's own answer when a step is refused, and that no key was made", () => {
    const wrongPassword = (steps[0] ?? '').replace('"password":"123456"', '"password":"not-it"');
    const { result } = runSteps(wrongPassword, {}, false);
    const said = `${result.stdout}\n${result.stderr}`;
    expect(said).toMatch(/curl: \(22\)/);
    expect(said).toContain("No key was made: see 9router's answer above.");
    // The gateway's own words, not a parse error of an empty answer.
    expect(said).not.toMatch(/SyntaxError|Unexpected end of JSON/);
  });

  it('says when TAVILY_API_KEY was never exported', () => {
    const { result } = runSteps(`export GATEWAY_BASE_URL=http://127.0.0.1:20128\n${steps[1] ?? ''}`, {
      TAVILY_API_KEY: '',
    });
    expect(result.stdout).toContain('TAVILY_API_KEY is empty: export it first (above).');
  });

  it('ends with doctor ready, search and fetch served by the connected provider', () => {
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('API key accepted');
    expect(run.stdout).toMatch(/✓ Web search \(web_search\): tavily \(discovered/);
    expect(run.stdout).toMatch(/✓ Web fetch \(web_fetch\): tavily \(discovered/);
    expect(run.stdout).toContain('Ready: every required check passed');
    expect(run.status).toBe(0);
  });

  it('gives an agent search results with the key it made, through the provider key it connected', async () => {
    expect(run.apiKey).toMatch(/\S{16,}/);
    const agent = await connectStdio({ GATEWAY_BASE_URL: gateway.url, GATEWAY_API_KEY: run.apiKey });
    try {
      const result = await agent.client.callTool({ name: 'web_search', arguments: { query: 'first day' } });
      expect(result.isError).toBeFalsy();
      const { provider, results } = structuredOf<{ provider: string; results: { url: string }[] }>(result);
      expect(provider).toBe('tavily');
      expect(results.length).toBeGreaterThan(0);
    } finally {
      await agent.close();
    }
    const journal = (await (
      await fetch(`${gateway.upstreamUrl}/__journal?since=0`)
    ).json()) as JournalEntry[];
    const searches = journal.filter((e) => e.host === 'api.tavily.com' && e.path === '/search');
    expect(searches.length).toBe(1);
    expect(JSON.stringify(searches[0])).toContain(PROVIDER_KEY);
  });
});
