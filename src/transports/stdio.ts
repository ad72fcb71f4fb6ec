import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { closeRuntime, type Runtime } from '../runtime.js';
import { createServer } from '../server.js';
import { answerUnreadableLines, LineSplitter, MAX_STDIO_LINE_BYTES } from './stdio-input.js';

/**
 * Serves MCP over stdin/stdout. stdout carries JSON-RPC only; the process exits 0 when stdin
 * closes (the client went away) or on SIGINT/SIGTERM.
 */
export async function runStdio(runtime: Runtime): Promise<void> {
  const server = createServer(runtime);
  // The transport reads whole lines from the splitter; it never holds more than one (see stdio-input.ts).
  let onOversize: (bytes: number) => void = () => undefined;
  const lines = process.stdin.pipe(new LineSplitter(MAX_STDIO_LINE_BYTES, (bytes) => onOversize(bytes)));
  const transport = new StdioServerTransport(lines, process.stdout, {
    maxBufferSize: 2 * MAX_STDIO_LINE_BYTES,
  });
  onOversize = answerUnreadableLines(transport, runtime.log);
  let closing = false;
  const shutdown = async (reason: string) => {
    if (closing) return;
    closing = true;
    runtime.log.debug(`shutting down (${reason})`);
    // Let a response already written reach the pipe before the process ends.
    const forceExit = setTimeout(() => process.exit(0), 2_000);
    forceExit.unref();
    await server.close().catch(() => undefined);
    await closeRuntime(runtime);
    process.exit(0);
  };
  process.stdin.on('end', () => void shutdown('stdin closed'));
  process.stdin.on('close', () => void shutdown('stdin closed'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // A client that vanishes makes stdout writes fail with EPIPE: that is a shutdown, not a crash.
  process.stdout.on('error', () => void shutdown('stdout closed'));
  await server.connect(transport);
  runtime.log.info(
    `ready on stdio; service ${runtime.config.baseUrl}${runtime.config.apiKey ? '' : ' (no API key set)'}`,
  );
}
