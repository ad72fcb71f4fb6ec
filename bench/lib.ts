import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';

export const ROOT = join(import.meta.dirname, '..');
export const BENCH_TMP = join(ROOT, '.tmp', 'bench');

/** Bundles the minimal SDK server into one file, as the baseline the goals are stated against. */
export function bundleMinimalServer(): Promise<string> {
  return bundleBenchServer('minimal-server');
}

/**
 * Bundles `bench/<name>.ts` into one file (undici, like in dist/, stays external: it is loaded
 * from node_modules).
 */
export async function bundleBenchServer(name: 'minimal-server' | 'forwarding-server'): Promise<string> {
  await mkdir(BENCH_TMP, { recursive: true });
  const outfile = join(BENCH_TMP, `${name}.mjs`);
  await build({
    entryPoints: [join(ROOT, `bench/${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['undici'],
    outfile,
    logLevel: 'error',
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
  });
  return outfile;
}

/** The reference service as the servers see it: a URL and a key. */
export interface BenchService {
  url: string;
  apiKey: string;
  close(): Promise<void>;
}

/**
 * Runs the reference service in a process of its own, as a gateway is: a direct call from the
 * bench then crosses processes just as the servers' calls do.
 */
export async function startReferenceProcess(): Promise<BenchService> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/reference-service/main.ts', '--port', '0'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the reference service exited (${code})`)));
    child.stdout.setEncoding('utf8').once('data', resolve);
  });
  const match = /listening on (\S+) \(key: (\S+)\)/.exec(line);
  if (!match) throw new Error(`unexpected output from the reference service: ${line}`);
  child.removeAllListeners('exit');
  return {
    url: match[1]!,
    apiKey: match[2]!,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface StartSample {
  ms: number;
  peakRssKiB: number;
}

/**
 * A ledger folder of the bench's own, in a temporary folder: a bench never bills into the ledger
 * of the user running it (which may be another version's, and would refuse the calls).
 */
export function benchLedgerDir(): string {
  return mkdtempSync(join(tmpdir(), 'gtm-bench-ledger-'));
}

/** Spawns `script` over stdio and times spawn -> initialize -> tools/list; reads peak RSS after. */
export async function startAndList(
  script: string,
  env: Record<string, string> = {},
): Promise<StartSample & { client: Client; listBytes: number; pid: number | null }> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script],
    env: {
      PATH: process.env.PATH ?? '',
      GATEWAY_LOG_LEVEL: 'error',
      GATEWAY_LEDGER_DIR: benchLedgerDir(),
      ...env,
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  const list = await client.listTools();
  const ms = performance.now() - started;
  const pid = transport.pid;
  const peakRssKiB = pid ? readPeakRss(pid) : Number.NaN;
  return { ms, peakRssKiB, client, pid, listBytes: Buffer.byteLength(JSON.stringify(list)) };
}

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (Linux; clock
 * ticks of 10 ms, so read it across many calls). NaN where there is no /proc.
 */
export function cpuMs(pid: number | null): number {
  if (!pid) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

function readPeakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The value at fraction `q` of the way through the sorted values (0.5: the median, 0.99: p99). */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
}

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}×`;
}
