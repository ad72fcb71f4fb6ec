import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectStdio,
  SERVER_NODE,
  type Spawned,
  structuredOf,
  tempDir,
  textOf,
} from '../harness/harness.js';
import { formatMiB, MiB, sampleResident, settledResident } from '../harness/load.js';
import {
  type RecordedFile,
  type ReferenceService,
  startReferenceService,
  synthesizeAudio,
  videoFileBytes,
  videoFileSha256,
} from '../reference-service/index.js';

// Its own file, so its own process; the server is the built CLI over stdio, so neither this
// process nor the reference service (which runs in this process) is in what is measured.
const BIG = 500 * MiB;
const SERVER_NODE_MAJOR = Number(
  execFileSync(SERVER_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }),
);
/**
 * The warm-up transfer. It must be large enough for V8 to finish compiling the hot code of the
 * transfer path (undici's WebAssembly HTTP parser and the stream code tier up after some tens of
 * MiB); those compilations hold 25-45 MiB for a moment, once per process, whatever the size.
 */
const WARM_UP = 32 * MiB;
/**
 * The bounds say the transfer streams: the file is 500 MiB, the server holds a small, fixed part
 * of it. What they allow is V8's own doing: every socket or file read allocates a fresh buffer of
 * up to 64 KiB, and V8 frees young buffers only at a scavenge, which comes once its young
 * generation is full, so up to twice its semi-space of dead buffers waits (16 MiB semi-spaces
 * on Node 22, larger from Node 24). Measured on Node 22: +2 to +4 MiB during a transfer after the
 * warm-up on a quiet machine and +20 MiB on a busy one, +36 to +41 MiB over RSS before the first
 * transfer (one-time compiled code included) and +54 MiB on a busy machine; on Node 24 and 26:
 * +18 to +59 MiB during (the most on a busy machine), +73 to +86 MiB over the first. A leak would
 * grow with the 500 MiB.
 */
const MAX_GROWTH = (SERVER_NODE_MAJOR >= 24 ? 72 : 36) * MiB;
const MAX_ABOVE_IDLE = (SERVER_NODE_MAJOR >= 24 ? 110 : 76) * MiB;
const SAMPLE_EVERY_MS = 25;
const CALL_TIMEOUT_MS = 120_000;

let service: ReferenceService;
let server: Spawned;
let cwd: string;
let pid: number;
/** RSS before any transfer: the server has started, discovered models and submitted a job. */
let idle: number;

async function sparseAudio(name: string, size: number): Promise<string> {
  // An mp3 header, then a hole: the file system stores almost nothing, reads give zeros.
  const path = join(cwd, name);
  const handle = await open(path, 'w');
  await handle.write(synthesizeAudio(name, 'mp3'), 0);
  await handle.truncate(size);
  await handle.close();
  return path;
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

async function finishedJob(videoBytes: number): Promise<string> {
  service.setVideoTiming({ pollsUntilDone: 0, videoBytes });
  const started = await server.client.callTool({
    name: 'video_generate',
    // Each job of its own size: the same prompt again would be answered with the earlier job.
    arguments: { prompt: `big, ${videoBytes} bytes`, wait_seconds: 0 },
  });
  return structuredOf<{ job_id: string }>(started).job_id;
}

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await server.client.callTool({ name, arguments: args }, undefined, {
    timeout: CALL_TIMEOUT_MS,
  })) as CallToolResult;
  if (result.isError) throw new Error(`${name} failed: ${textOf(result)}`);
  return result;
}

/** Runs `transfer` while sampling the server's RSS; returns the RSS right before and the peak. */
async function measured(transfer: () => Promise<CallToolResult>) {
  const before = await settledResident(pid);
  const sampler = sampleResident(pid, SAMPLE_EVERY_MS);
  const started = Date.now();
  try {
    const result = await transfer();
    return { result, before, ms: Date.now() - started, ...sampler.stop() };
  } catch (error) {
    sampler.stop();
    throw error;
  }
}

function report(what: string, m: { before: number; peak: number; ms: number; samples: number }): void {
  console.info(
    `${what}: ${formatMiB(BIG)} in ${m.ms} ms; server RSS before any transfer ${formatMiB(idle)}, ` +
      `before this one ${formatMiB(m.before)}, peak ${formatMiB(m.peak)} (+${formatMiB(m.peak - m.before)}; ` +
      `+${formatMiB(m.peak - idle)} over the first), ${m.samples} samples`,
  );
}

beforeAll(async () => {
  cwd = tempDir('gtm-stream-');
  const { bavail, bsize } = await statfs(cwd);
  // The downloaded video is a real 500 MB file (the upload source is sparse and costs nothing).
  if (bavail * bsize < BIG + 512 * MiB) {
    throw new Error(
      `${cwd} has ${formatMiB(bavail * bsize)} free; this test needs ${formatMiB(BIG + 512 * MiB)}.`,
    );
  }
  service = await startReferenceService();
  server = await connectStdio({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_MAX_UPLOAD_MB: '600',
    GATEWAY_LOG_LEVEL: 'warn',
    CWD: cwd,
  });
  const running = server.pid();
  if (running === null) throw new Error('the server is not running');
  pid = running;
  await finishedJob(WARM_UP);
  idle = await settledResident(pid);
});
afterAll(async () => {
  await server?.close();
  await service?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

describe('500 MB through the server over stdio', () => {
  it('downloads a 500 MB video to disk with flat memory, byte for byte', async () => {
    expect(videoFileSha256(300_000)).toBe(createHash('sha256').update(videoFileBytes(300_000)).digest('hex'));

    const warm = await call('video_status', { job_id: await finishedJob(WARM_UP), download: true });
    const warmPath = structuredOf<{ file_path: string }>(warm).file_path;
    expect((await stat(warmPath)).size).toBe(WARM_UP);
    await rm(warmPath);

    const jobId = await finishedJob(BIG);
    service.resetCounters();
    const m = await measured(() => call('video_status', { job_id: jobId, download: true }));
    report('download', m);
    const path = structuredOf<{ file_path: string; status: string }>(m.result).file_path;
    try {
      expect(service.counters['files.video']).toBe(1);
      expect((await stat(path)).size).toBe(BIG);
      expect(await sha256OfFile(path)).toBe(videoFileSha256(BIG));
    } finally {
      await rm(path, { force: true });
    }
    expect(m.peak - m.before).toBeLessThan(MAX_GROWTH);
    expect(m.peak - idle).toBeLessThan(MAX_ABOVE_IDLE);
  });

  it('uploads a 500 MB file for transcription with flat memory, byte for byte', async () => {
    const big = await sparseAudio('long-meeting.mp3', BIG);
    await sparseAudio('warm-up.mp3', WARM_UP);
    await call('audio_transcribe', { file_path: 'warm-up.mp3' });

    service.resetCounters();
    const m = await measured(() =>
      call('audio_transcribe', { file_path: 'long-meeting.mp3', max_length: 1000 }),
    );
    report('upload', m);
    const uploads = service.requests.filter((r) => r.route === 'transcriptions');
    expect(uploads).toHaveLength(1);
    const received = (uploads[0]!.body as { file: RecordedFile }).file;
    expect(received).toMatchObject({ size: BIG, type: 'audio/mpeg', name: 'long-meeting.mp3' });
    expect(received.sha256).toBe(await sha256OfFile(big));
    expect(structuredOf<{ truncated: boolean }>(m.result).truncated).toBe(true);
    expect(m.peak - m.before).toBeLessThan(MAX_GROWTH);
    expect(m.peak - idle).toBeLessThan(MAX_ABOVE_IDLE);
  });
});
