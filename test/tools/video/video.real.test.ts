import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeJobHandle } from '../../../src/tools/video/job-handle.js';
import { tempDir, textOf } from '../../harness/harness.js';
import { callVideo } from '../../harness/video.js';
import { videoBytes } from '../../nine-router/upstream/video.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';

const cwd = tempDir('gtm-real-video-');
const outputDir = join(cwd, 'out');
const gw = useRealGateway({ env: { CWD: cwd, GATEWAY_OUTPUT_DIR: outputDir } });

const call = (name: string, args: Record<string, unknown>) => callVideo(gw.conn.client, name, args);

const SUBMIT = /^\/v1\/videos\/(generations|edits|extensions)$/;
const submitsIn = (journal: JournalEntry[]) =>
  journal.filter((e) => e.method === 'POST' && SUBMIT.test(e.path));
const pollsIn = (journal: JournalEntry[], requestId?: string) =>
  journal.filter(
    (e) =>
      e.method === 'GET' &&
      (requestId ? e.path === `/v1/videos/${requestId}` : e.path.startsWith('/v1/videos/')),
  );

/** Starts a job without waiting and returns its handle (one submit). */
async function started(prompt: string): Promise<string> {
  const { result, out } = await call('video_generate', { prompt, wait_seconds: 0 });
  expect(result.isError, textOf(result)).toBeFalsy();
  return out.job_id;
}

