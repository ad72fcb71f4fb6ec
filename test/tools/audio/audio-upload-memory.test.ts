import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectInMemory, structuredOf, tempDir } from '../../harness/harness.js';
import {
  type ReferenceService,
  startReferenceService,
  synthesizeAudio,
} from '../../reference-service/index.js';

// Its own file, so its own process: the memory samples see only this upload.
const SIZE = 200 * 1024 * 1024;
const MAX_GROWTH = 64 * 1024 * 1024;

let service: ReferenceService;
let conn: Connected;
let cwd: string;

beforeAll(async () => {
  service = await startReferenceService();
  cwd = tempDir('gtm-big-');
  // A sparse 200 MB file: an mp3 header, then a hole the file system does not store.
  const handle = await open(join(cwd, 'long-meeting.mp3'), 'w');
  await handle.write(synthesizeAudio('big', 'mp3'), 0);
  await handle.truncate(SIZE);
  await handle.close();
  const warmUp = await open(join(cwd, 'warm-up.mp3'), 'w');
  await warmUp.write(synthesizeAudio('warm', 'mp3'), 0);
  await warmUp.truncate(8 * 1024 * 1024);
  await warmUp.close();
  conn = await connectInMemory({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_MAX_UPLOAD_MB: '256',
    CWD: cwd,
  });
});
afterAll(async () => {
  await conn.close();
  await service.close();
});

describe('a 200 MB upload', () => {
  it('streams with flat memory, reports progress, and pages the long transcript', async () => {
    // A first, smaller upload compiles the code path and sizes the heap, so the baseline is fair.
    await conn.client.callTool({ name: 'audio_transcribe', arguments: { file_path: 'warm-up.mp3' } });
    service.resetCounters();
    const baseline = process.memoryUsage();
    let peakRss = baseline.rss;
    let peakBuffers = baseline.arrayBuffers;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakRss = Math.max(peakRss, now.rss);
      peakBuffers = Math.max(peakBuffers, now.arrayBuffers);
    }, 5);
    const progress: { progress: number; total?: number }[] = [];
    let result: CallToolResult;
    try {
      result = (await conn.client.callTool(
        { name: 'audio_transcribe', arguments: { file_path: 'long-meeting.mp3', max_length: 10_000 } },
        undefined,
        { onprogress: (p) => progress.push(p), timeout: 60_000 },
      )) as CallToolResult;
    } finally {
      clearInterval(sampler);
    }
    expect(result.isError).toBeFalsy();
    const upload = service.requests.find((r) => r.route === 'transcriptions')?.body as {
      file: { size: number; type: string };
    };
    expect(upload.file).toMatchObject({ size: SIZE, type: 'audio/mpeg' });
    expect(peakRss - baseline.rss).toBeLessThan(MAX_GROWTH);
    expect(peakBuffers - baseline.arrayBuffers).toBeLessThan(MAX_GROWTH);

    // Progress in bytes: growing, bounded in count, ending at the total.
    expect(progress.length).toBeGreaterThan(10);
    expect(progress.length).toBeLessThanOrEqual(SIZE / (1024 * 1024) + 2);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    }
    expect(progress.at(-1)).toMatchObject({ progress: SIZE, total: SIZE });

    const out = structuredOf<{ truncated: boolean; total_length: number; file_path: string }>(result);
    expect(out.truncated).toBe(true);
    expect(out.total_length).toBeGreaterThan(100_000);
    expect(out.file_path).toMatch(/long-meeting-transcript-.*\.txt$/);
  });
});
