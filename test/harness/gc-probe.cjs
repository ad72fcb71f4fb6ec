// Preloaded into a spawned server (NODE_OPTIONS=--require) by the memory tests only. On SIGUSR2 it
// runs a full garbage collection and prints the live heap on stderr, so a test can tell a leak
// from garbage V8 simply has not collected yet. It changes nothing else in the server.
const { setFlagsFromString } = require('node:v8');
const { runInNewContext } = require('node:vm');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
setFlagsFromString('--no-expose-gc');

process.on('SIGUSR2', () => {
  gc();
  const { heapUsed, heapTotal, external, arrayBuffers, rss } = process.memoryUsage();
  process.stderr.write(`gc-probe ${JSON.stringify({ heapUsed, heapTotal, external, arrayBuffers, rss })}\n`);
});
