import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { request } from 'undici';
import {
  type BenchService,
  bundleBenchServer,
  bundleMinimalServer,
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
}

async function timeEach(n: number, fn: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

const ROUNDS = 8;

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
  // Warm every path (connections, JIT), then interleave the measurements in rounds.
  const measured = {
    tool: () => search(ours.client),
    forwarding: () => search(forwarding.client),
    direct,
    echo,
  };
  for (const fn of Object.values(measured)) await timeEach(20, fn);
  const rounds = {
    tool: [] as number[],
    forwarding: [] as number[],
    direct: [] as number[],
    echo: [] as number[],
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of Object.entries(measured)) {
      rounds[name as keyof typeof rounds].push(await timeEach(Math.ceil(calls / ROUNDS), fn));
    }
  }
  for (const server of [ours, minimal, forwarding]) await server.client.close();
  return {
    toolCallMs: median(rounds.tool),
    forwardingMs: median(rounds.forwarding),
    directMs: median(rounds.direct),
    echoMs: median(rounds.echo),
  };
}
