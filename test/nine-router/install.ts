// Installs the real gateway, 9router, pinned, into a cache of its own outside node_modules, once
// per machine. Its install scripts only build optional native parts (better-sqlite3, a tray icon),
// so they are skipped; the published tarball lacks sql.js's WebAssembly file, which is taken from
// the sql.js package of the same version.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const NINE_ROUTER_VERSION = '0.5.69';
const SQL_JS_VERSION = '1.14.2';

const run = promisify(execFile);

/** Where the install lives: `NINE_ROUTER_CACHE`, else `$XDG_CACHE_HOME` or `~/.cache`. */
export function cacheDir(): string {
  const base = process.env.NINE_ROUTER_CACHE ?? process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'gateway-tools-mcp', `9router-${NINE_ROUTER_VERSION}`);
}

/** The package's `app/` folder (the Next.js server 9router's own launcher starts). */
function appDir(root: string): string {
  return join(root, 'node_modules', '9router', 'app');
}

const WASM = ['node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'];

function isComplete(root: string): boolean {
  return existsSync(join(root, 'installed')) && existsSync(join(appDir(root), ...WASM));
}

async function npm(args: string[], cwd: string): Promise<void> {
  await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    timeout: 240_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Makes sure 9router is installed and returns its `app/` folder. The install goes to a scratch
 * folder beside the cache and is renamed into place when complete, so an interrupted install is
 * never mistaken for a good one. Throws an Error with one line saying what failed.
 */
export async function ensureNineRouter(): Promise<string> {
  const root = cacheDir();
  if (isComplete(root)) return appDir(root);
  const parent = join(root, '..');
  mkdirSync(parent, { recursive: true });
  const scratch = mkdtempSync(join(parent, '.install-'));
  try {
    writePackageJson(scratch);
    await npm(['install', '--ignore-scripts', `9router@${NINE_ROUTER_VERSION}`], scratch);
    await npm(['pack', `sql.js@${SQL_JS_VERSION}`], scratch);
    await run('tar', ['xzf', `sql.js-${SQL_JS_VERSION}.tgz`, 'package/dist/sql-wasm.wasm'], { cwd: scratch });
    copyFileSync(join(scratch, 'package', 'dist', 'sql-wasm.wasm'), join(appDir(scratch), ...WASM));
    rmSync(join(scratch, 'package'), { recursive: true, force: true });
    rmSync(join(scratch, `sql.js-${SQL_JS_VERSION}.tgz`), { force: true });
    copyFileSync(join(scratch, 'package.json'), join(scratch, 'installed'));
    rmSync(root, { recursive: true, force: true });
    renameSync(scratch, root);
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`could not install 9router@${NINE_ROUTER_VERSION} into ${root}: ${firstLine(error)}`);
  }
  return appDir(root);
}

function writePackageJson(dir: string): void {
  const manifest = { name: 'nine-router-cache', private: true, description: 'the real gateway, for tests' };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
}

function firstLine(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  const text = (e.stderr?.trim() || e.message || String(error))
    .split('\n')
    .find((l) => l.trim() && !/^npm warn/i.test(l));
  return text?.trim() ?? 'unknown error';
}
