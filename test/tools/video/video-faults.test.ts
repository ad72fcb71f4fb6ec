import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, textOf } from '../../harness/harness.js';
import { callVideo, pollsOf, submitsOf } from '../../harness/video.js';
import { type Fault, startReferenceService } from '../../reference-service/index.js';

const SECRET = 'sk-video-secret-0123456789abcdef';

// Retries enabled and a short timeout: a submit retried by mistake would show in the counters.
const gw = useGateway({
  apiKey: SECRET,
  // The same prompt in every case: the duplicate guard is not their point (test/ledger).
  env: { GATEWAY_TIMEOUT_MS: '1500', GATEWAY_MAX_RETRIES: '3', GATEWAY_DUPLICATE_WINDOW_SECONDS: '0' },
});

const UNKNOWN = /may or may not have started.*Do not resubmit blindly.*idempotency_key "([^"]+)"/s;

describe('a submit is sent once, whatever goes wrong', () => {
  const ambiguous: [string, Fault][] = [
    ['500', { status: 500, message: '[xai] upstream exploded' }],
    ['502', { status: 502 }],
    [
      "503 after the provider's own failure",
      { status: 503, headers: { 'retry-after': '1' }, message: '[xai] xai returned 500: overloaded' },
    ],
    ['504', { status: 504 }],
    ['408 (upstream video timeout)', { status: 408 }],
    ['an HTML error page', { html: true, status: 502 }],
    ['a connection reset', { reset: true }],
    ['a hang past the timeout', { hang: true }],
  ];
  for (const [name, fault] of ambiguous) {
    it(`${name}: one submit, reported as unknown with the key to retry with`, async () => {
      gw.service.inject('videos.generations', { ...fault, times: 10 });
      const { result } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      expect(result.isError).toBe(true);
      expect(gw.service.counters['videos.generations']).toBe(1);
      const text = textOf(result);
      const key = UNKNOWN.exec(text)?.[1];
      expect(key, text).toBeDefined();
      expect(submitsOf(gw.service)[0]?.headers['idempotency-key']).toBe(key);
      expect(text).not.toContain(SECRET);
    });
  }

  it('a slow accept past GATEWAY_TIMEOUT_MS (within the submit wait) still returns the job_id', async () => {
    // GATEWAY_TIMEOUT_MS is 1.5 s here; a submit waits 2.5 times that.
    gw.service.inject('videos.generations', { delayMs: 2_500 });
    const started = Date.now();
    const { result, out } = await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'p',
      wait_seconds: 0,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_400);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out.job_id).toMatch(/^vj_/);
    expect(gw.service.counters['videos.generations']).toBe(1);
  });

  it('a truncated JSON success: one submit, probably billed, job id unknown', async () => {
    gw.service.inject('videos.generations', { truncatedJson: true });
    const { result } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/unreadable.*probably started and billed.*idempotency_key "gtm-/s);
    expect(gw.service.counters['videos.generations']).toBe(1);
    expect(gw.service.videoJobs.size).toBeGreaterThan(0);
  });

  it('a success without a request_id: one submit, reported as unknown', async () => {
    gw.service.inject('videos.generations', { body: '{"ok":true}' });
    const { result } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    expect(textOf(result)).toMatch(/no request_id.*Do not resubmit blindly/s);
    expect(gw.service.counters['videos.generations']).toBe(1);
  });

  const refused: [number, RegExp][] = [
    [400, /Invalid aspect/],
    [401, /GATEWAY_API_KEY/],
    [402, /credit/],
    [403, /permission or quota/],
    [404, /unknown/],
    [429, /retry after 7 s/],
    // The gateway's own 503: no account free, so no provider was asked.
    [503, /cooling down: retry after 7 s/],
  ];
  for (const [status, hint] of refused) {
    it(`${status}: one submit, not accepted, so not billed`, async () => {
      gw.service.inject('videos.generations', {
        status,
        message: status === 400 ? 'Invalid aspect_ratio: 5:4' : undefined,
        headers: { 'retry-after': '7' },
        times: 10,
      });
      const { result } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/refused, so no job was started and nothing was billed/);
      expect(textOf(result)).toMatch(hint);
      expect(gw.service.counters['videos.generations']).toBe(1);
    });
  }

  it('edits and extensions are sent once too', async () => {
    for (const [tool, route] of [
      ['video_edit', 'videos.edits'],
      ['video_extend', 'videos.extensions'],
    ] as const) {
      gw.service.inject(route, { status: 502, times: 10 });
      const { result } = await callVideo(gw.conn.client, tool, {
        prompt: 'p',
        video: 'https://cdn.example/v.mp4',
        wait_seconds: 0,
      });
      expect(textOf(result)).toMatch(UNKNOWN);
      expect(gw.service.counters[route]).toBe(1);
    }
  });

  it('retrying with the same idempotency_key sends that key again', async () => {
    gw.service.inject('videos.generations', { status: 504 });
    const first = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    const key = UNKNOWN.exec(textOf(first.result))?.[1];
    const retry = await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'p',
      wait_seconds: 0,
      idempotency_key: key,
    });
    expect(retry.out.status).toBe('running');
    expect(submitsOf(gw.service).map((r) => r.headers['idempotency-key'])).toEqual([key, key]);
  });

  it('a service that is not there: nothing sent, nothing billed', async () => {
    const gone = await startReferenceService();
    const url = gone.url;
    await gone.close();
    const offline = await connectInMemory({
      GATEWAY_BASE_URL: url,
      GATEWAY_API_KEY: SECRET,
      GATEWAY_MAX_RETRIES: '0',
    });
    try {
      const { result } = await callVideo(offline.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      expect(textOf(result)).toMatch(/never reached the service, so nothing was billed/);
    } finally {
      await offline.close();
    }
  });
});

