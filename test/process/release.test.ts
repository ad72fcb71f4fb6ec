import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMcpConfigForManifest, type McpbManifestAny } from '@anthropic-ai/mcpb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { differences } from '../../scripts/release/server-json.mjs';
import { PROJECT_ROOT, SERVER_NODE, structuredOf, tempDir, textOf } from '../harness/harness.js';
import { diesWithParent } from '../harness/lifetime.js';
import { scaled } from '../harness/time.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

// `npm run release` end to end: the script runs as users run it (into a temporary directory), and
// each artifact is checked the way its consumer reads it: npm's tarball listing, the official
// mcpb CLI and the host-side config resolution of @anthropic-ai/mcpb, the registry's schema.

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));
const MCPB_CLI = join(PROJECT_ROOT, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js');
const SERVER_SCHEMA = join(PROJECT_ROOT, 'scripts/release/schemas/server.schema.json');
const base = `${pkg.name}-${pkg.version}`;
let out: string;
let gateway: ReferenceService;

beforeAll(() => {
  out = tempDir('gtm-release-');
  execFileSync(process.execPath, ['scripts/release/release.mjs', '--out', out], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}, scaled(120_000));
beforeAll(async () => {
  gateway = await startReferenceService();
});
afterAll(() => gateway?.close());

const mcpb = (...args: string[]) =>
  spawnSync(process.execPath, [MCPB_CLI, ...args], { encoding: 'utf8', cwd: out });

describe('npm run release', () => {
  it('writes the npm tarball, the bundle, server.json and their checksums', () => {
    expect(readdirSync(out).sort()).toEqual(
      [`${base}.mcpb`, `${base}.tgz`, 'SHA256SUMS', 'server.json'].sort(),
    );
    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums).toHaveLength(3);
    for (const line of sums) {
      const [hash, file] = line.split(/\s+/);
      expect(
        createHash('sha256')
          .update(readFileSync(join(out, file!)))
          .digest('hex'),
        file,
      ).toBe(hash);
    }
  });

  it('packs the built server, the README, the docs, the license and the example config, and no sources or tests', () => {
    const files = execFileSync('tar', ['-tzf', join(out, `${base}.tgz`)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        'package/mcp.json.example',
        'package/docs/gateway.md',
        'package/dist/cli.js',
        'package/dist/THIRD-PARTY-NOTICES.md',
      ]),
    );
    expect(
      files.filter(
        (f) => !/^package\/(dist\/|docs\/|package\.json$|README\.md$|LICENSE$|mcp\.json\.example$)/.test(f),
      ),
    ).toEqual([]);
    const packed = JSON.parse(
      execFileSync('tar', ['-xzOf', join(out, `${base}.tgz`), 'package/package.json'], { encoding: 'utf8' }),
    );
    expect(packed).toMatchObject({ name: pkg.name, version: pkg.version, mcpName: pkg.mcpName });
    expect(packed.bin).toEqual({ 'gateway-tools-mcp': 'dist/cli.js' });
    expect(Object.keys(packed.dependencies)).toEqual(['pg', 'undici']);
  });

  it('holds every file its README links to', () => {
    const files = new Set(
      execFileSync('tar', ['-tzf', join(out, `${base}.tgz`)], { encoding: 'utf8' })
        .trim()
        .split('\n'),
    );
    const readme = execFileSync('tar', ['-xzOf', join(out, `${base}.tgz`), 'package/README.md'], {
      encoding: 'utf8',
    });
    const linked = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1] as string)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
    expect(linked.length).toBeGreaterThan(5);
    expect(linked.filter((target) => !files.has(`package/${target.replace(/^\.\//, '')}`))).toEqual([]);
  });
});

