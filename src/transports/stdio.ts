import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createServer } from '../mcp/create-server.js';
import { closeRuntime, type Runtime } from '../runtime.js';
import { LineTransport } from './stdio-transport.js';

/**
 * Serves MCP over stdin/stdout, in whichever era the client opens with: `initialize` (2025) or
 * `server/discover` and per-request envelopes (2026-07-28); the SDK's serveStdio pins one server
 * to the connection once its era is known. stdout carries JSON-RPC only; the process exits 0 when
 * stdin closes (the client went away) or on SIGINT/SIGTERM.
 */
export async function runStdio(runtime: Runtime): Promise<void> {
  const transport = new LineTransport(process.stdin, process.stdout, runtime.log);
  const connection = serveStdio(() => createServer(runtime), {
    transport,
    onerror: (error) => runtime.log.debug(`stdio: ${error.message}`),
  });
  let closing = false;
  const shutdown = async (reason: string) => {
    if (closing) return;
    closing = true;
    runtime.log.debug(`shutting down (${reason})`);
    // Let a response already written reach the pipe before the process ends.
    setTimeout(() => process.exit(0), 2_000).unref();
    await connection.close().catch(() => undefined);
    await closeRuntime(runtime);
    process.exit(0);
  };
  process.stdin.on('end', () => void shutdown('stdin closed'));
  process.stdin.on('close', () => void shutdown('stdin closed'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // A client that vanishes makes stdout writes fail with EPIPE: that is a shutdown, not a crash.
  process.stdout.on('error', () => void shutdown('stdout closed'));
  runtime.log.info(
    `ready on stdio; service ${runtime.config.baseUrl}${runtime.config.apiKey ? '' : ' (no API key set)'}`,
  );
}