describe('after a submit is accepted, the job_id is never lost', () => {
  it('a failing status check during the wait still returns the job_id, and nothing is resubmitted', async () => {
    gw.service.inject('videos.poll', { status: 401, times: 10 });
    const { result, out } = await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'p',
      wait_seconds: 5,
    });
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({ status: 'running' });
    expect(out.job_id).toMatch(/^vj_/);
    expect(textOf(result)).toMatch(/Checking its status failed.*unaffected/s);
    expect(gw.service.counters['videos.generations']).toBe(1);
  });
});

describe('polls are free: retried, and Retry-After is honoured', () => {
  it('a 503 poll with Retry-After waits that long before the next poll', async () => {
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    gw.service.inject('videos.poll', { status: 503, headers: { 'retry-after': '2' } });
    const status = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, wait_seconds: 20 });
    expect(status.out.status).toBe('done');
    const [faulted, next] = pollsOf(gw.service, out.job_id);
    expect((next?.receivedAt ?? 0) - (faulted?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1_900);
  });

  it('a Retry-After longer than the wait ends the wait with the last status and the advice', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 100 });
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    gw.service.inject('videos.poll', { status: 200, body: '{"status":"queued","progress":5}' });
    gw.service.inject('videos.poll', { status: 429, headers: { 'retry-after': '40' } });
    const status = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, wait_seconds: 10 });
    expect(status.out).toMatchObject({ status: 'running', progress: 5 });
    expect(textOf(status.result)).toMatch(/last status check failed.*retry after 40 s/s);
    expect(gw.service.counters['videos.poll']).toBe(2);
  });

  it('reads every status word a gateway may use', async () => {
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    const cases: [string, string][] = [
      ['{"status":"queued"}', 'running'],
      ['{"status":"IN_PROGRESS","progress":"12"}', 'running'],
      [`{"status":"succeeded","video_url":"${gw.service.url}/files/video/x.mp4","duration":"5"}`, 'done'],
      ['{"status":"error","error":"[xai] boom"}', 'failed'],
    ];
    for (const [body, status] of cases) {
      gw.service.inject('videos.poll', { body });
      const seen = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, wait_seconds: 0 });
      expect(seen.out.status, body).toBe(status);
    }
  });

  it('an unknown job is a clear error', async () => {
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
    gw.service.inject('videos.poll', { status: 404, message: `Video job not found` });
    const status = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, wait_seconds: 0 });
    expect(status.result.isError).toBe(true);
    expect(textOf(status.result)).toMatch(/does not know this job.*expired/);
  });
});
