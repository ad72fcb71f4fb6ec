/**
 * `npm run bench`: every figure is printed as a ratio against a baseline measured in the same run
 * on the same machine. Nothing here asserts; goals are printed beside the ratios.
 */
import { benchFleetLoad } from './fleet-load.js';
import { benchLatency } from './latency.js';
import { benchLedger, ledgerRows } from './ledger.js';
import { ratio, startReferenceProcess } from './lib.js';
import { benchMixedLoad } from './mixed-load.js';
import { benchModelView } from './model-view.js';
import { modelViewTable } from './model-view-table.js';
import { benchOAuth } from './oauth.js';
import { benchOutputSize } from './output-size.js';
import { benchSharedCache } from './shared-cache.js';
import { benchStartup } from './startup.js';
import { benchFuzzRate, benchStdioLoad } from './throughput.js';

const quick = process.argv.includes('--quick');
const service = await startReferenceProcess();
try {
  const startup = await benchStartup(quick ? 4 : 12, service);
  const latency = await benchLatency(quick ? 200 : 1000, service);
  const size = await benchOutputSize(service);
  const views = await benchModelView(service);
  const mixed = await benchMixedLoad(quick ? 50 : 200);
  const ledger = await benchLedger(quick ? 100 : 500, quick ? 3 : 5, service);
  const stdio = await benchStdioLoad(quick ? 500 : 2000);
  const fuzz = await benchFuzzRate(quick ? 1000 : 10_500);
  const oauth = await benchOAuth(quick ? 100 : 400, service);
  const shared = await benchSharedCache(quick ? 40 : 200, service);
  const fleetLoad = await benchFleetLoad(quick ? 4 : 10, service);
  const perS = (r: { perSecond: number }) => `${r.perSecond.toFixed(0)} calls/s`;
  const added = latency.toolCallMs - latency.directMs;
  const floor = latency.forwardingMs - latency.directMs;
  const rows: [string, string, string, string][] = [
    [
      'start-up to tools/list',
      `${startup.ours.ms.toFixed(0)} ms`,
      `${startup.baseline.ms.toFixed(0)} ms (minimal SDK server, bundled)`,
      `${ratio(startup.ours.ms, startup.baseline.ms)} (goal ≤ 1.15×)`,
    ],
    [
      'peak RSS',
      `${(startup.ours.peakRssKiB / 1024).toFixed(1)} MiB`,
      `${(startup.baseline.peakRssKiB / 1024).toFixed(1)} MiB (same baseline)`,
      `${ratio(startup.ours.peakRssKiB, startup.baseline.peakRssKiB)} (goal ≤ 1.1×)`,
    ],
    [
      'added latency per call',
      `${added.toFixed(2)} ms (web_search ${latency.toolCallMs.toFixed(2)} − direct HTTP ${latency.directMs.toFixed(2)})`,
      `${latency.echoMs.toFixed(2)} ms (echo tool MCP round trip)`,
      `${ratio(Math.max(added, 0), latency.echoMs)} (for reference: the goal is retired)`,
    ],
    [
      'added latency per call, floor',
      `${floor.toFixed(2)} ms (a server that only forwards the search, bench/forwarding-server.ts)`,
      `${latency.echoMs.toFixed(2)} ms (same echo)`,
      `${ratio(Math.max(floor, 0), latency.echoMs)} (for reference: what any SDK server pays here)`,
    ],
    [
      'server CPU per call',
      `${latency.toolCpuUs.toFixed(0)} µs (web_search, user + system)`,
      `${latency.forwardingCpuUs.toFixed(0)} µs (the forwarding server)`,
      `${ratio(latency.toolCpuUs, latency.forwardingCpuUs)} (for reference: CPU this server spends per call)`,
    ],
    [
      'short calls under long ones, p50',
      `${mixed.loaded.p50.toFixed(2)} ms (web_search while ${mixed.longCalls} streamed answers hold their connections)`,
      `${mixed.alone.p50.toFixed(2)} ms (the same calls alone)`,
      `${ratio(mixed.loaded.p50, mixed.alone.p50)} (goal ≤ 1.2×)`,
    ],
    [
      'short calls under long ones, p99',
      `${mixed.loaded.p99.toFixed(2)} ms (same)`,
      `${mixed.alone.p99.toFixed(2)} ms (same)`,
      `${ratio(mixed.loaded.p99, mixed.alone.p99)} (goal ≤ 1.2×)`,
    ],
    [
      'stdio throughput, the load mix',
      `${perS(stdio.mixed)} (${stdio.mixed.calls} sequential calls: web_search, web_fetch paging, list_models, ask_model, video_status, audio_speech)`,
      `${perS(stdio.forwarding)} (web_search through the forwarding server, same count)`,
      `${ratio(stdio.mixed.perSecond, stdio.forwarding.perSecond)} (for reference)`,
    ],
    [
      'stdio throughput, web_search',
      `${perS(stdio.search)} (${stdio.search.calls} sequential calls)`,
      `${perS(stdio.forwarding)} (the forwarding server, same calls)`,
      `${ratio(stdio.search.perSecond, stdio.forwarding.perSecond)} (for reference)`,
    ],
    [
      'fuzz throughput, in memory',
      `${perS(fuzz.hostile)} (${fuzz.hostile.calls} hostile calls of test/fuzz, seed 424242, with its checks)`,
      `${perS(fuzz.plain)} (well-formed web_search, same client, server and service)`,
      `${ratio(fuzz.hostile.perSecond, fuzz.plain.perSecond)} (for reference)`,
    ],
    ...ledgerRows(ledger),
    [
      'OAuth added time per call, p50',
      `${(oauth.oauthMs - oauth.tokenMs).toFixed(2)} ms (web_search ${oauth.oauthMs.toFixed(2)} ms with a JWT, keys cached)`,
      `${oauth.tokenMs.toFixed(2)} ms (the same with the static token)`,
      `${ratio(Math.max(oauth.oauthMs - oauth.tokenMs, 0), 2)} of the 2 ms goal (goal ≤ 1.0×)`,
    ],
    shared
      ? [
          'paged fetch, next part on another replica, p50',
          `${shared.otherMs.toFixed(2)} ms (two replicas sharing PostgreSQL: from the shared cache)`,
          `${shared.sameMs.toFixed(2)} ms (the replica that fetched the first part, from its memory)`,
          `${(shared.otherMs - shared.sameMs).toFixed(2)} ms slower (goal ≤ 5 ms)`,
        ]
      : ['paged fetch, next part on another replica', 'not run: PostgreSQL is not installed', '', ''],
    fleetLoad
      ? [
          '50 clients through HAProxy and 3 replicas, added time p99',
          `${fleetLoad.fleet.addedP99.toFixed(2)} ms (web_search less the gateway's own p99; ${fleetLoad.fleet.refused} of ${fleetLoad.fleet.calls} calls refused)`,
          `${fleetLoad.single.addedP99.toFixed(2)} ms (one replica alone; ${fleetLoad.single.refused} of ${fleetLoad.single.calls} refused)`,
          `${ratio(fleetLoad.fleet.addedP99, fleetLoad.single.addedP99)} (goal ≤ 1.0×, none refused)`,
        ]
      : ['50 clients through a fleet', 'not run: PostgreSQL or HAProxy is not installed', '', ''],
    [
      'tools/list catalog',
      `${size.catalogBytes} bytes`,
      'budget for 11 tools (13,300 bytes)',
      `${ratio(size.catalogBytes, 13_300)} (goal ≤ 1.0×)`,
    ],
    [
      'web_search text, 10 results',
      `${size.searchTextChars} chars`,
      `${size.bareChars} chars (bare titles + URLs + snippets)`,
      `${ratio(size.searchTextChars, size.bareChars)} (goal ≤ 1.05×)`,
    ],
  ];
  console.log('| benchmark | gateway-tools-mcp | baseline | ratio |\n|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  console.log(
    "\nTokens each client's model receives per result (o200k_base), × the information floor " +
      '(goal ≤ 1.1×; a page never twice):\n',
  );
  console.log(modelViewTable(views));
} finally {
  await service.close();
}