describe('video_generate against 9router', () => {
  it('submits once with an Idempotency-Key that reaches xAI, and answers a handle at once', async () => {
    const prompt = unique('a red kite');
    const { result, out, progress } = await call('video_generate', {
      prompt,
      duration: 6,
      aspect_ratio: '16:9',
      resolution: '720p',
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toMatchObject({ status: 'running', progress: null, video_url: null, file_path: null });
    expect(textOf(result)).toMatch(/^New video job `vj_[^`]+` is running\.\n/);
    expect(textOf(result)).toMatch(/call video_status with this job_id.*Do not submit again/s);
    expect(progress).toEqual([]);

    const journal = await gw.upstream('api.x.ai');
    expect(journal).toHaveLength(1);
    const [submit] = journal;
    expect(submit).toMatchObject({ method: 'POST', path: '/v1/videos/generations', status: 200 });
    // The gateway strips the provider from the model and passes everything else on.
    expect(submit?.body).toEqual({
      model: 'grok-imagine-video',
      prompt,
      duration: 6,
      aspect_ratio: '16:9',
      resolution: '720p',
    });
    expect(submit?.headers['idempotency-key']).toMatch(/^gtm-[0-9a-f-]{36}$/);
    // The handle carries the gateway's connection id (a UUID) for the polls.
    expect(decodeJobHandle(out.job_id).connectionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("forwards the agent's own idempotency_key unchanged", async () => {
    const key = unique('retry-key');
    await call('video_generate', { prompt: unique('keyed'), wait_seconds: 0, idempotency_key: key });
    const submits = submitsIn(await gw.upstream());
    expect(submits.map((s) => s.headers['idempotency-key'])).toEqual([key]);
  });

  it('waits inline until the job is done, with rising progress, polling but never submitting again', async () => {
    const prompt = `${unique('waited')} polls-2`;
    const { result, out, progress } = await call('video_generate', { prompt, wait_seconds: 30 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const { requestId } = decodeJobHandle(out.job_id);
    expect(out).toMatchObject({ status: 'done', progress: 100, duration: 6 });
    expect(out.video_url).toBe(`${gw.info.upstreamUrl}/files/${requestId}.mp4?bytes=4096`);
    expect(textOf(result)).toContain(`is done: 6 s video at ${out.video_url}`);
    expect(result.content).toContainEqual(
      expect.objectContaining({ type: 'resource_link', uri: out.video_url, mimeType: 'video/mp4' }),
    );
    // The fake reports 33% and 67% while pending, then done.
    expect(progress.map((p) => p.progress)).toEqual([33, 67, 100]);
    expect(progress.at(-1)?.message).toBe('video done');

    const journal = await gw.upstream('api.x.ai');
    expect(submitsIn(journal)).toHaveLength(1);
    expect(pollsIn(journal, requestId)).toHaveLength(3);
  });

  it('sends an image URL for image-to-video', async () => {
    const image = 'https://images.example.org/start.png';
    const { result } = await call('video_generate', {
      prompt: unique('animated'),
      image_url: image,
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [submit] = submitsIn(await gw.upstream());
    expect(submit?.body).toMatchObject({ image: { url: image } });
  });

  it('sends a local image under the input roots as a data URL', async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(64, 7),
    ]);
    writeFileSync(join(cwd, 'start.png'), png);
    const { result } = await call('video_generate', {
      prompt: unique('from-file'),
      image_path: 'start.png',
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [submit] = submitsIn(await gw.upstream());
    expect(submit?.body).toMatchObject({ image: { url: `data:image/png;base64,${png.toString('base64')}` } });
  });

  it('reports a job that fails as FAILED with the reason, without an error result', async () => {
    const { result, out } = await call('video_generate', {
      prompt: `${unique('refused')} video-fails`,
      wait_seconds: 30,
    });
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({
      status: 'failed',
      video_url: null,
      error: 'The video was refused by moderation (code content_moderation)',
    });
    expect(textOf(result)).toMatch(/^FAILED — new video job `vj_/);
    expect(submitsIn(await gw.upstream())).toHaveLength(1);
  });

  it('sends a submit once even when the upstream fails it', async () => {
    const { result } = await call('video_generate', {
      prompt: `${unique('broken')} fault-503`,
      wait_seconds: 0,
    });
    expect(result.isError).toBe(true);
    expect(submitsIn(await gw.upstream())).toHaveLength(1);
  });
});

describe('video_status against 9router', () => {
  it('follows a job to done and downloads the file into the output directory', async () => {
    const jobId = await started(`${unique('saved')} polls-1 video-bytes-20000`);
    const { requestId } = decodeJobHandle(jobId);
    const { result, out, progress } = await call('video_status', {
      job_id: jobId,
      wait_seconds: 30,
      download: true,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toMatchObject({ job_id: jobId, status: 'done', progress: 100 });
    expect(dirname(out.file_path as string)).toBe(outputDir);
    expect(basename(out.file_path as string)).toMatch(new RegExp(`^video-${requestId}-\\d{8}-\\d{6}\\.mp4$`));
    expect(readFileSync(out.file_path as string)).toEqual(videoBytes(requestId, 20_000));
    expect(textOf(result)).toContain(`video saved to ${out.file_path} (`);
    const uri = `gateway-tools://output/${basename(out.file_path as string)}`;
    expect(result.content).toContainEqual(
      expect.objectContaining({ type: 'resource_link', uri, mimeType: 'video/mp4' }),
    );
    const [read] = (await gw.conn.client.readResource({ uri })).contents;
    expect(Buffer.from((read as { blob: string }).blob, 'base64')).toEqual(videoBytes(requestId, 20_000));
    expect(progress.at(-1)?.progress).toBeGreaterThanOrEqual(100);
    const journal = await gw.upstream('api.x.ai');
    expect(submitsIn(journal)).toHaveLength(1);
    expect(pollsIn(journal, requestId)).toHaveLength(2);
  });

  it('looks once with wait_seconds 0 and says how to follow a running job', async () => {
    const jobId = await started(`${unique('slow')} polls-5`);
    const { result, out } = await call('video_status', { job_id: jobId, wait_seconds: 0 });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toMatchObject({ status: 'running', progress: 17 });
    expect(textOf(result)).toMatch(/still running \(17% done, service status "pending"\)/);
    expect(pollsIn(await gw.upstream())).toHaveLength(1);
  });

  it('says the gateway does not know a job it never started', async () => {
    const jobId = await started(unique('real'));
    const { connectionId } = decodeJobHandle(jobId);
    const { encodeJobHandle } = await import('../../../src/tools/video/job-handle.js');
    const unknown = encodeJobHandle({ requestId: '00000000-0000-4000-8000-000000000000', connectionId });
    const { result } = await call('video_status', { job_id: unknown, wait_seconds: 0 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The service does not know this job/);
    expect(pollsIn(await gw.upstream())).toHaveLength(1);
  });
});

describe('video_edit and video_extend against 9router', () => {
  for (const [tool, kind] of [
    ['video_edit', 'edits'],
    ['video_extend', 'extensions'],
  ] as const) {
    it(`${tool} starts from a finished job, resolved to its video URL by one free poll`, async () => {
      const jobId = await started(`${unique('source')} polls-0`);
      const { requestId } = decodeJobHandle(jobId);
      const prompt = unique('changed');
      const { result, out } = await call(tool, {
        prompt,
        video: jobId,
        wait_seconds: 0,
        ...(tool === 'video_extend' ? { duration: 4 } : {}),
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(out.status).toBe('running');
      expect(out.job_id).not.toBe(jobId);
      const journal = await gw.upstream('api.x.ai');
      expect(journal.map((e) => `${e.method} ${e.path}`)).toEqual([
        'POST /v1/videos/generations',
        `GET /v1/videos/${requestId}`,
        `POST /v1/videos/${kind}`,
      ]);
      expect(journal[2]?.body).toEqual({
        model: 'grok-imagine-video',
        prompt,
        video: { url: `${gw.info.upstreamUrl}/files/${requestId}.mp4?bytes=4096` },
        ...(tool === 'video_extend' ? { duration: 4 } : {}),
      });
      expect(journal[2]?.headers['idempotency-key']).toMatch(/^gtm-/);
      expect(journal[2]?.headers['idempotency-key']).not.toBe(journal[0]?.headers['idempotency-key']);
    });

    it(`${tool} starts from a video URL, with no poll`, async () => {
      const url = `https://videos.example.org/${unique('clip')}.mp4`;
      const { result } = await call(tool, { prompt: unique('from-url'), video: url, wait_seconds: 0 });
      expect(result.isError, textOf(result)).toBeFalsy();
      const journal = await gw.upstream('api.x.ai');
      expect(journal.map((e) => `${e.method} ${e.path}`)).toEqual([`POST /v1/videos/${kind}`]);
      expect(journal[0]?.body).toMatchObject({ video: { url } });
    });
  }

  it('refuses to start from a job still running, submitting nothing', async () => {
    const jobId = await started(`${unique('unfinished')} polls-5`);
    const { result } = await call('video_edit', {
      prompt: unique('too-soon'),
      video: jobId,
      wait_seconds: 0,
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/is not finished yet \(17% done\).*Nothing was submitted/s);
    expect(submitsIn(await gw.upstream())).toHaveLength(1);
  });

  it('refuses to start from a failed job, submitting nothing', async () => {
    const jobId = await started(`${unique('doomed')} polls-0 video-fails`);
    const { result } = await call('video_extend', {
      prompt: unique('after-failure'),
      video: jobId,
      wait_seconds: 0,
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/failed \(The video was refused by moderation.*Nothing was submitted/);
    expect(submitsIn(await gw.upstream())).toHaveLength(1);
  });
});
