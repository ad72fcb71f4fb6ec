import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { helpText } from '../../src/config/help.js';
import { REQUIRED_META_KEY } from '../../src/mcp/tool-selection.js';
import { VERSION } from '../../src/version.js';
import {
  CLI,
  connectInMemory,
  connectStdio,
  PROJECT_ROOT,
  runCli,
  spawnServer,
  structuredOf,
  textOf,
} from '../harness/harness.js';
import { INITIALIZE } from '../harness/http-harness.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

const SECRET = 'sk-stdio-secret-abcdef123456';
let service: ReferenceService;
let env: Record<string, string>;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
  env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: SECRET };
});
afterAll(() => service.close());

async function listedTools(extraEnv: Record<string, string>, args: string[] = []) {
  const spawned = await connectStdio({ ...env, ...extraEnv }, args);
  try {
    const { tools } = await spawned.client.listTools();
    return { tools, instructions: spawned.client.getInstructions() ?? '' };
  } finally {
    await spawned.close();
  }
}

describe('built server over stdio', () => {
  it('lists the required tools, marked, with schemas and annotations', async () => {
    const { tools, instructions } = await listedTools({});
    const search = tools.find((t) => t.name === 'web_search');
    const fetch = tools.find((t) => t.name === 'web_fetch');
    expect(search?._meta?.[REQUIRED_META_KEY]).toBe(true);
    expect(fetch?._meta?.[REQUIRED_META_KEY]).toBe(true);
    expect(search?.outputSchema?.properties).toHaveProperty('results');
    expect(search?.inputSchema.properties).toHaveProperty('max_results');
    expect(fetch?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(instructions).toMatch(/web_search.*web_fetch/);
  });

  it('keeps the required tools under an allow-list, from env or flag', async () => {
    for (const [extra, args] of [
      [{ GATEWAY_TOOLS: 'video,audio' }, []],
      [{}, ['--tools', 'models']],
    ] as const) {
      const { tools } = await listedTools(extra, [...args]);
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['web_search', 'web_fetch']));
    }
  });

  it('renames but keeps the required tools under a prefix', async () => {
    const { tools, instructions } = await listedTools({ GATEWAY_TOOL_PREFIX: 'gw_' });
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['gw_web_search', 'gw_web_fetch']));
    expect(names.every((n) => n.startsWith('gw_'))).toBe(true);
    expect(instructions).toContain('gw_web_search');
  });

  it('exits 2 with one clear line when a deny-list names a required tool', async () => {
    for (const [extra, args] of [
      [{ GATEWAY_DISABLED_TOOLS: 'web_fetch' }, []],
      [{}, ['--disable-tools', 'video,web_search']],
      [{ GATEWAY_DISABLED_TOOLS: 'search' }, []],
    ] as const) {
      const run = await runCli([...args], { ...env, ...extra });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/web_(search|fetch) is a required agent tool and cannot be disabled/);
    }
  });

  it('exits 2 naming the variable for an invalid setting', async () => {
    const run = await runCli([], { ...env, GATEWAY_PORT: 'eighty' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'gateway-tools-mcp: invalid GATEWAY_PORT (--port): must be a number (got "eighty")',
    );
  });

  it('answers --version and --help on stdout and exits 0', async () => {
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('GATEWAY_API_KEY_FILE');
    expect(help.stdout).toBe(helpText(VERSION));
  });

  it('calls search and fetch end to end and never logs the key', async () => {
    const spawned = await connectStdio({ ...env, GATEWAY_LOG_LEVEL: 'debug' });
    try {
      const search = await spawned.client.callTool({ name: 'web_search', arguments: { query: 'stdio' } });
      expect(structuredOf<{ results: unknown[] }>(search).results.length).toBeGreaterThan(0);
      service.inject('fetch', { status: 401, message: `bad key ${SECRET}` });
      const fetch = await spawned.client.callTool({
        name: 'web_fetch',
        arguments: { url: 'https://example.com/a' },
      });
      expect(fetch.isError).toBe(true);
      expect(textOf(fetch)).not.toContain(SECRET);
      expect(spawned.stderr()).not.toContain(SECRET);
    } finally {
      await spawned.close();
    }
  });

  it('writes only JSON-RPC to stdout and exits 0 when stdin closes', async () => {
    const messages = [
      INITIALIZE,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'web_search', arguments: { query: 'pure' } },
      },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'web_fetch', arguments: { url: 42 } } },
    ];
    const server = spawnServer({ ...env, GATEWAY_LOG_LEVEL: 'debug' });
    server.child.stdin.write(`${messages.map((m) => JSON.stringify(m)).join('\n')}\n`);
    const deadline = Date.now() + 10_000;
    const lines = () => server.stdout().split('\n').filter(Boolean);
    while (lines().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    expect(lines()).toHaveLength(4);
    const replies = lines().map(
      (l) => JSON.parse(l) as { jsonrpc: string; id: number; result: { isError?: boolean } },
    );
    for (const reply of replies) expect(reply.jsonrpc).toBe('2.0');
    const byId = new Map(replies.map((m) => [m.id, m]));
    expect(byId.get(3)?.result.isError).toBeFalsy();
    expect(byId.get(4)?.result.isError).toBe(true);
    expect(server.stderr()).toContain('ready on stdio');
  });

  it('exits 0 on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = spawnServer(env);
      await server.waitForStderr('ready on stdio');
      server.child.kill(signal);
      expect(await server.exited).toBe(0);
    }
  });
});

