import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeJobHandle } from '../../../src/tools/video/job-handle.js';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, tempDir, textOf } from '../../harness/harness.js';
import { callVideo, until } from '../../harness/video.js';
import {
  type ReferenceService,
  startReferenceService,
  videoFileBytes,
} from '../../reference-service/index.js';

let cdn: ReferenceService;
let outputDir: string;

// Before useGateway's own set-up (hooks run in order): the server's settings name the CDN.
beforeAll(async () => {
  cdn = await startReferenceService({ apiKey: 'cdn-never-sees-keys' });
});
const gw = useGateway({
  env: () => ({
    GATEWAY_TIMEOUT_MS: '20000',
    // The same prompt in many cases: the duplicate guard is not their point (test/ledger).
    GATEWAY_DUPLICATE_WINDOW_SECONDS: '0',
    // The CDN stand-in runs on loopback, which downloads may reach only when allowed.
    GATEWAY_ALLOW_PRIVATE_URLS: new URL(cdn.url).host,
    CWD: tempDir('gtm-video-dl-'),
  }),
});
beforeAll(() => {
  outputDir = gw.conn.runtime.config.outputDir;
});
afterAll(() => cdn.close());
beforeEach(() => gw.service.setVideoTiming({ pollsUntilDone: 1 }));
afterEach(() => cdn.reset());

async function doneJob(): Promise<string> {
  const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
  return out.job_id;
}

const filesNow = () => readdirSync(outputDir, { withFileTypes: false }).length;

describe('downloads stay in the output directory', () => {
  it('names files from the job, never from untrusted text, and never overwrites', async () => {
    const evil = encodeJobHandle({ requestId: '../../../../tmp/evil', connectionId: '1' });
    const body = JSON.stringify({
      status: 'done',
      video: { url: `${gw.service.url}/files/video/x.mp4?bytes=1000` },
    });
    gw.service.inject('videos.poll', { body, times: 2 });
    const first = await callVideo(gw.conn.client, 'video_status', { job_id: evil, download: true });
    const second = await callVideo(gw.conn.client, 'video_status', { job_id: evil, download: true });
    for (const saved of [first, second]) {
      expect(dirname(saved.out.file_path ?? '')).toBe(outputDir);
      expect(saved.out.file_path).not.toContain('..');
    }
    expect(first.out.file_path).not.toBe(second.out.file_path);
    expect(readdirSync(dirname(outputDir))).toEqual(['gateway-output']);
  });

  it('refuses a video over the size limit before writing, and ignores non-http URLs', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 1, videoBytes: 3 * 1024 ** 3 });
    const jobId = await doneJob();
    const big = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
    expect(big.result.isError).toBe(true);
    expect(textOf(big.result)).toMatch(
      /is done, but saving its video failed: .*3072\.0 MiB, over the 2048\.0 MiB download limit.*Fetch it from there directly/s,
    );
    expect(readdirSync(outputDir).filter((f) => f.includes(jobId))).toEqual([]);

    gw.service.inject('videos.poll', { body: '{"status":"done","video":{"url":"file:///etc/passwd"}}' });
    const odd = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
    expect(odd.out).toMatchObject({ status: 'done', video_url: null, file_path: null });
    expect(textOf(odd.result)).toMatch(/no usable video URL/);
  });
});

