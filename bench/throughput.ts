/**
 * Throughput, which no test holds as a floor (a test's call count is coverage, made however long it
 * takes): calls per second over stdio with the load tests' mix of tools, and of the fuzz's hostile
 * calls in memory, each against a baseline measured in the same run on the same machine.
 */
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { callAndCheck } from '../test/fuzz/harness/checks.js';
import { newStats } from '../test/fuzz/harness/stats.js';
import { toolCalls } from '../test/fuzz/harness/tool-args.js';
import { closeWorld, createWorld } from '../test/fuzz/harness/world.js';
import { mixedCall, runMixedCall } from '../test/harness/load.js';
import { startReferenceService } from '../test/reference-service/index.js';
import { bundleBenchServer, ROOT, startAndList } from './lib.js';

export interface Rate {
  calls: number;
  ms: number;
  perSecond: number;
}

async function rate(calls: number, one: (i: number) => Promise<void>): Promise<Rate> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await one(i);
  const ms = performance.now() - started;
  return { calls, ms, perSecond: (calls * 1000) / ms };
}

export interface StdioLoadResult {
  /** Our server over stdio, the load tests' mix (web_search, web_fetch paging, list_models, ask_model, video_status, audio_speech). */
  mixed: Rate;
  /** Our server over stdio, web_search alone. */
  search: Rate;
  /** A server that only forwards the search (bench/forwarding-server.ts), over stdio. */
  forwarding: Rate;
}

/** Sequential calls over stdio, each server warmed up first (a tenth of the calls). */
export async function benchStdioLoad(calls: number): Promise<StdioLoadResult> {
  const service = await startReferenceService();
  service.setVideoTiming({ pollsUntilDone: 0 });
  const env = {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_SEARCH_MODEL: 'tavily',
  };
  const ours = await startAndList(join(ROOT, 'dist/cli.js'), env);
  const forwarding = await startAndList(await bundleBenchServer('forwarding-server'), env);
  try {
    const started = (await ours.client.callTool({
      name: 'video_generate',
      arguments: { prompt: 'load', wait_seconds: 0 },
    })) as CallToolResult;
    const jobId = (started.structuredContent as { job_id: string }).job_id;
    const mixedOne = async (i: number) => {
      const problem = await runMixedCall(ours.client, mixedCall(i, jobId));
      if (problem) throw new Error(`call ${i}: ${problem}`);
    };
    const searchOne = (client: typeof ours.client) => async (i: number) => {
      const result = (await client.callTool({
        name: 'web_search',
        arguments: { query: `load ${i % 50}`, max_results: 5 },
      })) as CallToolResult;
      if (result.isError) throw new Error(`web_search ${i} failed`);
    };
    const warm = Math.ceil(calls / 10);
    await rate(warm, mixedOne);
    const mixed = await rate(calls, (i) => mixedOne(warm + i));
    await rate(warm, searchOne(ours.client));
    const search = await rate(calls, searchOne(ours.client));
    await rate(warm, searchOne(forwarding.client));
    const forwardingRate = await rate(calls, searchOne(forwarding.client));
    return { mixed, search, forwarding: forwardingRate };
  } finally {
    await ours.client.close();
    await forwarding.client.close();
    await service.close();
  }
}

export interface FuzzRateResult {
  /** The fuzz's hostile calls with all its checks, in memory (test/fuzz/tool-arguments.test.ts). */
  hostile: Rate;
  /** Well-formed web_search calls through the same client, server and service. */
  plain: Rate;
}

/** The fuzz's calls (fixed seed) against plain searches, in the fuzz's own world. */
export async function benchFuzzRate(calls: number): Promise<FuzzRateResult> {
  const world = await createWorld();
  try {
    const plainOne = async (i: number) => {
      const result = (await world.conn.client.callTool({
        name: 'web_search',
        arguments: { query: `plain ${i % 50}` },
      })) as CallToolResult;
      if (result.isError) throw new Error(`web_search ${i} failed`);
    };
    await rate(Math.ceil(calls / 10), plainOne);
    const plain = await rate(calls, plainOne);
    const stats = newStats();
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(toolCalls(world), (call) => callAndCheck(world, call, stats)),
      { seed: 424242, numRuns: calls },
    );
    const ms = performance.now() - started;
    return { hostile: { calls: stats.calls, ms, perSecond: (stats.calls * 1000) / ms }, plain };
  } finally {
    await closeWorld(world);
  }
}
