import { getEventListeners } from 'node:events';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { sleep, withDeadline } from '../../src/gateway/deadline.js';
import { ServiceError } from '../../src/gateway/errors.js';
import { useGateway } from '../harness/gateway.js';
import { connectInMemory, tempDir, textOf } from '../harness/harness.js';
import { callVideo, pollsOf, until } from '../harness/video.js';

// Cancellation runs on AbortSignal: the SDK's signal for each call, and per service attempt a
// deadline linked to it (src/gateway/deadline.ts). What matters: a cancelled call stops its
// request, a deadline ends a call the service never answers, and a signal that outlives many
// attempts keeps no listener of those that ended.

const gw = useGateway({ env: () => ({ GATEWAY_TIMEOUT_MS: '20000', CWD: tempDir('gtm-cancel-') }) });

function search(signal?: AbortSignal): Promise<CallToolResult> {
  return gw.conn.client.callTool(
    { name: 'web_search', arguments: { query: 'abort signals' } },
    undefined,
    signal ? { signal } : {},
  ) as Promise<CallToolResult>;
}

/** The MaxListenersExceededWarnings this process emits while `work` runs. */
async function listenerWarnings(work: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') seen.push(warning.message);
  };
  process.on('warning', onWarning);
  try {
    await work();
    // Warnings are emitted on a later tick.
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  return seen;
}

describe('a cancelled call', () => {
  it('stops its request at the service', async () => {
    gw.service.inject('search', { hang: true });
    const controller = new AbortController();
    const call = search(controller.signal);
    call.catch(() => undefined);
    await until(() => gw.service.counters.search === 1, 5_000, 'search sent');
    controller.abort('the user moved on');
    await expect(call).rejects.toThrow();
    // Only the server's own abort can close the hanging request this soon (its timeout is 20 s).
    await until(() => gw.service.abandoned.search === 1, 5_000, 'search abandoned');
    expect(gw.service.counters.search).toBe(1);
  });

  it('is refused by the client before anything is sent once its signal has aborted', async () => {
    const client = gw.conn.runtime.service.client;
    const controller = new AbortController();
    controller.abort('too late');
    await expect(
      client.json({ method: 'GET', path: '/api/health', retry: 'safe', signal: controller.signal }),
    ).rejects.toMatchObject({
      kind: 'aborted',
    });
    expect(gw.service.counters.health).toBe(0);
  });
});

describe('the deadline of an attempt', () => {
  it('ends a call the service never answers, closes its request, and says so', async () => {
    const conn = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_TIMEOUT_MS: '1500',
    });
    try {
      gw.service.inject('search', { hang: true });
      const result = (await conn.client.callTool({
        name: 'web_search',
        arguments: { query: 'abort signals' },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/did not answer .* within 1.5 s/);
      await until(() => gw.service.abandoned.search === 1, 5_000, 'search abandoned');
    } finally {
      await conn.close();
    }
  });

  it('follows its parent, fires on its own time, and after clear() follows nothing', async () => {
    const parent = new AbortController();
    const followed = withDeadline(parent.signal, 60_000);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    parent.abort('cancelled');
    expect(followed.signal.aborted).toBe(true);
    expect(followed.signal.reason).toBe('cancelled');
    followed.clear();

    const timed = withDeadline(undefined, 5);
    await new Promise((r) => setTimeout(r, 30));
    expect((timed.signal.reason as Error).name).toBe('TimeoutError');

    const other = new AbortController();
    const cleared = withDeadline(other.signal, 60_000);
    cleared.clear();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    other.abort('late');
    expect(cleared.signal.aborted).toBe(false);

    // A parent already aborted: aborted at once, with nothing to listen to.
    const early = withDeadline(other.signal, 60_000);
    expect(early.signal.reason).toBe('late');
  });
});

describe('listeners on a signal that outlives its attempts', () => {
  it('are released when each attempt ends, answered, failed or retried', async () => {
    const client = gw.conn.runtime.service.client;
    const caller = new AbortController();
    const signal = caller.signal;
    const listModels = () => client.json({ method: 'GET', path: '/v1/models', retry: 'safe', signal });
    // In flight, the attempt listens to the caller's signal...
    gw.service.inject('models', { delayMs: 300 });
    const slow = listModels();
    await until(() => gw.service.counters.models === 1, 5_000, 'list asked for');
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await slow;
    // ... and lets go when it ends: across answers, refusals and retried failures.
    gw.service.inject('models', { status: 503, times: 5 });
    gw.service.inject('models', { status: 400, times: 5 });
    const warnings = await listenerWarnings(async () => {
      for (let i = 0; i < 20; i++) {
        await listModels().catch((error: unknown) => {
          if (!(error instanceof ServiceError)) throw error;
        });
        await sleep(1, signal);
      }
    });
    // 21 calls, and the retries of the 503s.
    expect(gw.service.counters.models).toBeGreaterThan(21);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    expect(warnings).toEqual([]);
  });

  it('stay few through a long video wait of many polls under one call', async () => {
    const conn = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_MAX_RETRIES: '0',
      CWD: tempDir('gtm-cancel-'),
    });
    try {
      gw.service.setVideoTiming({ pollsUntilDone: 1 });
      // Rate-limited polls, each answered at once: the wait polls again 250 ms later, 24 times,
      // and the next poll finds the job done.
      gw.service.inject('videos.poll', { status: 429, headers: { 'retry-after': '0' }, times: 24 });
      let jobId = '';
      const warnings = await listenerWarnings(async () => {
        const { out } = await callVideo(conn.client, 'video_generate', {
          prompt: 'many polls',
          wait_seconds: 40,
        });
        jobId = out.job_id;
        expect(out.status).toBe('done');
      });
      // Far more polls under the call's one signal than the 10 listeners Node warns past.
      expect(pollsOf(gw.service, jobId).length).toBe(25);
      expect(warnings).toEqual([]);
    } finally {
      await conn.close();
    }
  });
});
