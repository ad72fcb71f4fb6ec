// Video jobs on the reference service alone: timing only it can set (a slow accept, a long wait, a
// hanging poll, no progress), jobs that expire or are cancelled, several accounts, and cancelling a
// wait. The cases both gateways produce are in video.real.test.ts.
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, tempDir, textOf } from '../../harness/harness.js';
import { callVideo, pollsOf, requestIdOf, submitsOf, until } from '../../harness/video.js';

// The same prompt in many cases: the duplicate guard is not their point (test/ledger).
const gw = useGateway({
  env: () => ({
    GATEWAY_TIMEOUT_MS: '20000',
    GATEWAY_DUPLICATE_WINDOW_SECONDS: '0',
    CWD: tempDir('gtm-video-'),
  }),
});

describe('video tools are listed as the spec names them', () => {
  it('has four tools with the billing annotations and one output schema', async () => {
    const { tools } = await gw.conn.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['video_generate', 'video_edit', 'video_extend']) {
      expect(byName.get(name)?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      });
      expect(byName.get(name)?.description).toMatch(/NEW billed generation.*video_status/s);
    }
    expect(byName.get('video_status')?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
    });
    expect(Object.keys(byName.get('video_generate')?.inputSchema.properties ?? {}).sort()).toEqual(
      [
        'allow_duplicate',
        'aspect_ratio',
        'duration',
        'idempotency_key',
        'image_path',
        'image_url',
        'model',
        'prompt',
        'resolution',
        'wait_seconds',
      ].sort(),
    );
    expect(Object.keys(byName.get('video_status')?.inputSchema.properties ?? {}).sort()).toEqual([
      'download',
      'job_id',
      'wait_seconds',
    ]);
    expect(Object.keys(byName.get('video_extend')?.outputSchema?.properties ?? {}).sort()).toEqual(
      ['duration', 'error', 'file_path', 'job_id', 'next', 'progress', 'status', 'video_url'].sort(),
    );
  });
});

describe('a video job whose timing the reference service sets', () => {
  it('reports progress while the gateway takes its time to accept a submit, then follows the job', async () => {
    gw.service.inject('videos.generations', { delayMs: 6_000 });
    const { result, out, progress } = await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'slow accept',
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out.job_id).toMatch(/^vj_/);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]?.message).toMatch(
      /^waiting for the gateway to accept the video generation \(\d+ s\)$/,
    );
    expect(gw.service.counters['videos.generations']).toBe(1);
  });

  it('says the job is still running, with its progress, when the wait ends first', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 1000 });
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    const status = await callVideo(gw.conn.client, 'video_status', {
      job_id: out.job_id,
      wait_seconds: 2,
      download: true,
    });
    expect(status.out).toMatchObject({ status: 'running', file_path: null });
    expect(textOf(status.result)).toMatch(/and download: true \(nothing was saved yet\)/);
    expect(status.out.progress).toBeGreaterThanOrEqual(0);
    expect(textOf(status.result)).toMatch(/still running \(\d+% done.*call video_status with this job_id/s);
    // Backoff: 1 s, then longer; two seconds hold at most three polls.
    expect(pollsOf(gw.service, out.job_id).length).toBeGreaterThanOrEqual(2);
    expect(pollsOf(gw.service, out.job_id).length).toBeLessThanOrEqual(3);
  });

  it('a status check that hangs does not hold the call past its wait, and the job_id comes back', async () => {
    gw.service.inject('videos.poll', { hang: true });
    const { out, result } = await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'p',
      wait_seconds: 1,
    });
    expect(out).toMatchObject({ status: 'running', progress: null });
    expect(out.job_id).toMatch(/^vj_/);
    expect(textOf(result)).toMatch(/did not answer the status check within 5 s.*unaffected/s);
    await until(() => gw.service.abandoned['videos.poll'] === 1, 5_000, 'hanging poll closed');
  });

  it('counts seconds as progress (no total) when the service reports no progress', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 3, reportProgress: false });
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    const status = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, wait_seconds: 30 });
    expect(status.out.status).toBe('done');
    const values = status.progress.map((p) => p.progress);
    expect(values.length).toBe(3);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(status.progress[0]?.total).toBeUndefined();
  });

  it('reports an expired or cancelled job with the reason, and saves nothing', async () => {
    for (const status of ['expired', 'cancelled'] as const) {
      gw.service.setVideoTiming({ pollsUntilDone: 1, status });
      const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      const ended = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, download: true });
      expect(ended.out).toMatchObject({ status: 'failed', file_path: null });
      expect(ended.out.error).toMatch(status === 'expired' ? /expired/ : /cancelled/);
    }
  });

  it('polls a job on connection 2 with x-connection-id: 2', async () => {
    const jobs = [];
    for (let i = 0; i < 3; i++)
      jobs.push(
        (await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 })).out.job_id,
      );
    const submittedIds = submitsOf(gw.service).map((r) => r.path);
    expect(submittedIds).toHaveLength(3);
    const onTwo = jobs.find((id) => gw.service.videoJobs.get(requestIdOf(id))?.connectionId === '2');
    expect(onTwo).toBeDefined();
    const status = await callVideo(gw.conn.client, 'video_status', { job_id: onTwo, wait_seconds: 10 });
    expect(status.out.status).toBe('done');
    const polls = pollsOf(gw.service, onTwo ?? '');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((p) => p.headers['x-connection-id'] === '2')).toBe(true);
  });

  it('uses the configured prefix in its hints', async () => {
    const prefixed = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_TOOL_PREFIX: 'gw_',
    });
    try {
      const { result } = await callVideo(prefixed.client, 'gw_video_generate', {
        prompt: 'p',
        wait_seconds: 0,
      });
      expect(textOf(result)).toMatch(/call gw_video_status with this job_id/);
    } finally {
      await prefixed.close();
    }
  });
});

describe('cancelling a wait', () => {
  it('aborts the poll in flight and polls no more', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 1000 });
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    const controller = new AbortController();
    const call = callVideo(
      gw.conn.client,
      'video_status',
      { job_id: out.job_id, wait_seconds: 45 },
      controller.signal,
    );
    call.catch(() => undefined);
    await until(() => gw.service.counters['videos.poll'] === 1, 5_000, 'first poll');
    // The next poll hangs, so it is surely in flight when the client cancels.
    gw.service.inject('videos.poll', { hang: true, times: Number.POSITIVE_INFINITY });
    await until(() => gw.service.counters['videos.poll'] === 2, 5_000, 'second poll');
    controller.abort('user changed their mind');
    await expect(call).rejects.toThrow();
    // Only the server's own abort can close the hanging poll this soon (its timeout is 20 s).
    await until(() => gw.service.abandoned['videos.poll'] === 1, 5_000, 'poll aborted');
    // Longer than the next backoff step (1.5 s): a loop still running would have polled again.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(gw.service.counters['videos.poll']).toBe(2);
  });
});
