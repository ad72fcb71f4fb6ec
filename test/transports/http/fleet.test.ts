import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEra, type EraClient } from '../../harness/eras.js';
import { type Fleet, startFleet } from '../../harness/fleet.js';
import { useReferenceService } from '../../harness/gateway.js';
import { textOf } from '../../harness/harness.js';
import { HAS_POSTGRES } from '../../harness/postgres.js';
import { systemHas } from '../../harness/requires.js';
import { scaled } from '../../harness/time.js';

// Three replicas sharing one PostgreSQL and one output folder, behind HAProxy: 2026-07-28
// requests go round-robin, a 2025-era session stays on the replica that opened it, and so does a
// legacy SSE session.
const reference = useReferenceService();
const runnable = HAS_POSTGRES && systemHas('haproxy', 'the tests of replicas behind a load balancer');

describe.runIf(runnable)('replicas behind a load balancer', () => {
  let fleet: Fleet;
  const clients: EraClient[] = [];
  beforeAll(async () => {
    fleet = await startFleet(reference.env);
  }, scaled(60_000));
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await fleet?.stop();
  });

  it('spreads 2026-07-28 calls over the replicas', async () => {
    const client = await connectEra('2026-07-28', { http: fleet.url });
    clients.push(client);
    for (let i = 0; i < 6; i++) {
      const result = await client.callTool('web_search', { query: `spread ${i}` });
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    expect(new Set(fleet.haproxy.servedBy('/mcp')).size).toBe(3);
  });

  it.each(['streamable', 'sse'] as const)(
    'keeps a 2025-era session (%s) on the replica that opened it',
    async (kind) => {
      const client = await connectEra('2025-era', { http: fleet.url, kind });
      clients.push(client);
      for (let i = 0; i < 6; i++) {
        const result = await client.callTool('web_search', { query: `${kind} sticky ${i}` });
        expect(result.isError, textOf(result)).toBeFalsy();
      }
    },
  );
});
