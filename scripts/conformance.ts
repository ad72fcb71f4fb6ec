/**
 * `npm run conformance`: runs the MCP conformance suite (@modelcontextprotocol/conformance) against
 * the built server over Streamable HTTP, in session mode and in stateless mode.
 *
 * The suite needs Node >= 22. When this Node is older, a Node 22 binary comes from the npm registry
 * (the node-<platform>-<arch> package) into .tmp/conformance-tools/, next to the pinned suite; the
 * machine's own Node is left alone. Not part of `npm test`: it downloads things.
 *
 * Scenarios: the generic ones that apply to this server, logging and resource listing included.
 * The others need fixture tools, prompts or resources this server does not have by design
 * (test_simple_text, test_reconnection, test://static-text, completion, sampling, ...): its
 * resources are the files its tools saved.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startReferenceService } from '../test/reference-service/index.js';

const root = join(import.meta.dirname, '..');
const toolsDir = join(root, '.tmp/conformance-tools');
const resultsDir = join(root, '.tmp/conformance-results');
const baseline = join(root, 'scripts/conformance-baseline.yml');
const SUITE_VERSION = '0.1.16';
const NODE_MAJOR = 22;

const RUNS: { mode: string; args: string[]; scenarios: string[] }[] = [
  {
    mode: 'sessions',
    args: [],
    scenarios: [
      'server-initialize',
      'ping',
      'tools-list',
      'logging-set-level',
      'resources-list',
      'server-sse-multiple-streams',
      'dns-rebinding-protection',
    ],
  },
  // No session id in stateless mode, so the multiple-streams scenario (which needs one) does not apply.
  {
    mode: 'stateless',
    args: ['--stateless'],
    scenarios: [
      'server-initialize',
      'ping',
      'tools-list',
      'logging-set-level',
      'resources-list',
      'dns-rebinding-protection',
    ],
  },
];

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

/** A Node >= 22 to run the suite with, and the suite's entry point, installing both if needed. */
async function tools(): Promise<{ node: string; suite: string }> {
  const suite = join(toolsDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const ownNodeWillDo = Number(process.versions.node.split('.')[0]) >= NODE_MAJOR;
  const nodePackage = `node-${process.platform}-${process.arch}`;
  const node = ownNodeWillDo
    ? process.execPath
    : join(toolsDir, 'node_modules', nodePackage, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(suite) || !existsSync(node)) {
    const packages = [`@modelcontextprotocol/conformance@${SUITE_VERSION}`];
    if (!ownNodeWillDo) packages.push(`${nodePackage}@${NODE_MAJOR}`);
    console.log(`installing ${packages.join(' and ')} into ${toolsDir}`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const code = await run(npm, [
      'install',
      '--prefix',
      toolsDir,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      ...packages,
    ]);
    if (code !== 0 || !existsSync(suite) || !existsSync(node)) {
      throw new Error(`could not install ${packages.join(', ')} (npm exit ${code})`);
    }
  }
  return { node, suite };
}

async function startServer(
  env: NodeJS.ProcessEnv,
  args: string[],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [join(root, 'dist/cli.js'), '--transport', 'http', '--port', '0', ...args],
    {
      env,
      stdio: ['ignore', 'inherit', 'pipe'],
    },
  );
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 15_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], child });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

const { node, suite } = await tools();
const service = await startReferenceService();
const env = {
  PATH: process.env.PATH ?? '',
  GATEWAY_BASE_URL: service.url,
  GATEWAY_API_KEY: service.apiKey,
  GATEWAY_LOG_LEVEL: 'info',
};
const outcomes: { mode: string; scenario: string; ok: boolean }[] = [];
try {
  for (const { mode, args, scenarios } of RUNS) {
    const server = await startServer(env, args);
    console.log(`\n##### ${mode}: ${server.url}/mcp`);
    for (const scenario of scenarios) {
      const code = await run(node, [
        suite,
        'server',
        '--url',
        `${server.url}/mcp`,
        '--scenario',
        scenario,
        '--expected-failures',
        baseline,
        '--output-dir',
        join(resultsDir, mode),
      ]);
      outcomes.push({ mode, scenario, ok: code === 0 });
    }
    const exit = await stop(server.child);
    outcomes.push({ mode, scenario: 'graceful shutdown (exit 0)', ok: exit === 0 });
  }
} finally {
  await service.close();
}

console.log('\n##### conformance summary');
for (const o of outcomes) console.log(`${o.ok ? 'pass' : 'FAIL'}  ${o.mode.padEnd(9)}  ${o.scenario}`);
const failed = outcomes.filter((o) => !o.ok).length;
console.log(`${outcomes.length - failed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
