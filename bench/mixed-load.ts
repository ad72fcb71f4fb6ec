import { join } from 'node:path';
import { startReferenceService } from '../test/reference-service/index.js';
import { ROOT, startAndList } from './lib.js';

export interface MixedLoadResult {
  /** Short calls (web_search) with nothing else running, in ms. */
  alone: { p50: number; p99: number };
  /** The same short calls while long transfers hold their connections. */
  loaded: { p50: number; p99: number };
  longCalls: number;
}

/** Long answers held open while the short calls are measured: more than a connection pool holds. */
const LONG_CALLS = 40;
/** How long the service holds each long answer: past the whole measurement. */
const HOLD_MS = 60_000;

/**
 * Short calls while long ones run: web_search p50/p99 alone, then while `LONG_CALLS` ask_model
 * calls (streamed answers, held by the service) occupy their connections, in one run. The service
 * runs in this process (its holds are timers, not work), so it can hold exactly those answers.
 */
export async function benchMixedLoad(calls: number): Promise<MixedLoadResult> {
  const service = await startReferenceService();
  const ours = await startAndList(join(ROOT, 'dist/cli.js'), {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_SEARCH_MODEL: 'tavily',
    GATEWAY_TIMEOUT_MS: String(HOLD_MS * 2),
  });
  const search = async () => {
    const started = performance.now();
    await ours.client.callTool({ name: 'web_search', arguments: { query: 'mixed load', max_results: 5 } });
    return performance.now() - started;
  };
  const sample = async () => {
    const times: number[] = [];
    for (let i = 0; i < calls; i++) times.push(await search());
    return percentiles(times);
  };
  try {
    for (let i = 0; i < 20; i++) await search();
    const alone = await sample();
    service.inject('responses', { delayMs: HOLD_MS, times: Number.POSITIVE_INFINITY });
    for (let i = 0; i < LONG_CALLS; i++) {
      ours.client
        .callTool({ name: 'ask_model', arguments: { prompt: `long ${i}`, model: 'openai/gpt-4o-mini' } })
        .catch(() => undefined);
    }
    const deadline = Date.now() + 10_000;
    while ((service.counters.responses ?? 0) < 32 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const loaded = await sample();
    return { alone, loaded, longCalls: LONG_CALLS };
  } finally {
    await ours.client.close();
    await service.close();
  }
}

function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}
