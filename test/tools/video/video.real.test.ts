// The video tools on both gateways: the cases both can produce run on each (describe.each). A job's
// course is set per backend: the reference service is told its timing, 9router's fake xAI reads
// markers in the prompt (`polls-<n>`, `video-fails`, `video-bytes-<n>`). What matters is what
// reached the video provider behind the gateway (submits, polls, their bodies and keys) and what
// the agent was told. Timing, faults and accounts only the reference service makes are in
// video-lifecycle.test.ts and video-faults.test.ts, refusals before any call in
// video-inputs.test.ts; 9router's own cases are at the end.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeJobHandle, encodeJobHandle } from '../../../src/tools/video/job-handle.js';
import { BACKENDS, type Backend } from '../../harness/backends.js';
import { tempDir, textOf } from '../../harness/harness.js';
import { callVideo, requestIdOf } from '../../harness/video.js';
import { videoBytes } from '../../nine-router/upstream/video.js';
import { type JournalEntry, unique, useRealGateway } from '../../nine-router/use.js';
import { videoFileBytes } from '../../reference-service/index.js';

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(64, 7),
]);
/** The failure both fakes report for a refused video. */
const REFUSED = { code: 'content_moderation', message: 'The video was refused by moderation.' };
const REFUSED_ERROR = 'The video was refused by moderation (code content_moderation)';

interface JobCourse {
  /** Polls that answer "pending" before the last one (default 1). */
  pending?: number;
  fails?: boolean;
  /** The finished file's size (default 4096). */
  bytes?: number;
}

/** A video call as the provider behind the gateway received it, the model named as the tools do. */
interface VideoCall {
  kind: 'generations' | 'edits' | 'extensions' | 'poll';
  requestId: string | undefined;
  body: Record<string, unknown> | undefined;
  idempotencyKey: string | undefined;
}

async function videoCalls(backend: Backend): Promise<VideoCall[]> {
  if (backend.reference) {
    return backend.reference.requests
      .filter((r) => r.route.startsWith('videos.'))
      .map((r) => ({
        kind: r.route.slice('videos.'.length) as VideoCall['kind'],
        requestId: r.route === 'videos.poll' ? r.path.split('/').at(-1) : undefined,
        body: r.route === 'videos.poll' ? undefined : (r.body as Record<string, unknown>),
        idempotencyKey: r.headers['idempotency-key'],
      }));
  }
  const journal = (await backend.nineRouter?.upstream('api.x.ai')) ?? [];
  return journal.map((e: JournalEntry) => {
    const submit =
      e.method === 'POST' ? /^\/v1\/videos\/(generations|edits|extensions)$/.exec(e.path)?.[1] : undefined;
    const body = e.body as Record<string, unknown> | undefined;
    return {
      kind: (submit ?? 'poll') as VideoCall['kind'],
      requestId: submit ? undefined : e.path.split('/').at(-1),
      // 9router strips the provider from the model: named back as the tools name it.
      body: submit && body ? { ...body, model: `xai/${body.model}` } : undefined,
      idempotencyKey: e.headers['idempotency-key'] as string | undefined,
    };
  });
}

const submitsIn = (calls: VideoCall[]) => calls.filter((c) => c.kind !== 'poll');
const pollsIn = (calls: VideoCall[], requestId?: string) =>
  calls.filter((c) => c.kind === 'poll' && (!requestId || c.requestId === requestId));

