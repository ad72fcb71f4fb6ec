import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { synthesizeAudio } from '../reference-service/index.js';
import { PROJECT_ROOT, structuredOf, textOf } from './harness.js';
import { scaled } from './time.js';

export const MiB = 1024 * 1024;

/** The resident set size of a process, from /proc/<pid>/status (Linux), in bytes. */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kib) * 1024;
}

export function formatMiB(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

/** Environment that preloads the GC probe into a spawned server (see gc-probe.cjs). */
export const GC_PROBE_ENV = {
  NODE_OPTIONS: `--require ${join(PROJECT_ROOT, 'test/harness/gc-probe.cjs')}`,
} as const;

export interface LiveMemory {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

/** Asks a server started with GC_PROBE_ENV for a full GC and returns its memory right after. */
export async function liveMemory(
  server: { pid: number; stderr(): string },
  timeoutMs = 5_000,
): Promise<LiveMemory> {
  const reports = () => server.stderr().match(/^gc-probe .*$/gm) ?? [];
  const before = reports().length;
  process.kill(server.pid, 'SIGUSR2');
  const deadline = Date.now() + scaled(timeoutMs);
  while (reports().length === before) {
    if (Date.now() > deadline) throw new Error(`no gc-probe report within ${scaled(timeoutMs)} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return JSON.parse((reports().at(-1) as string).slice('gc-probe '.length)) as LiveMemory;
}

/** Samples a process's RSS every `everyMs` until stopped; `peak` includes a last sample at stop. */
export function sampleResident(pid: number, everyMs = 50): { stop(): { peak: number; samples: number } } {
  let peak = residentBytes(pid);
  let samples = 1;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, residentBytes(pid));
      samples += 1;
    } catch {
      // The process exited; the test's own assertions will say so.
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, residentBytes(pid));
      return { peak, samples: samples + 1 };
    },
  };
}

/** Resolves once RSS has not moved by more than `slack` bytes across `window` samples 100 ms apart. */
export async function settledResident(
  pid: number,
  window = 5,
  slack = MiB,
  timeoutMs = 5_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const recent: number[] = [];
  for (;;) {
    recent.push(residentBytes(pid));
    if (recent.length > window) recent.shift();
    const settled = recent.length === window && Math.max(...recent) - Math.min(...recent) <= slack;
    if (settled || Date.now() > deadline) return recent.at(-1) as number;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface MixedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Why the result is wrong, or null when it is what the reference service must produce. */
  problem(result: CallToolResult): string | null;
}

const FETCH_PART = 2_000;
const LONG_PAGE_CHARS = 50_000;

/**
 * Call number `i` of a mix of six tools, each with arguments unique to `i` and an exact
 * expectation, so a result crossed with another call's (a session mix-up) is caught too.
 * `jobId` is a finished video job.
 */
export function mixedCall(i: number, jobId: string): MixedCall {
  const expect = (ok: boolean, what: string) => (ok ? null : what);
  switch (i % 6) {
    case 0:
      return {
        name: 'web_search',
        arguments: { query: `load ${i}`, max_results: 3 },
        problem: (r) => {
          const { results } = structuredOf<{ results: { title: string }[] }>(r);
          return expect(results?.length === 3 && results[0]?.title === `Result 1 for load ${i}`, 'search');
        },
      };
    case 1: {
      // Like an agent reading pages: each page is fetched once, then paged through four more
      // times from the cache, and older pages fall out of the 32-entry cache as new ones come.
      const fetchNumber = Math.floor(i / 6);
      const start = (fetchNumber % 5) * FETCH_PART;
      const url = `https://example.com/long-${Math.floor(fetchNumber / 5)}`;
      return {
        name: 'web_fetch',
        arguments: { url, max_length: FETCH_PART, start_index: start },
        problem: (r) => {
          const page = structuredOf<{
            start_index: number;
            end_index: number;
            next_start_index: number;
            total_length: number;
          }>(r);
          // Parts end at a line break, so a part is at most (not exactly) max_length long.
          return expect(
            page?.start_index === start &&
              page.end_index > start &&
              page.end_index <= start + FETCH_PART &&
              page.next_start_index === page.end_index &&
              page.total_length > LONG_PAGE_CHARS,
            'fetch page',
          );
        },
      };
    }
    case 2:
      return {
        name: 'list_models',
        arguments: i % 12 === 2 ? {} : { capability: 'chat' },
        problem: (r) => {
          const out = structuredOf<{ models: { id: string }[] }>(r);
          return expect(out?.models?.some((m) => m.id === 'openai/gpt-4o-mini') === true, 'model list');
        },
      };
    case 3:
      return {
        name: 'ask_model',
        arguments: { prompt: `question ${i}`, max_output_tokens: 16 },
        problem: (r) => expect(structuredOf<{ text: string }>(r)?.text === `Echo: question ${i}`, 'answer'),
      };
    case 4:
      return {
        name: 'video_status',
        arguments: { job_id: jobId, wait_seconds: 0 },
        problem: (r) => {
          const out = structuredOf<{ job_id: string; status: string; video_url: string | null }>(r);
          return expect(
            out?.job_id === jobId && out.status === 'done' && Boolean(out.video_url),
            'video status',
          );
        },
      };
    default: {
      const text = `spoken line ${i}`;
      return {
        name: 'audio_speech',
        arguments: { text },
        problem: (r) => {
          const out = structuredOf<{ bytes: number; file_path: string }>(r);
          return expect(
            out?.bytes === synthesizeAudio(text, 'mp3').length && Boolean(out.file_path),
            'speech',
          );
        },
      };
    }
  }
}

/** Runs one call; returns a description of what went wrong, or null. Never throws. */
export async function runMixedCall(
  client: Client,
  call: MixedCall,
  timeoutMs = 60_000,
): Promise<string | null> {
  try {
    const result = (await client.callTool({ name: call.name, arguments: call.arguments }, undefined, {
      timeout: scaled(timeoutMs),
    })) as CallToolResult;
    if (result.isError) return `${call.name} failed: ${textOf(result)}`;
    if (!textOf(result)) return `${call.name} returned no text`;
    const problem = call.problem(result);
    return problem
      ? `${call.name}: unexpected ${problem}: ${JSON.stringify(result.structuredContent)}`
      : null;
  } catch (error) {
    return `${call.name} threw: ${(error as Error).message}`;
  }
}

/** How many of calls first..first+count-1 of the mix go to `tool`. */
export function callsTo(tool: string, first: number, count: number): number {
  let n = 0;
  for (let i = first; i < first + count; i++) if (mixedCall(i, '').name === tool) n += 1;
  return n;
}
