/**
 * A paged fetch's next part from the fleet's shared cache: two replicas sharing one PostgreSQL
 * (GATEWAY_LEDGER_URL); a page's first part is fetched on replica A, then its second part is asked
 * of replica B (the shared cache) or of A again (A's own memory), pages taking turns. Run alone:
 * `npx tsx bench/shared-cache.ts` (needs PostgreSQL's programs, as the tests do).
 */
import { connectEra, type EraClient } from '../test/harness/eras.js';
import { tempDir } from '../test/harness/harness.js';
import { type HttpServerProcess, startHttpCli } from '../test/harness/http-harness.js';
import { HAS_POSTGRES, startPostgres } from '../test/harness/postgres.js';
import { type BenchService, percentile, startReferenceProcess } from './lib.js';

export interface SharedCacheResult {
  /** p50 of the second part from the other replica (the shared cache), ms. */
  otherMs: number;
  /** p50 of the second part from the replica that fetched the first (its memory), ms. */
  sameMs: number;
}

export async function benchSharedCache(
  pages: number,
  service: BenchService,
): Promise<SharedCacheResult | null> {
  if (!HAS_POSTGRES) return null;
  const postgres = await startPostgres();
  const replicas: HttpServerProcess[] = [];
  const clients: EraClient[] = [];
  try {
    const env = {
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: service.apiKey,
      GATEWAY_FETCH_MODEL: 'jina-reader',
      GATEWAY_LEDGER_URL: postgres.url,
      GATEWAY_OUTPUT_DIR: tempDir('gtm-bench-output-'),
    };
    for (let i = 0; i < 2; i++) replicas.push(await startHttpCli(env));
    for (const replica of replicas) clients.push(await connectEra('2026-07-28', { http: replica.url }));
    const [a, b] = clients as [EraClient, EraClient];
    const times = { same: [] as number[], other: [] as number[] };
    for (let i = 0; i < pages; i++) {
      const url = `https://example.com/long/bench-shared-${i}`;
      const first = await a.callTool('web_fetch', { url, max_length: 2000 });
      const next = (first.structuredContent as { next_start_index?: number } | undefined)?.next_start_index;
      if (next === undefined) throw new Error(`no second part: ${JSON.stringify(first)}`);
      const from = i % 2 === 0 ? b : a;
      const started = performance.now();
      await from.callTool('web_fetch', { url, start_index: next, max_length: 2000 });
      (from === b ? times.other : times.same).push(performance.now() - started);
    }
    return { otherMs: percentile(times.other, 0.5), sameMs: percentile(times.same, 0.5) };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(replicas.map((replica) => replica.stop()));
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const service = await startReferenceProcess();
  try {
    const result = await benchSharedCache(process.argv.includes('--quick') ? 40 : 200, service);
    if (!result) console.log('Not run: PostgreSQL is not installed (apt-get install -y postgresql).');
    else
      console.log(
        `| paged fetch, next part on another replica, p50 | ${result.otherMs.toFixed(2)} ms (from the shared cache) | ${result.sameMs.toFixed(2)} ms (the same replica, from its memory) | ${(result.otherMs - result.sameMs).toFixed(2)} ms slower (goal ≤ 5 ms) |`,
      );
  } finally {
    await service.close();
  }
}
