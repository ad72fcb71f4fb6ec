#!/usr/bin/env node
// The entry of every command (the server, doctor, usage). It checks the Node.js version first and
// only then loads the rest: a static import would be linked before any check could run, and on an
// older Node the bundle's built-in modules (node:sqlite) fail with a message that names nothing.
// Stderr, not stdout: over stdio the client shows stderr in its log, and stdout is JSON-RPC's.
import { tooOldNode } from './lib/node-version.js';

const tooOld = tooOldNode(process.versions.node);
if (tooOld) {
  process.stderr.write(`${tooOld}\n`);
  process.exitCode = 2;
} else {
  await import('./main.js');
}
