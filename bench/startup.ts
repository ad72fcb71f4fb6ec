import { join } from 'node:path';
import { type BenchService, bundleMinimalServer, median, ROOT, startAndList } from './lib.js';

export interface StartupResult {
  ours: { ms: number; peakRssKiB: number };
  baseline: { ms: number; peakRssKiB: number };
  catalogBytes: number;
}

/** Start-up to tools/list and peak RSS, interleaving our server and the baseline run by run. */
export async function benchStartup(runs: number, service: BenchService): Promise<StartupResult> {
  const minimal = await bundleMinimalServer();
  const cli = join(ROOT, 'dist/cli.js');
  const env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey };
  const ours: { ms: number; peakRssKiB: number }[] = [];
  const base: { ms: number; peakRssKiB: number }[] = [];
  let catalogBytes = 0;
  for (let i = 0; i < runs + 1; i++) {
    const a = await startAndList(cli, env);
    await a.client.close();
    const b = await startAndList(minimal);
    await b.client.close();
    catalogBytes = a.listBytes;
    if (i === 0) continue; // warm-up: file cache
    ours.push(a);
    base.push(b);
  }
  return {
    ours: { ms: median(ours.map((s) => s.ms)), peakRssKiB: median(ours.map((s) => s.peakRssKiB)) },
    baseline: { ms: median(base.map((s) => s.ms)), peakRssKiB: median(base.map((s) => s.peakRssKiB)) },
    catalogBytes,
  };
}
