// Runs one row of the fault matrix: one reference service and one server per tool, the faults one
// after another, each followed by a healthy call to the same server.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';
import { connectEra, MODERN } from '../eras.js';
import { connectInMemory, connectStdio, textOf } from '../harness.js';
import { scaled } from '../time.js';
import { MAX_RETRIES, type MatrixFault, messageProblems, SECRET, TIMEOUT_MS } from './faults.js';
import type { Call, ToolCase } from './tools.js';

/** In memory (2025 era), or the built server over stdio for a client of either era. */
export type Transport = 'in-memory' | 'stdio' | 'stdio-2026';

export interface Cell {
  fault: string;
  /** `n/a`: the contract defines this answer as a normal one on this route. */
  verdict: 'pass' | 'fail' | 'n/a';
  problems: string[];
  /** The failure text the agent saw. */
  message: string;
  elapsedMs: number;
  /** Requests that reached the faulted route during the failing call. */
  attempts: number;
}

export interface Row {
  label: string;
  boundMs: number;
  cells: Cell[];
  /** Anything the server wrote to stderr (stdio only), to check for the key. */
  stderr: string;
}

/** Room for a loaded 2-core machine: scheduling, process start-up, the healthy call after. */
const MARGIN_MS = 5_000;
/** The longest wait between two attempts (Retry-After: 1, or backoff up to 350 ms). */
const RETRY_WAIT_MS = 1_000;

/** When a failing call must have ended: every attempt timing out, plus the waits between them. */
export function boundOf(tc: ToolCase): number {
  const attempts = tc.sendOnce ? 1 : MAX_RETRIES + 1;
  return attempts * (tc.timeoutFactor ?? 1) * TIMEOUT_MS + MAX_RETRIES * RETRY_WAIT_MS + MARGIN_MS;
}

interface Server {
  callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult>;
  clearCatalog(): void;
  stderr(): string;
  close(): Promise<void>;
}

async function startServer(tc: ToolCase, service: ReferenceService, transport: Transport): Promise<Server> {
  const env = {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: SECRET,
    GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
    GATEWAY_MAX_RETRIES: String(MAX_RETRIES),
    ...tc.env,
  };
  if (transport === 'stdio-2026') {
    const client = await connectEra(MODERN, { stdio: { ...env, GATEWAY_LOG_LEVEL: 'debug' } });
    return {
      callTool: (name, args, timeoutMs) =>
        client.callTool(name, args, { signal: AbortSignal.timeout(timeoutMs) }),
      clearCatalog: () => undefined,
      stderr: client.stderr,
      close: client.close,
    };
  }
  if (transport === 'stdio') {
    const spawned = await connectStdio({ ...env, GATEWAY_LOG_LEVEL: 'debug' });
    return {
      callTool: callOf(spawned.client),
      clearCatalog: () => undefined,
      stderr: spawned.stderr,
      close: spawned.close,
    };
  }
  const conn = await connectInMemory(env);
  return {
    callTool: callOf(conn.client),
    clearCatalog: () => conn.runtime.service.catalog.clear(),
    stderr: () => '',
    close: conn.close,
  };
}

/** A tool call through a 2025-era (v1 SDK) client, given up after `timeout`. */
function callOf(client: Client): Server['callTool'] {
  return async (name, args, timeout) =>
    (await client.callTool({ name, arguments: args }, undefined, { timeout })) as CallToolResult;
}

function caller(server: Server, tc: ToolCase, timeoutMs: number): Call {
  return async (tool, args) => {
    if (tc.freshCatalog) server.clearCatalog();
    const result = await server.callTool(tool, args, timeoutMs);
    return {
      isError: result.isError === true,
      text: textOf(result),
      structured: result.structuredContent,
      raw: JSON.stringify(result),
    };
  };
}

export async function runRow(
  tc: ToolCase,
  faults: readonly MatrixFault[],
  transport: Transport = 'in-memory',
): Promise<Row> {
  const boundMs = boundOf(tc);
  // The bound the page states is the quiet machine's; a busy one (TEST_TIME_FACTOR) gets more margin.
  const allowedMs = boundMs - MARGIN_MS + scaled(MARGIN_MS);
  const service = await startReferenceService({ apiKey: SECRET });
  const server = await startServer(tc, service, transport);
  // The client gives up well after the bound, so a call that hangs is a failed cell, not a stuck test.
  const call = caller(server, tc, allowedMs + 2_000);
  const cells: Cell[] = [];
  try {
    const prepared = (await tc.prepare?.(service, call)) ?? {};
    let n = 0;
    for (const f of faults) {
      if (tc.notInScope?.includes(f.id)) {
        cells.push({ fault: f.id, verdict: 'n/a', problems: [], message: '', elapsedMs: 0, attempts: 0 });
        continue;
      }
      const logged = server.stderr().length;
      const cell = await runCell(tc, f, service, call, prepared, n, allowedMs);
      if (server.stderr().slice(logged).includes(SECRET)) {
        cell.problems.push('the server log leaks the key');
        cell.verdict = 'fail';
      }
      cells.push(cell);
      n += 2;
    }
  } finally {
    await server.close();
    await service.close();
  }
  return { label: tc.label, boundMs, cells, stderr: server.stderr() };
}

async function runCell(
  tc: ToolCase,
  f: MatrixFault,
  service: ReferenceService,
  call: Call,
  prepared: Record<string, string>,
  n: number,
  boundMs: number,
): Promise<Cell> {
  const problems: string[] = [];
  service.clearFaults();
  service.resetCounters();
  // On every attempt, so retries meet the same fault.
  service.inject(tc.route, { ...f.fault, times: Number.POSITIVE_INFINITY });
  const started = performance.now();
  const failed = await call(tc.tool, tc.args(n, prepared)).catch((error: unknown) => ({
    isError: false,
    text: `(no result: ${error instanceof Error ? error.message : String(error)})`,
    structured: undefined,
    raw: '',
  }));
  const elapsedMs = performance.now() - started;
  const attempts = service.counters[tc.route];
  const untouched = tc.untouched ? service.counters[tc.untouched] : 0;
  service.clearFaults();

  if (!failed.isError) problems.push('not an isError result');
  if (elapsedMs > boundMs) problems.push(`took ${Math.round(elapsedMs)} ms (bound ${boundMs} ms)`);
  problems.push(...messageProblems(failed.text, f));
  if (failed.raw.includes(SECRET)) problems.push('leaks the key in the result');
  if (attempts < 1) problems.push('the fault never reached the service');
  if (tc.sendOnce && attempts !== 1) problems.push(`sent ${attempts} times (must be once)`);
  if (!tc.sendOnce && attempts > MAX_RETRIES + 1) problems.push(`sent ${attempts} times`);
  if (untouched > 0) problems.push(`called ${tc.untouched} ${untouched} times after a failed lookup`);

  const healthy = await call(tc.tool, tc.args(n + 1, prepared)).catch(() => null);
  if (!healthy || healthy.isError) {
    problems.push(`the next call failed: ${healthy ? healthy.text.slice(0, 200) : 'no result'}`);
  }
  return {
    fault: f.id,
    verdict: problems.length === 0 ? 'pass' : 'fail',
    problems,
    message: failed.text,
    elapsedMs,
    attempts,
  };
}
