import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';

export const ROOT = join(import.meta.dirname, '..');
export const BENCH_TMP = join(ROOT, '.tmp', 'bench');

/** Bundles the minimal SDK server into one file, as the baseline the goals are stated against. */
export async function bundleMinimalServer(): Promise<string> {
  await mkdir(BENCH_TMP, { recursive: true });
  const outfile = join(BENCH_TMP, 'minimal-server.mjs');
  await build({
    entryPoints: [join(ROOT, 'bench/minimal-server.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
  });
  return outfile;
}

export interface StartSample {
  ms: number;
  peakRssKiB: number;
}

/** Spawns `script` over stdio and times spawn -> initialize -> tools/list; reads peak RSS after. */
export async function startAndList(
  script: string,
  env: Record<string, string> = {},
): Promise<StartSample & { client: Client; listBytes: number }> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script],
    env: { PATH: process.env.PATH ?? '', GATEWAY_LOG_LEVEL: 'error', ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  const list = await client.listTools();
  const ms = performance.now() - started;
  const pid = transport.pid;
  const peakRssKiB = pid ? readPeakRss(pid) : Number.NaN;
  return { ms, peakRssKiB, client, listBytes: Buffer.byteLength(JSON.stringify(list)) };
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

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}×`;
}