describe('start-up weight', () => {
  it('serves the same catalog from the schemas the build embedded as from zod at run time', async () => {
    const spawned = await connectStdio(env);
    const inMemory = await connectInMemory(env);
    try {
      const built = await spawned.client.listTools();
      const fromZod = await inMemory.client.listTools();
      expect(built.tools.length).toBeGreaterThanOrEqual(10);
      expect(built).toEqual(fromZod);
    } finally {
      await spawned.close();
      await inMemory.close();
    }
  });

  it('the bundled CLI loads undici only on the first service request, and pg only for a ledger in PostgreSQL', async () => {
    const bundle = await readBundle();
    expect(bundle).toContain('import("undici")');
    expect(bundle).not.toMatch(/^import[^;]*["']undici["']/m);
    expect(bundle).toContain('import("pg")');
    expect(bundle).not.toMatch(/^import[^;]*["']pg["']/m);
  });

  it('the bundle leaves out the dependency code the server never runs', async () => {
    const bundle = await readBundle();
    expect(bundle).not.toContain('ajv'); // Ajv: the server checks elicitation answers itself
    expect(bundle).not.toContain('erwartet'); // zod's German messages (and every locale but English)
    expect(bundle).not.toContain('ZodEffects'); // zod 3
    expect(bundle).not.toContain('Encoding not recognized'); // iconv-lite, under raw-body
    expect(bundle).toContain('Invalid input'); // zod's English messages stay
  });

  it('the bundle imports only Node built-ins and the package dependencies, and names what it bundles', async () => {
    const bundle = await readBundle();
    const imported = new Set(
      [...bundle.matchAll(/(?:\bfrom|\bimport\(|\brequire\()\s*["']([@a-z][\w@/.:-]*)["']/g)].map(
        (m) => m[1]!,
      ),
    );
    const pkg = JSON.parse(await readFile(join(PROJECT_ROOT, 'package.json'), 'utf8'));
    const external = [...imported].filter((name) => !name.startsWith('node:'));
    // pg only in the chunk of the PostgreSQL ledger, imported when GATEWAY_LEDGER_URL is set. (jose
    // is bundled into the chunk of the OAuth resource server, loaded when GATEWAY_OAUTH_ISSUER is.)
    expect(external.sort()).toEqual(['pg', 'undici']);
    expect(Object.keys(pkg.dependencies)).toEqual(['pg', 'undici']);
    const notices = await readFile(join(dirname(CLI), 'THIRD-PARTY-NOTICES.md'), 'utf8');
    const section = (name: string) => notices.split('\n## ').find((part) => part.startsWith(`${name} `));
    for (const name of ['@modelcontextprotocol/server', '@modelcontextprotocol/server-legacy']) {
      expect(section(name), name).toMatch(/^\S+ \d+\.\d+\.\d+ \(Apache-2\.0\)/);
      expect(section(name), name).toContain('Apache License');
    }
    expect(section('zod')).toMatch(/^zod \d+\.\d+\.\d+ \(MIT\)/);
    expect(section('jose')).toMatch(/^jose \d+\.\d+\.\d+ \(MIT\)/);
    expect(section('zod')).toContain('Permission is hereby granted');
  });
});

async function readBundle(): Promise<string> {
  const chunks = await readdir(join(dirname(CLI), 'chunks'));
  const files = [CLI, ...chunks.map((c) => join(dirname(CLI), 'chunks', c))];
  return (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
}
