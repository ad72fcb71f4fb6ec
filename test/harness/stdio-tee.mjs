// Runs a stdio MCP server and records the conversation: `node stdio-tee.mjs <log> <command> [args…]`.
// Everything passes through unchanged; each line the client writes is appended to <log> as
// `{"from":"client","ms":…,"line":…}`, each line the server writes as `{"from":"server",…}`
// (`ms`: when it passed, in milliseconds since this process started), and the server's stderr goes
// to <log>.stderr. A test reads the log to see which protocol era the client opened with
// (`server/discover` or `initialize`), how soon the server answered, and what was said.
import { spawn } from 'node:child_process';
import { appendFileSync, createWriteStream } from 'node:fs';

const [log, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
child.stderr.pipe(createWriteStream(`${log}.stderr`));

function record(from, stream) {
  let pending = '';
  stream.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines)
      if (line.trim()) {
        appendFileSync(log, `${JSON.stringify({ from, ms: Math.round(performance.now()), line })}\n`);
      }
  });
}

record('client', process.stdin);
record('server', child.stdout);
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
