// A real npm registry on loopback, for proving the package as users get it: Verdaccio, pinned,
// run by the current LTS Node (it needs 22 or later), with no uplink (nothing is fetched from
// the public registry: whatever an install needs is published to it first).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CURRENT_NODE, ensureCachedPackage, ensureNode } from '../cached-packages.js';
import { diesWithParent } from '../harness/lifetime.js';
import { notInQuickTier } from '../harness/tier.js';
import { scaled } from '../harness/time.js';
import { freePort } from '../nine-router/process.js';

const VERDACCIO_VERSION = '6.10.4';

export interface Registry {
  url: string;
  /** An npmrc that points npm at this registry with a publishing user's token. */
  npmrc: string;
  stop(): Promise<void>;
}

export async function startRegistry(): Promise<Registry> {
  notInQuickTier('a local npm registry (Verdaccio)');
  const root = await ensureCachedPackage({
    name: 'verdaccio',
    version: VERDACCIO_VERSION,
    // verdaccio-audit asks for node-fetch's `cjs` dist-tag, which a registry mirror may lack.
    overrides: { 'verdaccio-audit': { 'node-fetch': '2.7.0' } },
  });
  const node = await ensureNode(CURRENT_NODE);
  const dir = mkdtempSync(join(tmpdir(), 'gtm-registry-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(dir, 'htpasswd')}`,
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: pretty, level: error }',
      '',
    ].join('\n'),
  );
  // It dies with the process that started it, even a killed one (test/harness/lifetime.ts).
  const registry = diesWithParent(node, [
    join(root, 'node_modules', 'verdaccio', 'bin', 'verdaccio'),
    '--config',
    join(dir, 'config.yaml'),
    '--listen',
    `127.0.0.1:${port}`,
  ]);
  const child: ChildProcess = spawn(registry.command, registry.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPing(url, child, () => stderr);
    const token = await addUser(url);
    const npmrc = join(dir, 'npmrc');
    writeFileSync(npmrc, `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    return { url, npmrc, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForPing(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + scaled(60_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}): ${stderr().trim()}`);
    const ok = await fetch(`${url}/-/ping`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`verdaccio did not answer at ${url} within ${scaled(60)} s: ${stderr().trim()}`);
}

/** Registers a user (what `npm adduser` does) and returns its token. */
async function addUser(url: string): Promise<string> {
  const name = 'publisher';
  const res = await fetch(`${url}/-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password: 'publisher-password' }),
  });
  const body = (await res.json()) as { token?: string };
  if (!res.ok || !body.token) throw new Error(`verdaccio refused a new user: HTTP ${res.status}`);
  return body.token;
}
