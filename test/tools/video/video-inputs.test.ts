// What the video tools refuse before calling the gateway: starting images they cannot send and job
// handles that are not theirs. The starting points they accept are in video.real.test.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { tempDir, textOf } from '../../harness/harness.js';
import { callVideo } from '../../harness/video.js';

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

describe('the starting image of a generation', () => {
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