describe.each(BACKENDS)('video tools on %s', (_name, use) => {
  const cwd = tempDir('gtm-video-');
  const outputDir = join(cwd, 'out');
  const backend = use({ env: () => ({ CWD: cwd, GATEWAY_OUTPUT_DIR: outputDir }) });
  const call = (name: string, args: Record<string, unknown>) => callVideo(backend.conn.client, name, args);

  /** A prompt for the next submit, the job's course set the backend's way. */
  function prompt(label: string, course: JobCourse = {}): string {
    const pending = course.pending ?? 1;
    const bytes = course.bytes ?? 4096;
    if (backend.reference) {
      backend.reference.setVideoTiming({
        pollsUntilDone: pending + 1,
        videoBytes: bytes,
        failWith: course.fails ? REFUSED : undefined,
      });
      return unique(label);
    }
    return `${unique(label)} polls-${pending} video-bytes-${bytes}${course.fails ? ' video-fails' : ''}`;
  }

  /** The progress the provider reports at the `poll`-th of `pending` pending polls. */
  function reported(poll: number, pending: number): number {
    const share = poll / (pending + 1);
    return backend.reference ? Math.floor(share * 99) : Math.round(share * 100);
  }

  /** Where the provider serves a finished job's file, and its bytes. */
  function finishedVideo(requestId: string, bytes = 4096): { url: string; file: Buffer } {
    if (backend.reference) {
      return {
        url: `${backend.reference.url}/files/video/${requestId}.mp4?bytes=${bytes}`,
        file: videoFileBytes(bytes),
      };
    }
    const upstream = backend.nineRouter?.info.upstreamUrl;
    return { url: `${upstream}/files/${requestId}.mp4?bytes=${bytes}`, file: videoBytes(requestId, bytes) };
  }

  /** Starts a 6 s job (9router's fake makes every video 6 s) without waiting: one submit. */
  async function started(label: string, course: JobCourse = {}): Promise<string> {
    const { result, out } = await call('video_generate', {
      prompt: prompt(label, course),
      duration: 6,
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    return out.job_id;
  }

  it('submits once with an Idempotency-Key, and answers a handle at once', async () => {
    const text = prompt('a red kite');
    const { result, out, progress } = await call('video_generate', {
      prompt: text,
      duration: 6,
      aspect_ratio: '16:9',
      resolution: '720p',
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(out).toMatchObject({ status: 'running', progress: null, video_url: null, file_path: null });
    expect(out.job_id).toMatch(/^vj_[A-Za-z0-9_-]{10,}$/);
    expect(textOf(result)).toMatch(
      /^New video job `vj_[^`]+` is running\.\nTo follow it, call video_status with this job_id.*bills, a new generation/s,
    );
    expect(textOf(result)).toMatch(/call video_status with this job_id.*Do not submit again/s);
    expect(progress).toEqual([]);
    const calls = await videoCalls(backend);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.kind).toBe('generations');
    expect(calls[0]?.body).toEqual({
      model: 'xai/grok-imagine-video',
      prompt: text,
      duration: 6,
      aspect_ratio: '16:9',
      resolution: '720p',
    });
    expect(calls[0]?.idempotencyKey).toMatch(/^gtm-[0-9a-f-]{36}$/);
  });

  it("sends the caller's idempotency_key unchanged, and a fresh key on every other submit", async () => {
    const key = unique('retry-key');
    await call('video_generate', { prompt: prompt('keyed'), wait_seconds: 0, idempotency_key: key });
    await call('video_generate', { prompt: prompt('fresh'), wait_seconds: 0 });
    await call('video_generate', { prompt: prompt('fresh'), wait_seconds: 0 });
    const keys = submitsIn(await videoCalls(backend)).map((s) => s.idempotencyKey);
    expect(keys[0]).toBe(key);
    expect(new Set(keys).size).toBe(3);
  });

  it('waits inline until the job is done, with rising progress, polling but never submitting again', async () => {
    const { result, out, progress } = await call('video_generate', {
      prompt: prompt('waited', { pending: 2 }),
      duration: 6,
      wait_seconds: 30,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const requestId = requestIdOf(out.job_id);
    const { url } = finishedVideo(requestId);
    expect(out).toMatchObject({ status: 'done', progress: 100, duration: 6, video_url: url });
    expect(textOf(result)).toMatch(/^New video job `vj_[^`]+` is done/);
    expect(textOf(result)).toContain(`is done: 6 s video at ${url}`);
    expect(result.content).toContainEqual(
      expect.objectContaining({ type: 'resource_link', uri: url, mimeType: 'video/mp4' }),
    );
    expect(progress.map((p) => p.progress)).toEqual([reported(1, 2), reported(2, 2), 100]);
    expect(progress.at(-1)?.message).toBe('video done');
    const calls = await videoCalls(backend);
    expect(submitsIn(calls)).toHaveLength(1);
    expect(pollsIn(calls, requestId)).toHaveLength(3);
  });

  it('follows a job to done, says its URL is temporary, and downloads it into the output directory', async () => {
    const jobId = await started('saved', { pending: 2, bytes: 20_000 });
    const requestId = requestIdOf(jobId);
    const { url, file } = finishedVideo(requestId, 20_000);
    const followed = await call('video_status', { job_id: jobId, wait_seconds: 30 });
    expect(followed.result.isError, textOf(followed.result)).toBeFalsy();
    expect(followed.out).toMatchObject({
      status: 'done',
      progress: 100,
      duration: 6,
      video_url: url,
      file_path: null,
    });
    expect(followed.progress.map((p) => p.progress)).toEqual([reported(1, 2), reported(2, 2), 100]);
    expect(followed.progress.every((p) => p.total === 100)).toBe(true);
    expect(followed.result.content).toContainEqual(
      expect.objectContaining({ type: 'resource_link', uri: url, mimeType: 'video/mp4' }),
    );
    expect(textOf(followed.result)).toMatch(/temporary.*download: true/s);
    expect(pollsIn(await videoCalls(backend), requestId)).toHaveLength(3);

    const saved = await call('video_status', { job_id: jobId, wait_seconds: 0, download: true });
    expect(saved.result.isError, textOf(saved.result)).toBeFalsy();
    const path = saved.out.file_path as string;
    expect(saved.out).toMatchObject({ job_id: jobId, status: 'done', progress: 100 });
    expect(dirname(path)).toBe(outputDir);
    // Named after the job, in the characters a file name keeps.
    const named = requestId.replace(/[^A-Za-z0-9-]/g, '-');
    expect(basename(path)).toMatch(new RegExp(`^video-${named}-\\d{8}-\\d{6}\\.mp4$`));
    expect(readFileSync(path).equals(file)).toBe(true);
    expect(textOf(saved.result)).toContain(`video saved to ${path} (`);
    const uri = `gateway-tools://output/${basename(path)}`;
    expect(saved.result.content).toContainEqual(
      expect.objectContaining({ type: 'resource_link', uri, mimeType: 'video/mp4' }),
    );
    const [read] = (await backend.conn.client.readResource({ uri })).contents;
    expect(Buffer.from((read as { blob: string }).blob, 'base64').equals(file)).toBe(true);
    expect(submitsIn(await videoCalls(backend))).toHaveLength(1);
  });

  it('looks once with wait_seconds 0 and says how to follow a running job', async () => {
    const jobId = await started('slow', { pending: 5 });
    const { result, out } = await call('video_status', { job_id: jobId, wait_seconds: 0 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const progress = reported(1, 5);
    expect(out).toMatchObject({ status: 'running', progress });
    expect(textOf(result)).toContain(`still running (${progress}% done, service status "pending")`);
    expect(textOf(result)).toMatch(/call video_status with this job_id/);
    expect(pollsIn(await videoCalls(backend))).toHaveLength(1);
  });

  it('says the gateway does not know a job it never started', async () => {
    const { connectionId } = decodeJobHandle(await started('real'));
    const unknown = encodeJobHandle({ requestId: '00000000-0000-4000-8000-000000000000', connectionId });
    const { result } = await call('video_status', { job_id: unknown, wait_seconds: 0 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The service does not know this job/);
    expect(pollsIn(await videoCalls(backend))).toHaveLength(1);
  });

  it('sends an image URL for image-to-video', async () => {
    const image = 'https://images.example.org/start.png';
    const { result } = await call('video_generate', {
      prompt: prompt('animated'),
      image_url: image,
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [submit] = submitsIn(await videoCalls(backend));
    expect(submit?.body).toMatchObject({ image: { url: image } });
  });

  it('sends a local image under the input roots as a data URL, typed by its bytes', async () => {
    writeFileSync(join(cwd, 'start.png'), PNG);
    const { result } = await call('video_generate', {
      prompt: prompt('from-file'),
      image_path: 'start.png',
      wait_seconds: 0,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [submit] = submitsIn(await videoCalls(backend));
    expect(submit?.body).toMatchObject({ image: { url: `data:image/png;base64,${PNG.toString('base64')}` } });
  });

  it('reports a job that fails as FAILED with the reason, without an error result', async () => {
    const { result, out } = await call('video_generate', {
      prompt: prompt('refused', { fails: true }),
      wait_seconds: 30,
    });
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({ status: 'failed', video_url: null, error: REFUSED_ERROR });
    expect(textOf(result)).toMatch(/^FAILED — new video job `vj_/);
    expect(textOf(result)).toContain(REFUSED_ERROR);
    expect(submitsIn(await videoCalls(backend))).toHaveLength(1);
  });

  for (const [tool, kind] of [
    ['video_edit', 'edits'],
    ['video_extend', 'extensions'],
  ] as const) {
    it(`${tool} starts from a finished job, resolved to its video URL by one free poll`, async () => {
      const jobId = await started('source', { pending: 0 });
      const requestId = requestIdOf(jobId);
      const text = unique('changed');
      const { result, out } = await call(tool, {
        prompt: text,
        video: jobId,
        wait_seconds: 0,
        ...(tool === 'video_extend' ? { duration: 4 } : {}),
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(out.status).toBe('running');
      expect(out.job_id).not.toBe(jobId);
      const calls = await videoCalls(backend);
      expect(calls.map((c) => c.kind)).toEqual(['generations', 'poll', kind]);
      expect(calls[1]?.requestId).toBe(requestId);
      expect(calls[2]?.body).toEqual({
        model: 'xai/grok-imagine-video',
        prompt: text,
        video: { url: finishedVideo(requestId).url },
        ...(tool === 'video_extend' ? { duration: 4 } : {}),
      });
      expect(calls[2]?.idempotencyKey).toMatch(/^gtm-/);
      expect(calls[2]?.idempotencyKey).not.toBe(calls[0]?.idempotencyKey);
    });

    it(`${tool} starts from a video URL, with no poll`, async () => {
      const url = `https://videos.example.org/${unique('clip')}.mp4`;
      const text = unique('from-url');
      const extra = tool === 'video_extend' ? { duration: 4, resolution: '480p' } : {};
      const { result } = await call(tool, { prompt: text, video: url, wait_seconds: 0, ...extra });
      expect(result.isError, textOf(result)).toBeFalsy();
      const calls = await videoCalls(backend);
      expect(calls.map((c) => c.kind)).toEqual([kind]);
      expect(calls[0]?.body).toEqual({
        model: 'xai/grok-imagine-video',
        prompt: text,
        video: { url },
        ...extra,
      });
    });
  }

  it('refuses to start from a job still running, a failed job or what is not a video, submitting nothing', async () => {
    const running = await started('unfinished', { pending: 5 });
    const failed = await started('doomed', { pending: 0, fails: true });
    const cases: [string, string, RegExp][] = [
      [
        'video_edit',
        running,
        new RegExp(
          `is not finished yet \\(${reported(1, 5)}% done\\).*video_status.*then call video_edit again.*Nothing was submitted`,
          's',
        ),
      ],
      [
        'video_extend',
        failed,
        /failed \(The video was refused by moderation.*no video to start from.*Nothing was submitted/s,
      ],
      ['video_edit', 'clip.mp4', /job_id \(vj_\.\.\.\) of a finished video job or an http\(s\) URL/],
      ['video_edit', 'vj_broken', /not a valid video job_id/],
    ];
    for (const [tool, video, message] of cases) {
      const { result } = await call(tool, { prompt: unique('too-soon'), video, wait_seconds: 0 });
      expect(result.isError, video).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    expect(submitsIn(await videoCalls(backend))).toHaveLength(2);
  });
});

describe('video tools on 9router only', () => {
  const gw = useRealGateway({ env: { CWD: tempDir('gtm-real-video-') } });
  const call = (name: string, args: Record<string, unknown>) => callVideo(gw.conn.client, name, args);

  it('keeps the connection id the gateway names (a UUID) in the handle for the polls', async () => {
    const { out } = await call('video_generate', { prompt: unique('handle'), wait_seconds: 0 });
    expect(decodeJobHandle(out.job_id).connectionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends a submit once even when the upstream fails it', async () => {
    const { result } = await call('video_generate', {
      prompt: `${unique('broken')} fault-503`,
      wait_seconds: 0,
    });
    expect(result.isError).toBe(true);
    const submits = (await gw.upstream('api.x.ai')).filter((e) => e.method === 'POST');
    expect(submits).toHaveLength(1);
  });
});
