import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { request } from 'undici';
import type { ReferenceService } from '../test/reference-service/index.js';
import { bundleMinimalServer, median, ROOT, startAndList } from './lib.js';

export interface LatencyResult {
  /** web_search through our server, MCP round trip included. */
  toolCallMs: number;
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

/** Added latency per tool call: (tool call - direct HTTP) against the echo round trip. */
export async function benchLatency(calls: number, service: ReferenceService): Promise<LatencyResult> {
  const env = {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_SEARCH_MODEL: 'tavily',
  };
  const ours = await startAndList(join(ROOT, 'dist/cli.js'), env);
  const minimal = await startAndList(await bundleMinimalServer());
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
  await timeEach(20, () => search(ours.client));
  await timeEach(20, direct);
  await timeEach(20, echo);
  const rounds = { tool: [] as number[], direct: [] as number[], echo: [] as number[] };
  for (let r = 0; r < 5; r++) {
    rounds.tool.push(await timeEach(calls / 5, () => search(ours.client)));
    rounds.direct.push(await timeEach(calls / 5, direct));
    rounds.echo.push(await timeEach(calls / 5, echo));
  }
  await ours.client.close();
  await minimal.client.close();
  return { toolCallMs: median(rounds.tool), directMs: median(rounds.direct), echoMs: median(rounds.echo) };
}
