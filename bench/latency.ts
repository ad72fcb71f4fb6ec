import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { request } from 'undici';
import {
  type BenchService,
  bundleBenchServer,
  bundleMinimalServer,
  cpuMs,
  median,
  ROOT,
  startAndList,
} from './lib.js';

export interface LatencyResult {
  /** web_search through our server, MCP round trip included. */
  toolCallMs: number;
  /** The same search through a server that only forwards it (bench/forwarding-server.ts). */
  forwardingMs: number;
  /** The same search as a direct HTTP call to the reference service. */
  directMs: number;
  /** The bare MCP round trip of an echo tool on the minimal server. */
  echoMs: number;
  /** CPU time of our server per web_search call, in µs (NaN without /proc). */
  toolCpuUs: number;
  /** The same for the forwarding server. */
  forwardingCpuUs: number;
}

async function timeOnce(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Added latency per tool call: (tool call - direct HTTP) against the echo round trip. */
export async function benchLatency(calls: number, service: BenchService): Promise<LatencyResult> {
  const env = {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_SEARCH_MODEL: 'tavily',
  };
  const ours = await startAndList(join(ROOT, 'dist/cli.js'), env);
  const minimal = await startAndList(await bundleMinimalServer());
  const forwarding = await startAndList(await bundleBenchServer('forwarding-server'), env);
  const search = (client: Client) =>
    client.callTool({ name: 'web_search', arguments: { query: 'latency', max_results: 5 } });
  const direct = async () => {
    const res = await request(`${service.url}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tavily', query: 'latency', max_results: 5, search_type: 'web' }),
    });
    await res.body.json();
  };
  const echo = () => minimal.client.callTool({ name: 'echo', arguments: { text: 'latency' } });
  const measured = {
    tool: () => search(ours.client),
    forwarding: () => search(forwarding.client),
    direct,
    echo,
  };
  const paths = Object.entries(measured) as [keyof typeof measured, () => Promise<unknown>][];
  // Warm every path (connections, JIT), then take the samples call by call in turn, so that a
  // slow moment of this shared machine falls on every path alike. The order rotates every round:
  // each path follows each other path equally often (in a fixed order, one path is the only one
  // never preceded by a call to the reference service).
  for (let i = 0; i < 20; i++) for (const [, fn] of paths) await fn();
  const samples = {
    tool: [] as number[],
    forwarding: [] as number[],
    direct: [] as number[],
    echo: [] as number[],
  };
  const cpuBefore = [cpuMs(ours.pid), cpuMs(forwarding.pid)];
  for (let i = 0; i < calls; i++) {
    for (let j = 0; j < paths.length; j++) {
      const [name, fn] = paths[(i + j) % paths.length] as (typeof paths)[number];
      samples[name].push(await timeOnce(fn));
    }
  }
  const [toolCpuUs, forwardingCpuUs] = [ours.pid, forwarding.pid].map(
    (pid, i) => ((cpuMs(pid) - (cpuBefore[i] ?? Number.NaN)) * 1000) / calls,
  );
  for (const server of [ours, minimal, forwarding]) await server.client.close();
  return {
    toolCallMs: median(samples.tool),
    forwardingMs: median(samples.forwarding),
    directMs: median(samples.direct),
    echoMs: median(samples.echo),
    toolCpuUs: toolCpuUs ?? Number.NaN,
    forwardingCpuUs: forwardingCpuUs ?? Number.NaN,
  };
}
