import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseCommandLine } from '../../src/config/config.js';
import { createServer } from '../../src/mcp/create-server.js';
import { closeRuntime, createRuntime, type Runtime } from '../../src/runtime.js';
import { diesWithParent } from './lifetime.js';
import { scaled } from './time.js';

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
export const CLI = join(PROJECT_ROOT, 'dist/cli.js');
/**
 * The Node.js that runs a spawned server: the one running the tests, or SERVER_NODE (CI runs the
 * tests of the server as users start it on the oldest supported Node and on the current LTS).
 */
export const SERVER_NODE = process.env.SERVER_NODE || process.execPath;

/**
 * What a spawned server gets besides a test's own settings: PATH, and a ledger of billed calls of
 * its own (a test that shares one between processes names it), never the user's.
 */
export function serverEnvDefaults(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-') };
}

export interface Connected {
  client: Client;
  runtime: Runtime;
  close(): Promise<void>;
}

/** A fresh temporary working directory (output dir and input roots default under it). */
export function tempDir(prefix = 'gtm-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

const createdDirs: string[] = [];

/** Removes every temporary directory made so far (run after each test file: downloads are big). */
export function removeTempDirs(): void {
  for (const dir of createdDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A plain SDK Client, as most tests use; a test of roots, elicitation or logging brings its own. */
export function testClient(): Client {
  return new Client({ name: 'test-client', version: '1.0.0' });
}

/** Connects an SDK Client to a server built in this process, over the in-memory transport. */
export async function connectInMemory(
  env: Record<string, string>,
  argv: string[] = [],
  client: Client = testClient(),
): Promise<Connected> {
  const { config } = parseCommandLine(
    argv,
    {
      GATEWAY_LOG_LEVEL: 'error',
      ...env,
      GATEWAY_LEDGER_DIR: env.GATEWAY_LEDGER_DIR ?? tempDir('gtm-ledger-'),
    },
    env.CWD ?? tempDir(),
  );
  const runtime = createRuntime(config);
  const server = createServer(runtime);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return {
    client,
    runtime,
    async close() {
      await client.close();
      await server.close();
      await closeRuntime(runtime);
    },
  };
}

export interface Spawned {
  client: Client;
  /** The server process id (null once it has exited). */
  pid(): number | null;
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Spawns the built dist/cli.js and connects an SDK Client to it over stdio. The server dies with
 * the process that spawned it (lifetime.ts), as do the servers of spawnServer() and runCli().
 */
export async function connectStdio(
  env: Record<string, string>,
  args: string[] = [],
  client: Client = testClient(),
): Promise<Spawned> {
  const transport = new StdioClientTransport({
    ...diesWithParent(SERVER_NODE, [CLI, ...args]),
    env: { ...serverEnvDefaults(), GATEWAY_LOG_LEVEL: 'info', ...env },
    cwd: env.CWD ?? tempDir(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await client.connect(transport);
  return { client, pid: () => transport.pid, stderr: () => stderr, close: () => client.close() };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI to completion (or until `input` is written and stdin closed); SIGKILLs it
 * after `timeoutMs` (on a quiet machine; scaled by TEST_TIME_FACTOR).
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
  timeoutMs = 15_000,
): Promise<RunResult> {
  const server = spawnServer(env, args);
  if (input !== undefined) server.child.stdin.end(input);
  const limit = scaled(timeoutMs);
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      server.child.kill('SIGKILL');
      reject(new Error(`CLI did not exit within ${limit} ms; stderr: ${server.stderr()}`));
    }, limit);
    server.child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout: server.stdout(), stderr: server.stderr() });
    });
  });
}

/** The text content of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content ?? [];
  return content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

export function structuredOf<T = Record<string, unknown>>(result: unknown): T {
  return (result as CallToolResult).structuredContent as T;
}

export interface RawServer {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Resolves once stderr contains `text` (or rejects after `timeoutMs`, scaled by TEST_TIME_FACTOR). */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
}

/** Spawns the built CLI with raw pipes, for tests of stdout purity, signals and exit codes. */
export function spawnServer(env: Record<string, string>, args: string[] = []): RawServer {
  const { command, args: argv } = diesWithParent(SERVER_NODE, [CLI, ...args]);
  const child = spawn(command, argv, {
    env: { ...serverEnvDefaults(), ...env },
    cwd: env.CWD ?? tempDir(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // A server that exits before reading what a test writes to it (a refused setting, --help, a
  // signal) closes its stdin: the write then fails with EPIPE, which says nothing the exit code and
  // output do not, and on a busy machine comes or not by timing alone.
  child.stdin.on('error', () => undefined);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolvePromise) =>
    child.on('exit', (code) => resolvePromise(code)),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async waitForStderr(text, timeoutMs = 10_000) {
      const deadline = Date.now() + scaled(timeoutMs);
      while (!stderr.includes(text)) {
        if (Date.now() > deadline) throw new Error(`stderr never showed "${text}": ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Whether a process with this id is still running (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the built server over stdio as a client does, with `node` and `env` only, expecting it
 * to stop before the client connects; gives what the client's log (its stderr) got.
 */
export async function failedStdioStart(node: string, env: Record<string, string>): Promise<string> {
  const transport = new StdioClientTransport({
    command: node,
    args: [CLI],
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd: tempDir('gtm-failed-start-'),
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const client = testClient();
  const connected = await client.connect(transport, { timeout: scaled(10_000) }).then(
    () => true,
    () => false,
  );
  if (connected) throw new Error(`the server started, and should not have: ${log}`);
  await client.close().catch(() => {});
  return log;
}
