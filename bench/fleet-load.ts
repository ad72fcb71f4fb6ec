/**
 * 50 clients at once through HAProxy and three replicas sharing one PostgreSQL, against the same
 * 50 clients on one replica alone: web_search calls (2026-07-28 era), each client one call after
 * another, after one untimed search each. Printed: the p99 of a call's time less the p99 of the
 * same search sent to the gateway directly (the server's added time), and how many calls were
 * refused. Run alone:
 * `npx tsx bench/fleet-load.ts` (needs PostgreSQL and HAProxy, as the tests do).
 */
import { request } from 'undici';
import { connectEra, type EraClient } from '../test/harness/eras.js';
import { startFleet } from '../test/harness/fleet.js';
import { HAPROXY } from '../test/harness/haproxy.js';
import { tempDir } from '../test/harness/harness.js';
import { startHttpCli } from '../test/harness/http-harness.js';
import { HAS_POSTGRES, startPostgres } from '../test/harness/postgres.js';
import { type BenchService, percentile, startReferenceProcess } from './lib.js';

export interface FleetLoadResult {
  fleet: { addedP99: number; refused: number; calls: number };
  single: { addedP99: number; refused: number; calls: number };
  directP99: number;
}

const CLIENTS = 50;

export async function benchFleetLoad(
  callsEach: number,
  service: BenchService,
): Promise<FleetLoadResult | null> {
  if (!HAS_POSTGRES || !HAPROXY) return null;
  const env = {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_SEARCH_MODEL: 'tavily',
    GATEWAY_MAX_SESSIONS: '200',
    // Both arms at the level a service runs at (the fleet's harness logs at debug for the tests).
    GATEWAY_LOG_LEVEL: 'info',
  };
  const direct = await directP99(service, CLIENTS * 4);
  const fleet = await startFleet(env);
  let fleetRun: Run;
  try {
    fleetRun = await run(fleet.url, callsEach);
  } finally {
    await fleet.stop();
  }
  const postgres = await startPostgres();
  const single = await startHttpCli({
    ...env,
    GATEWAY_LEDGER_URL: postgres.url,
    GATEWAY_OUTPUT_DIR: tempDir('gtm-bench-single-'),
  });
  let singleRun: Run;
  try {
    singleRun = await run(single.url, callsEach);
  } finally {
    await single.stop();
    await postgres.stop();
  }
  const added = (r: Run) => ({ addedP99: r.p99 - direct, refused: r.refused, calls: r.calls });
  return { fleet: added(fleetRun), single: added(singleRun), directP99: direct };
}

interface Run {
  p99: number;
  refused: number;
  calls: number;
}

/** CLIENTS clients at once, each making `callsEach` searches one after another. */
async function run(url: string, callsEach: number): Promise<Run> {
  const clients: EraClient[] = [];
  for (let i = 0; i < CLIENTS; i++) clients.push(await connectEra('2026-07-28', { http: url }));
  const times: number[] = [];
  let refused = 0;
  try {
    // One search each first, not timed: every replica's code warm, as a running service's is.
    await Promise.all(clients.map((client, c) => client.callTool('web_search', { query: `warm ${c}` })));
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; i < callsEach; i++) {
          const started = performance.now();
          try {
            const result = await client.callTool('web_search', {
              query: `fleet load ${c} ${i}`,
              max_results: 3,
            });
            if (result.isError) refused++;
            else times.push(performance.now() - started);
          } catch {
            refused++;
          }
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  }
  return { p99: percentile(times, 0.99), refused, calls: CLIENTS * callsEach };
}

/** The same search sent to the gateway directly, as many at once as the clients make. */
async function directP99(service: BenchService, calls: number): Promise<number> {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; i < calls / CLIENTS; i++) {
        const started = performance.now();
        const res = await request(`${service.url}/v1/search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'tavily', query: `direct ${c} ${i}`, max_results: 3 }),
        });
        await res.body.text();
        times.push(performance.now() - started);
      }
    }),
  );
  return percentile(times, 0.99);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const service = await startReferenceProcess();
  try {
    const result = await benchFleetLoad(process.argv.includes('--quick') ? 4 : 10, service);
    if (!result) console.log('Not run: PostgreSQL or HAProxy is not installed.');
    else
      console.log(
        `| 50 clients through HAProxy and 3 replicas, added time p99 | ${result.fleet.addedP99.toFixed(2)} ms (${result.fleet.refused} of ${result.fleet.calls} calls refused) | ${result.single.addedP99.toFixed(2)} ms (one replica alone; ${result.single.refused} of ${result.single.calls} refused) | ${(result.fleet.addedP99 / result.single.addedP99).toFixed(2)}× (goal ≤ 1.0×, none refused) |`,
      );
  } finally {
    await service.close();
  }
}