describe('downloading from a CDN', () => {
  it('follows a redirect to another host, and sends the gateway key only to the gateway', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 1, videoBytes: 5000, redirectVideoTo: cdn.url });
    const jobId = await doneJob();
    const saved = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
    expect(readFileSync(saved.out.file_path ?? '').equals(videoFileBytes(5000))).toBe(true);
    const hop = gw.service.requests.find((r) => r.route === 'files.redirect');
    const file = cdn.requests.find((r) => r.route === 'files.video');
    expect(hop?.headers.authorization).toBe(`Bearer ${gw.service.apiKey}`);
    expect(file).toBeDefined();
    expect(file?.headers.authorization).toBeUndefined();
  });

  it('names the saved video by the type the host declares, parameters and all, else by its URL', async () => {
    const cases: [Record<string, string> | undefined, string, string][] = [
      [{ 'content-type': 'video/webm; codecs="vp9"' }, 'webm', 'video/webm'],
      [{ 'content-type': 'video/x-msvideo' }, 'avi', 'video/x-msvideo'],
      // Not a video type: the URL's extension (.mp4) decides.
      [{ 'content-type': 'application/octet-stream' }, 'mp4', 'video/mp4'],
      [undefined, 'mp4', 'video/mp4'],
    ];
    for (const [headers, extension, mime] of cases) {
      const jobId = await doneJob();
      if (headers) gw.service.inject('files.video', { headers });
      const saved = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
      expect(saved.result.isError, textOf(saved.result)).toBeFalsy();
      expect(saved.out.file_path, extension).toMatch(new RegExp(`\\.${extension}$`));
      const link = saved.result.content.find((c) => c.type === 'resource_link');
      expect(link, extension).toMatchObject({ mimeType: mime });
    }
  });

  it('a failed download says the job is done and how to retry, and leaves no partial file', async () => {
    const jobId = await doneJob();
    const before = filesNow();
    gw.service.inject('files.video', { status: 500 });
    const failed = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
    expect(failed.result.isError).toBe(true);
    expect(textOf(failed.result)).toMatch(
      /is done, but saving its video failed.*500.*download: true to try again/s,
    );
    expect(filesNow()).toBe(before);
  });

  it('cancelling a download stops it and removes the partial file', async () => {
    const jobId = await doneJob();
    const before = filesNow();
    gw.service.inject('files.video', { slowBodyMs: 15_000 });
    const controller = new AbortController();
    const call = callVideo(
      gw.conn.client,
      'video_status',
      { job_id: jobId, download: true },
      controller.signal,
    );
    call.catch(() => undefined);
    await until(() => gw.service.counters['files.video'] === 1, 5_000, 'download started');
    await until(() => filesNow() === before + 1, 5_000, 'partial file created');
    controller.abort();
    await expect(call).rejects.toThrow();
    await until(() => gw.service.abandoned['files.video'] === 1, 5_000, 'download aborted');
    await until(() => filesNow() === before, 5_000, 'partial file removed');
  });
});

describe('downloads that leave the gateway', () => {
  /** A finished job whose video URL is on the CDN and redirects to `to`. */
  async function jobAt(to: string): Promise<string> {
    const jobId = await doneJob();
    const hop = new URL(`${cdn.url}/files/redirect/x.mp4`);
    hop.searchParams.set('to', to);
    gw.service.inject('videos.poll', {
      body: JSON.stringify({ status: 'done', video: { url: hop.toString() } }),
    });
    return jobId;
  }

  it('never sends the key on a chain that started elsewhere, even when it comes back to the gateway', async () => {
    const jobId = await jobAt(`${gw.service.url}/files/video/back.mp4?bytes=2000`);
    const saved = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
    expect(saved.result.isError, textOf(saved.result)).toBeFalsy();
    const back = gw.service.requests.find((r) => r.route === 'files.video');
    expect(back).toBeDefined();
    expect(back?.headers.authorization).toBeUndefined();
    expect(cdn.requests.find((r) => r.route === 'files.redirect')?.headers.authorization).toBeUndefined();
  });

  it("never saves the gateway's API answer as the video", async () => {
    const jobId = await jobAt(`${gw.service.url}/v1/models`);
    const before = filesNow();
    const failed = await callVideo(gw.conn.client, 'video_status', { job_id: jobId, download: true });
    expect(failed.result.isError).toBe(true);
    expect(textOf(failed.result)).toMatch(/saving its video failed/);
    expect(
      gw.service.requests.filter((r) => r.route === 'models').map((r) => r.headers.authorization),
    ).toEqual([undefined]);
    expect(filesNow()).toBe(before);
  });

  it('names a host that cannot be reached as that host, not the gateway', async () => {
    const closed = await startReferenceService();
    const gone = closed.url;
    await closed.close();
    const other = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_ALLOW_PRIVATE_URLS: new URL(gone).host,
      GATEWAY_MAX_RETRIES: '0',
      CWD: tempDir('gtm-video-gone-'),
    });
    try {
      const { out } = await callVideo(other.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      gw.service.inject('videos.poll', {
        body: JSON.stringify({ status: 'done', video: { url: `${gone}/v.mp4` } }),
      });
      const failed = await callVideo(other.client, 'video_status', { job_id: out.job_id, download: true });
      const text = textOf(failed.result);
      expect(failed.result.isError).toBe(true);
      expect(text).toContain(`The download host ${new URL(gone).host} could not be reached (ECONNREFUSED)`);
      expect(text).toMatch(
        /is not the gateway, so neither GATEWAY_BASE_URL nor the gateway key is the cause/,
      );
      expect(text).not.toMatch(/Cannot reach the service|check that the service is running/i);
    } finally {
      await other.close();
    }
  });
});
