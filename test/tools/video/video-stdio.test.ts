import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, tempDir } from '../../harness/harness.js';
import { callVideo, pollsOf, requestIdOf, until } from '../../harness/video.js';
import {
  type ReferenceService,
  startReferenceService,
  videoFileBytes,
} from '../../reference-service/index.js';

const BIG = 200 * 1024 * 1024;
let service: ReferenceService;

beforeAll(async () => {
  service = await startReferenceService();
});
afterAll(async () => {
  await service.close();
});
afterEach(() => {
  service.clearFaults();
  service.resetCounters();
  service.setVideoTiming({ pollsUntilDone: 2, videoBytes: undefined });
});

function env(cwd: string): Record<string, string> {
  return {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_LOG_LEVEL: 'warn',
    CWD: cwd,
  };
}

describe('video jobs across server processes (built dist/cli.js over stdio)', () => {
  it('a fresh process follows and downloads (200 MB, flat memory) a job another process started', async () => {
    service.setVideoTiming({ pollsUntilDone: 2, videoBytes: BIG });
    const cwd = tempDir('gtm-video-stdio-');
    const first = await connectStdio(env(cwd));
    let jobId: string;
    try {
      const submitted = await callVideo(first.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      jobId = submitted.out.job_id;
      expect(submitted.out.status).toBe('running');
    } finally {
      await first.close();
    }

    const second = await connectStdio(env(cwd));
    try {
      const status = await callVideo(second.client, 'video_status', {
        job_id: jobId,
        wait_seconds: 30,
        download: true,
      });
      expect(status.result.isError).toBeFalsy();
      expect(status.out.status).toBe('done');
      const path = status.out.file_path ?? '';
      expect(statSync(path).size).toBe(BIG);
      expect(await sha256OfFile(path)).toBe(expectedSha256(BIG));
      const peak = peakRssBytes(second.pid());
      // The process idles at ~120 MB; holding the file in memory would put it past baseline + 200 MB.
      if (peak !== null) expect(peak).toBeLessThan(BIG);
    } finally {
      await second.close();
    }
    const owner = service.videoJobs.get(requestIdOf(jobId))?.connectionId;
    const polls = pollsOf(service, jobId);
    expect(polls.length).toBe(2);
    expect(polls.every((p) => p.headers['x-connection-id'] === owner)).toBe(true);
    expect(service.counters['videos.generations']).toBe(1);
  });

  it('cancelling over stdio aborts the wait and its poll', async () => {
    service.setVideoTiming({ pollsUntilDone: 1000 });
    const server = await connectStdio({ ...env(tempDir('gtm-video-stdio-')), GATEWAY_TIMEOUT_MS: '30000' });
    try {
      const { out } = await callVideo(server.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      service.inject('videos.poll', { hang: true, times: Number.POSITIVE_INFINITY });
      const controller = new AbortController();
      const call = callVideo(
        server.client,
        'video_status',
        { job_id: out.job_id, wait_seconds: 45 },
        controller.signal,
      );
      call.catch(() => undefined);
      await until(() => service.counters['videos.poll'] === 1, 5_000, 'first poll');
      controller.abort();
      await expect(call).rejects.toThrow();
      await until(() => service.abandoned['videos.poll'] === 1, 5_000, 'poll aborted');
      // The server is still well: a fresh call is answered.
      service.clearFaults();
      const after = await callVideo(server.client, 'video_status', { job_id: out.job_id, wait_seconds: 0 });
      expect(after.out.status).toBe('running');
      expect(service.counters['videos.poll']).toBe(2);
    } finally {
      await server.close();
    }
  });
});

/** The server's peak resident memory (Linux only; null elsewhere). */
function peakRssBytes(pid: number | null): number | null {
  const file = `/proc/${pid}/status`;
  if (pid === null || !existsSync(file)) return null;
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(file, 'utf8'))?.[1];
  return kb ? Number(kb) * 1024 : null;
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The reference file's hash, built block by block (its blocks repeat after the first). */
function expectedSha256(size: number): string {
  const block = 64 * 1024;
  const firstTwo = videoFileBytes(2 * block);
  const hash = createHash('sha256').update(firstTwo.subarray(0, block));
  for (let offset = block; offset < size; offset += block) hash.update(firstTwo.subarray(block, block * 2));
  return hash.digest('hex');
}
