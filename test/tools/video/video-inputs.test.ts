import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { tempDir, textOf } from '../../harness/harness.js';
import { callVideo, submitsOf } from '../../harness/video.js';

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('a tiny not-really-decodable png body'),
]);
let cwd: string;
let outside: string;

const gw = useGateway({
  env: () => {
    const base = tempDir('gtm-video-inputs-');
    cwd = join(base, 'project');
    outside = join(base, 'elsewhere');
    mkdirSync(join(cwd, 'art'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(cwd, 'art', 'start.png'), PNG);
    writeFileSync(join(cwd, 'art', 'fake.png'), 'this is text, not an image');
    writeFileSync(join(cwd, 'art', 'huge.png'), Buffer.concat([PNG, Buffer.alloc(10 * 1024 * 1024)]));
    writeFileSync(join(outside, 'secret.png'), PNG);
    return { CWD: cwd };
  },
});
beforeEach(() => gw.service.setVideoTiming({ pollsUntilDone: 1 }));

async function finishedJob(): Promise<{ jobId: string; url: string }> {
  gw.service.setVideoTiming({ pollsUntilDone: 1 });
  const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'start', wait_seconds: 10 });
  expect(out.status).toBe('done');
  return { jobId: out.job_id, url: out.video_url ?? '' };
}

describe('edit and extend start from a finished job or a URL', () => {
  it('resolves a job_id to its video URL with one free poll', async () => {
    const { jobId, url } = await finishedJob();
    gw.service.resetCounters();
    const edit = await callVideo(gw.conn.client, 'video_edit', {
      prompt: 'make it snow',
      video: jobId,
      wait_seconds: 0,
    });
    expect(edit.out.status).toBe('running');
    expect(edit.out.job_id).not.toBe(jobId);
    expect(gw.service.counters['videos.poll']).toBe(1);
    const [sent] = submitsOf(gw.service);
    expect(sent?.route).toBe('videos.edits');
    expect(sent?.body).toEqual({ model: 'xai/grok-imagine-video', prompt: 'make it snow', video: { url } });
    expect(sent?.headers['idempotency-key']).toMatch(/^gtm-/);
  });

  it('extends from a URL with the seconds to add', async () => {
    const extend = await callVideo(gw.conn.client, 'video_extend', {
      prompt: 'the kite lands',
      video: 'https://cdn.example/kite.mp4',
      duration: 4,
      resolution: '480p',
      wait_seconds: 0,
    });
    expect(extend.out.status).toBe('running');
    expect(submitsOf(gw.service)[0]?.body).toEqual({
      model: 'xai/grok-imagine-video',
      prompt: 'the kite lands',
      video: { url: 'https://cdn.example/kite.mp4' },
      duration: 4,
      resolution: '480p',
    });
  });

  it('refuses a job that is not finished, a failed job and a non-URL, submitting nothing', async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 100 });
    const running = (await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 })).out
      .job_id;
    gw.service.setVideoTiming({ pollsUntilDone: 1, failWith: { code: 'moderation', message: 'refused' } });
    const failed = (await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 })).out
      .job_id;
    const cases: [string, RegExp][] = [
      [running, /not finished yet.*video_status.*then call video_edit again.*Nothing was submitted/s],
      [failed, /failed \(refused \(code moderation\)\).*no video to start from/],
      ['clip.mp4', /job_id \(vj_\.\.\.\) of a finished video job or an http\(s\) URL/],
      ['vj_broken', /not a valid video job_id/],
    ];
    for (const [video, message] of cases) {
      const { result } = await callVideo(gw.conn.client, 'video_edit', {
        prompt: 'p',
        video,
        wait_seconds: 0,
      });
      expect(result.isError, video).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    expect(gw.service.counters['videos.edits']).toBe(0);
  });
});

describe('the starting image of a generation', () => {
  it('sends a local image under the input roots as a data URL, typed by its bytes', async () => {
    const { out } = await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'animate',
      image_path: 'art/start.png',
      wait_seconds: 0,
    });
    expect(out.status).toBe('running');
    const body = submitsOf(gw.service)[0]?.body as { image: { url: string } };
    expect(body.image.url).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
  });

  it('passes an image URL through', async () => {
    await callVideo(gw.conn.client, 'video_generate', {
      prompt: 'animate',
      image_url: 'https://img.example/a.jpg',
      wait_seconds: 0,
    });
    expect(submitsOf(gw.service)[0]?.body).toMatchObject({ image: { url: 'https://img.example/a.jpg' } });
  });

  it('refuses both at once, non-images, big files, paths outside the roots and odd URLs', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { image_url: 'https://img.example/a.jpg', image_path: 'art/start.png' },
        /image_url or image_path, not both/,
      ],
      [{ image_path: 'art/fake.png' }, /not a PNG, JPEG, GIF or WebP image/],
      [{ image_path: 'art/huge.png' }, /limit is 10\.0 MiB/],
      [{ image_path: join(outside, 'secret.png') }, /outside the allowed input roots/],
      [{ image_path: '../elsewhere/secret.png' }, /outside the allowed input roots/],
      [{ image_url: 'file:///etc/passwd' }, /image_url must be an http\(s\) URL or a data:image/],
    ];
    for (const [args, message] of cases) {
      const { result } = await callVideo(gw.conn.client, 'video_generate', {
        prompt: 'p',
        ...args,
        wait_seconds: 0,
      });
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    expect(gw.service.counters['videos.generations']).toBe(0);
  });
});

describe('job handles are validated', () => {
  it('refuses malformed and tampered handles without calling the service', async () => {
    const { jobId } = await finishedJob();
    gw.service.resetCounters();
    const last = jobId.at(-1) === 'A' ? 'B' : 'A';
    const middle = Math.floor(jobId.length / 2);
    const flipped = jobId.slice(0, middle) + (jobId[middle] === 'x' ? 'y' : 'x') + jobId.slice(middle + 1);
    const bad = [
      jobId.slice(0, -1) + last,
      flipped,
      jobId.slice(0, 12),
      jobId.replace('vj_', 'vx_'),
      'vj_',
      'vj_!!!',
      `${jobId} extra`,
      requestIdLike(),
    ];
    for (const jobIdArg of bad) {
      const { result } = await callVideo(gw.conn.client, 'video_status', {
        job_id: jobIdArg,
        wait_seconds: 0,
      });
      expect(result.isError, jobIdArg).toBe(true);
      expect(textOf(result)).toMatch(/is not a valid video job_id \(.+\)\. Use the job_id exactly/);
    }
    expect(gw.service.counters['videos.poll']).toBe(0);
  });
});

function requestIdLike(): string {
  return 'vid_0123456789abcdef';
}
