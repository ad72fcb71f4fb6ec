import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClaudeCode } from '../cached-packages.js';
import { PROJECT_ROOT, SERVER_NODE, tempDir } from '../harness/harness.js';
import { diesWithParent } from '../harness/lifetime.js';
import { scaled } from '../harness/time.js';
import { type Registry, startRegistry } from '../registry/verdaccio.js';

// The package as users get it: packed from a clean checkout (the tracked files, no dist/), published
// to a real registry on loopback, and started by `npx -y gateway-tools-mcp` with nothing installed
// but what the package itself depends on — by hand, and as Claude Code starts the plugin of the
// repository's marketplace. npx runs on SERVER_NODE when it is set (see harness.ts).
const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));

describe('the published package, through npx from a registry', () => {
  let registry: Registry;
  let work: string;
  let env: Record<string, string>;
  let dryRunFiles: string[];
  let checkout: string;

  beforeAll(async () => {
    registry = await startRegistry();
    work = tempDir('gtm-publish-');
    checkout = join(work, 'checkout');
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: PROJECT_ROOT, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    for (const file of tracked) {
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      copyFileSync(join(PROJECT_ROOT, file), join(checkout, file));
    }
    // The build tools a clean clone gets from `npm ci`.
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(checkout, 'node_modules'));
    env = {
      PATH: [dirname(SERVER_NODE), process.env.PATH].join(':'),
      HOME: work,
      npm_config_userconfig: registry.npmrc,
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
    const npm = (args: string[], cwd: string) =>
      execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    // prepack builds dist/ in the clean checkout, as `npm publish` would.
    // npm 11 keys the dry run's report by package name.
    const dryRun = JSON.parse(npm(['publish', '--dry-run', '--json'], checkout)) as Record<
      string,
      { files: { path: string }[] }
    >;
    dryRunFiles = (dryRun['gateway-tools-mcp']?.files ?? []).map((f) => f.path);
    const packed = JSON.parse(
      npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], checkout),
    );
    // Its production dependencies (undici, and pg with what it needs), at the versions the
    // lockfile pins, from the project's install: the registry has no uplink to fetch them from.
    const installed = npm(['ls', '--omit=dev', '--all', '--parseable'], PROJECT_ROOT)
      .split('\n')
      .filter((path) => path.includes('node_modules'));
    expect(installed.map((path) => path.slice(path.lastIndexOf('node_modules/') + 13))).toEqual(
      expect.arrayContaining(['undici', 'pg']),
    );
    for (const path of installed) {
      const [dependency] = JSON.parse(
        npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work, path], work),
      );
      npm(['publish', join(work, dependency.filename)], work);
    }
    npm(['publish', join(work, packed[0].filename)], work);
  }, scaled(600_000));

  afterAll(async () => {
    await registry?.stop();
  });

  it('publishes the built server: npm publish --dry-run lists dist/cli.js', () => {
    expect(dryRunFiles).toContain('dist/cli.js');
    expect(dryRunFiles).toContain('package.json');
    expect(dryRunFiles.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it(
    'npx -y gateway-tools-mcp --version prints the version',
    () => {
      const out = execFileSync('npx', ['-y', 'gateway-tools-mcp', '--version'], {
        cwd: tempDir('gtm-npx-'),
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: scaled(120_000),
      });
      expect(out.trim()).toBe(version);
    },
    scaled(180_000),
  );

  it('lists its tools over stdio, installed with its production dependencies only', {
    timeout: scaled(180_000),
  }, async () => {
    const client = new Client({ name: 'published-package-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        ...diesWithParent('npx', ['-y', 'gateway-tools-mcp']),
        cwd: tempDir('gtm-npx-'),
        env,
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['web_search', 'web_fetch', 'video_generate']),
      );
    } finally {
      await client.close();
    }
    const npxRoot = join(work, 'npm-cache', '_npx');
    const installs = readdirSync(npxRoot).map((hash) =>
      readdirSync(join(npxRoot, hash, 'node_modules')).filter((name) => !name.startsWith('.')),
    );
    expect(installs).toHaveLength(1);
    expect(installs[0]).toEqual(expect.arrayContaining(['gateway-tools-mcp', 'undici', 'pg', 'pg-pool']));
    expect(installs[0]?.filter((name) => /vitest|typescript|zod|@modelcontextprotocol/.test(name))).toEqual(
      [],
    );
  });

  it("installs as the Claude Code plugin of the repository's marketplace, keeps the key secret, and connects", {
    timeout: scaled(600_000),
  }, async () => {
    const claude = await ensureClaudeCode();
    const home = tempDir('gtm-claude-');
    const key = 'plugin-test-key-0123456789';
    const claudeEnv = {
      ...env,
      HOME: home,
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    const run = (args: string[]) =>
      execFileSync(claude, args, {
        cwd: home,
        env: claudeEnv,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: scaled(120_000),
      });
    expect(run(['plugin', 'validate', '--strict', checkout])).toContain('Validation passed');
    expect(run(['plugin', 'validate', '--strict', join(checkout, 'plugin')])).toContain('Validation passed');
    run(['plugin', 'marketplace', 'add', checkout]);
    run([
      'plugin',
      'install',
      'gateway-tools@gateway-tools',
      '--config',
      `gateway_api_key=${key}`,
      '--config',
      'gateway_base_url=http://127.0.0.1:9',
    ]);
    // The key went to Claude Code's secret store, not into its settings.
    const settings = readFileSync(join(home, '.claude', 'settings.json'), 'utf8');
    expect(settings).toContain('http://127.0.0.1:9');
    expect(settings).not.toContain(key);
    expect(run(['mcp', 'list'])).toMatch(
      /plugin:gateway-tools:gateway-tools: npx -y gateway-tools-mcp - [✓✔] Connected/,
    );
  });
});
