import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_NODE, structuredOf, tempDir } from '../../harness/harness.js';
import {
  connectHttp,
  disconnect,
  eventually,
  type HttpServerProcess,
  health,
  startHttpCli,
} from '../../harness/http-harness.js';
import {
  callsTo,
  formatMiB,
  GC_PROBE_ENV,
  type LiveMemory,
  liveMemory,
  MiB,
  mixedCall,
  runMixedCall,
  settledResident,
} from '../../harness/load.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

// Its own file, so its own process and its own spawned server.
const SESSIONS = 20;
const CALLS = 200;
/** More distinct pages than the page cache holds (32), so the warm-up fills it. */
/** The major version of the Node that runs the spawned server. */
const SERVER_NODE_MAJOR = Number(
  execFileSync(SERVER_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }),
);
const PAGE_CACHE_ENTRIES = 40;
/**
 * How far RSS may end above the warmed-up baseline once the sessions are closed. Nothing forces
 * a GC in the server, so garbage from the burst (200 results, 20 sessions' objects) may still be
 * there, and V8 keeps more of it resident from Node 24 on (its young generation is larger).
 * Measured: +10 MiB on Node 22; on Node 24, from under 30 up to +34 MiB. The leak check proper is
 * the live heap below.
 */
const RSS_TOLERANCE = (SERVER_NODE_MAJOR >= 24 ? 48 : 30) * MiB;

let service: ReferenceService;
let server: HttpServerProcess;
let jobId: string;
let cwd: string;

beforeAll(async () => {
  cwd = tempDir('gtm-load-http-');
  service = await startReferenceService();
  service.setVideoTiming({ pollsUntilDone: 0 });
  server = await startHttpCli({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    CWD: cwd,
    ...GC_PROBE_ENV,
  });
  const client = await connectHttp(server.url, 'streamable');
  const started = await client.callTool({
    name: 'video_generate',
    arguments: { prompt: 'load', wait_seconds: 0 },
  });
  jobId = structuredOf<{ job_id: string }>(started).job_id;
  await disconnect(client);
});
afterAll(async () => {
  expect(await server?.stop()).toBe(0);
  await service?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** Opens the sessions, runs the calls concurrently spread across them; returns the problems. */
async function burst(firstCall: number, whileOpen?: () => Promise<void>): Promise<string[]> {
  const clients: Client[] = await Promise.all(
    Array.from({ length: SESSIONS }, () => connectHttp(server.url, 'streamable')),
  );
  try {
    expect((await health(server.url)).sessions).toBe(SESSIONS);
    const outcomes = await Promise.all(
      Array.from({ length: CALLS }, (_, n) =>
        runMixedCall(clients[n % SESSIONS] as Client, mixedCall(firstCall + n, jobId)),
      ),
    );
    await whileOpen?.();
    return outcomes.flatMap((problem, n) => (problem ? [`call ${n}: ${problem}`] : []));
  } finally {
    await Promise.all(clients.map((client) => disconnect(client)));
  }
}

async function idle(): Promise<boolean> {
  return eventually(async () => {
    const now = await health(server.url);
    return now.sessions === 0 && now.in_flight === 0;
  });
}

describe(`${CALLS} concurrent calls over ${SESSIONS} Streamable HTTP sessions`, () => {
  it('all succeed, and closing the sessions gives the memory back', async () => {
    const pid = server.child.pid;
    if (pid === undefined) throw new Error('the server is not running');
    const probe = { pid, stderr: server.stderr };

    // Warm-up: the same burst once (sessions opened and closed), and a full page cache.
    expect(await idle()).toBe(true);
    expect(await burst(0)).toEqual([]);
    const warmClient = await connectHttp(server.url, 'streamable');
    for (let page = 0; page < PAGE_CACHE_ENTRIES; page++) {
      const warm = await warmClient.callTool({
        name: 'web_fetch',
        arguments: { url: `https://example.com/long-warm-${page}`, max_length: 1000 },
      });
      expect(warm.isError).toBeFalsy();
    }
    await disconnect(warmClient);
    expect(await idle()).toBe(true);
    const baseline = await settledResident(pid);
    const before = await liveMemory(probe);
    service.resetCounters();

    const started = Date.now();
    let open: LiveMemory | undefined;
    const problems = await burst(CALLS, async () => {
      open = await liveMemory(probe);
    });
    const elapsed = Date.now() - started;
    expect(problems).toEqual([]);
    // Each call reached the service once (fetches of one page share a request, so not counted).
    expect(service.counters.search).toBe(callsTo('web_search', CALLS, CALLS));
    expect(service.counters.responses).toBe(callsTo('ask_model', CALLS, CALLS));

    expect(await idle()).toBe(true);
    const final = await settledResident(pid);
    const after = await liveMemory(probe);
    const sessionsCost = (open?.heapUsed ?? 0) - before.heapUsed;
    console.info(
      `http load: ${CALLS} calls over ${SESSIONS} sessions in ${elapsed} ms (sessions opened and closed). ` +
        `RSS: baseline ${formatMiB(baseline)}, after closing ${formatMiB(final)} (+${formatMiB(final - baseline)}). ` +
        `Live heap: ${formatMiB(before.heapUsed)}, with the sessions open ${formatMiB(open?.heapUsed ?? 0)}, ` +
        `after closing ${formatMiB(after.heapUsed)}`,
    );
    expect(final - baseline).toBeLessThan(RSS_TOLERANCE);
    // Closed sessions are gone from the live heap: what stays is under half of what the open
    // sessions held, so even half of them leaking would fail this.
    expect(sessionsCost).toBeGreaterThan(0);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(sessionsCost / 2);
    expect(server.stderr()).not.toMatch(/\] (error|warn):/);
  });
});