describe('the MCP bundle (.mcpb)', () => {
  let dir: string;
  let manifest: McpbManifestAny;
  beforeAll(() => {
    dir = tempDir('gtm-mcpb-');
    const unpacked = mcpb('unpack', join(out, `${base}.mcpb`), dir);
    expect(unpacked.status, unpacked.stderr).toBe(0);
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  });

  it('passes the official mcpb validator, which refuses a broken manifest', () => {
    const valid = mcpb('validate', join(dir, 'manifest.json'));
    expect(valid.status, valid.stdout + valid.stderr).toBe(0);
    const broken = join(tempDir('gtm-mcpb-broken-'), 'manifest.json');
    const { author: _, ...withoutAuthor } = manifest;
    writeFileSync(broken, JSON.stringify({ ...withoutAuthor, user_config: { x: { type: 'colour' } } }));
    expect(mcpb('validate', broken).status).not.toBe(0);
  });

  it('declares the Node.js it needs, as package.json does', () => {
    expect(pkg.engines.node).toMatch(/^>=\d+\.\d+\.\d+$/);
    expect(manifest.compatibility?.runtimes?.node).toBe(pkg.engines.node);
  });

  it('asks for the gateway URL, the key (as a secret) and the folders, and lists every tool', () => {
    expect(manifest).toMatchObject({ name: pkg.name, version: pkg.version, server: { type: 'node' } });
    expect(existsSync(join(dir, manifest.server.entry_point))).toBe(true);
    expect(existsSync(join(dir, 'node_modules/undici/package.json'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules/pg/package.json'))).toBe(true);
    expect(manifest.user_config).toMatchObject({
      base_url: { type: 'string', default: 'http://127.0.0.1:20128', required: true },
      api_key: { type: 'string', sensitive: true, required: false },
      output_dir: { type: 'directory', required: true },
      input_dir: { type: 'directory', required: true },
    });
    expect(manifest.tools?.map((t) => t.name)).toEqual([
      'web_search',
      'web_fetch',
      'video_generate',
      'video_edit',
      'video_extend',
      'video_status',
      'audio_speech',
      'audio_transcribe',
      'list_models',
      'ask_model',
      'usage',
    ]);
  });

  it('runs as a host starts it: the settings reach the server, files land in the chosen folder', async () => {
    const outputDir = tempDir('gtm-mcpb-output-');
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: dir,
      systemDirs: { HOME: tempDir(), DESKTOP: tempDir(), DOCUMENTS: tempDir(), DOWNLOADS: tempDir() },
      userConfig: {
        base_url: gateway.url,
        api_key: gateway.apiKey,
        output_dir: outputDir,
        input_dir: tempDir('gtm-mcpb-input-'),
      },
      pathSeparator: '/',
    });
    expect(config?.command).toBe('node');
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        ...diesWithParent(SERVER_NODE, config!.args ?? []), // the host's own Node.js
        // The user's home as the host has it: the ledger of billed calls is made there.
        env: { PATH: process.env.PATH ?? '', HOME: tempDir('gtm-mcpb-home-'), ...config!.env },
        cwd: tempDir(),
        stderr: 'pipe',
      }),
    );
    try {
      const speech = (await client.callTool({
        name: 'audio_speech',
        arguments: { text: 'Bundled.', model: 'openai/tts-1', voice: 'nova' },
      })) as CallToolResult;
      expect(speech.isError, textOf(speech)).toBeFalsy();
      const { file_path } = structuredOf<{ file_path: string }>(speech);
      expect(file_path.startsWith(`${outputDir}/`)).toBe(true);
      expect(gateway.requests.find((r) => r.route === 'speech')?.headers.authorization).toBe(
        `Bearer ${gateway.apiKey}`,
      );
    } finally {
      await client.close();
    }
  });

  it('leaves the key unset, not a placeholder, when the user gives none', async () => {
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: dir,
      systemDirs: {},
      userConfig: { base_url: gateway.url, output_dir: '/out', input_dir: '/in' },
      pathSeparator: '/',
    });
    expect(config?.env).toEqual({
      GATEWAY_BASE_URL: gateway.url,
      GATEWAY_API_KEY: '',
      GATEWAY_OUTPUT_DIR: '/out',
      GATEWAY_INPUT_ROOTS: '/in',
    });
  });
});

describe('server.json for the MCP Registry', () => {
  const server = JSON.parse(readFileSync(join(PROJECT_ROOT, 'server.json'), 'utf8'));
  const ajv = new Ajv.default({ allErrors: true, strict: false });
  addFormats.default(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(SERVER_SCHEMA, 'utf8')));

  it("is valid against the registry's schema, which refuses a broken entry", () => {
    expect(validate(server), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...server, description: 'x'.repeat(101) })).toBe(false);
    expect(validate({ ...server, name: 'no-namespace' })).toBe(false);
  });

  it('keeps its name and versions in step with package.json, and the release carries it', () => {
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.packages).toEqual([
      expect.objectContaining({ registryType: 'npm', identifier: pkg.name, version: pkg.version }),
    ]);
    expect(differences(pkg, server)).toEqual([]);
    expect(differences({ ...pkg, version: '9.9.9' }, server).map(([path]) => path)).toEqual([
      'version',
      'packages[npm].version',
    ]);
    expect(readFileSync(join(out, 'server.json'), 'utf8')).toBe(
      readFileSync(join(PROJECT_ROOT, 'server.json'), 'utf8'),
    );
  });
});
