// Running a real MCP client program (Claude Code, Codex, Gemini CLI) once, non-interactively, with
// a bounded wait, and reading what it and our stdio server said through test/harness/stdio-tee.mjs.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CLI, PROJECT_ROOT, SERVER_NODE } from './harness.js';
import { guardGroup } from './lifetime.js';
import { notInQuickTier } from './tier.js';
import { scaled } from './time.js';

export const STDIO_TEE = join(PROJECT_ROOT, 'test/harness/stdio-tee.mjs');

export interface ClientRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall-clock milliseconds from spawn to exit. */
  ms: number;
  timedOut: boolean;
}

/**
 * Runs the program with stdin closed; SIGKILLs it (and its process group) after `timeoutMs`
 * (scaled by TEST_TIME_FACTOR). The group dies with the run, even a killed one (lifetime.ts).
 */
export function runClient(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<ClientRun> {
  notInQuickTier(`a real MCP client (${command})`);
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid) guardGroup(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, scaled(options.timeoutMs));
  return new Promise((resolve, reject) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Whatever the client left running (its MCP server) goes with it.
      killGroup(child.pid);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** The MCP server entry a client runs: our built CLI under the tee, which writes to `record`. */
export function recordedServer(record: string): { command: string; args: string[] } {
  return { command: SERVER_NODE, args: [STDIO_TEE, record, SERVER_NODE, CLI] };
}

/** One line the tee passed on: who wrote it, and when (ms since the tee started). */
export interface RecordedLine {
  from: 'client' | 'server';
  ms: number;
  line: string;
}

export function recordedLines(record: string): RecordedLine[] {
  if (!existsSync(record)) return [];
  return readFileSync(record, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as RecordedLine);
}

export interface JsonRpcMessage {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
}

/** The JSON-RPC messages one side wrote (the client, by default), in order. */
export function recordedMessages(record: string, from: RecordedLine['from'] = 'client'): JsonRpcMessage[] {
  return recordedLines(record)
    .filter((entry) => entry.from === from)
    .map((entry) => JSON.parse(entry.line) as JsonRpcMessage);
}

/** The era a client opened with: `initialize` and its protocolVersion, or `server/discover`. */
export function openingOf(messages: JsonRpcMessage[]): { method?: string; protocolVersion?: unknown } {
  const first = messages.find((m) => m.method !== undefined);
  const meta = first?.params?._meta as Record<string, unknown> | undefined;
  return {
    method: first?.method,
    protocolVersion: first?.params?.protocolVersion ?? meta?.['io.modelcontextprotocol/protocolVersion'],
  };
}

/**
 * What every real client's run shows: it ended on its own with the model's last words, it listed
 * the server's tools and called web_search once, and that one search reached the gateway with the
 * model's query.
 */
export function expectOneSearch(
  run: ClientRun,
  sent: JsonRpcMessage[],
  gatewayRequests: readonly { route: string; body?: unknown }[],
  expected: { finalText: string; query: string },
): void {
  expect(run.timedOut).toBe(false);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(expected.finalText);
  expect(sent.map((m) => m.method)).toContain('tools/list');
  expect(sent.filter((m) => m.method === 'tools/call').map((m) => m.params?.name)).toEqual(['web_search']);
  const searches = gatewayRequests.filter((r) => r.route === 'search');
  expect(searches).toHaveLength(1);
  expect(searches[0]?.body).toMatchObject({ query: expected.query });
}

/** Plain text of a tool output as a model got it (a string, or content items with `text`). */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output.map((item) => (item as { text?: string }).text ?? JSON.stringify(item)).join('\n');
  }
  return JSON.stringify(output);
}

/** What every scripted model API (fake-anthropic.ts, fake-openai.ts, fake-gemini.ts) keeps. */
export interface FakeModelApi {
  /** The base URL to give the client. */
  url: string;
  /** Every request, in arrival order. */
  requests: { method: string; path: string; body: unknown }[];
  /** Requests to paths the fake does not serve, as "METHOD path". */
  unexpected: string[];
  close(): Promise<void>;
}

/** A request's body, parsed as JSON when it is JSON, else its text (undefined when empty). */
export async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}
