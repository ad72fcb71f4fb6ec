/**
 * `npm run demo`: the Node.js version first, as every entry of the package checks it (an older
 * Node fails later with a message that names nothing), then the session (demo-session.ts).
 */
import { tooOldNode } from '../src/lib/node-version.js';

const tooOld = tooOldNode(process.versions.node);
if (tooOld) {
  process.stderr.write(`${tooOld}\n`);
  process.exitCode = 2;
} else {
  await import('./demo-session.js');
}
