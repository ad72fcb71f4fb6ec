import { extname } from 'node:path';
import { formatBytes } from '../../files/files.js';
import { mediaType, mediaTypeFor } from '../../files/media-types.js';
import { prepareOutputDir, type SavedFile, saveStream } from '../../files/output-files.js';
import { openVideoDownload, pollVideo, type VideoJobState } from '../../gateway/endpoints/videos.js';
import { ServiceError } from '../../gateway/errors.js';
import { isHttpUrl } from '../../lib/urls.js';
import { UserError } from '../../lib/user-error.js';
import { noteJobStatus } from '../billing.js';
import type { ToolContext } from '../define.js';
import { RESULT_BUDGET } from '../result-budget.js';
import { encodeJobHandle, type JobRef } from './job-handle.js';
import { type risingProgress, type WaitOutcome, waitForJob } from './wait.js';

/** Downloads larger than this are refused (before any byte is written when the size is known). */
export const MAX_VIDEO_DOWNLOAD_BYTES = 2 * 1024 ** 3;
/** Download progress is sent at most this often. */
const DOWNLOAD_PROGRESS_EVERY_MS = 1_000;

/**
 * One free status read, kept in the ledger as the job's last known status (for video_status
 * without a job_id). A finished job's video URL is kept only when it is http(s).
 */
export async function readJob(ref: JobRef, ctx: ToolContext, signal: AbortSignal): Promise<VideoJobState> {
  const state = await pollVideo(ctx.runtime.service.client, ref.requestId, ref.connectionId, signal);
  await noteJobStatus(ctx, encodeJobHandle(ref), state.status);
  // A URL that is not http(s), or longer than any real one, is no URL to hand on.
  const usable = state.videoUrl && isHttpUrl(state.videoUrl) && state.videoUrl.length <= RESULT_BUDGET.url;
  return state.videoUrl && !usable ? { ...state, videoUrl: null } : state;
}

/**
 * Polls the job until it ends or `deadline` passes, sending progress notifications (when the
 * client asked for them) and stopping at once when the client cancels.
 */
export function followJob(
  ref: JobRef,
  options: { deadline: number; pollFirst: boolean },
  ctx: ToolContext,
  report: ReturnType<typeof risingProgress>,
): Promise<WaitOutcome<VideoJobState>> {
  const started = Date.now();
  let lastServiceProgress: number | null = null;
  return waitForJob({
    poll: (signal) => readJob(ref, ctx, signal),
    isFinished: (state) => state.status !== 'running',
    deadline: options.deadline,
    signal: ctx.signal,
    pollFirst: options.pollFirst,
    onState(state) {
      if (state.status === 'done') return report(100, 100, 'video done');
      if (state.status === 'failed') return report(lastServiceProgress ?? 0, 100, 'video failed');
      if (state.progress !== null) {
        lastServiceProgress = state.progress;
        return report(state.progress, 100, `video ${Math.round(state.progress)}% (${state.rawStatus})`);
      }
      // No figure from the service: count seconds waited (no total), or repeat the last figure.
      const waited = Math.round((Date.now() - started) / 1000);
      return lastServiceProgress === null
        ? report(waited, undefined, `video ${state.rawStatus}, ${waited} s waited`)
        : report(lastServiceProgress, 100, `video ${state.rawStatus}`);
    },
  });
}

/**
 * Streams a finished video into the output directory (collision-free name, size-capped, flat
 * memory), reporting bytes as progress. A cancelled or failed download leaves no partial file.
 */
export async function saveVideo(
  url: string,
  ref: JobRef,
  ctx: ToolContext,
  report: ReturnType<typeof risingProgress>,
): Promise<SavedFile> {
  const { outputDir, workDir } = await ctx.workspace();
  await prepareOutputDir(outputDir, workDir);
  const download = await openVideoDownload(ctx.runtime.service.client, url, ctx.signal).catch(
    (error: unknown) => {
      // A URL into the local network is not worth retrying: say why, once.
      throw error instanceof ServiceError && error.kind === 'blocked'
        ? new UserError(error.describe())
        : error;
    },
  );
  if (download.bytes !== null && download.bytes > MAX_VIDEO_DOWNLOAD_BYTES) {
    download.discard();
    throw new UserError(
      `The video is ${formatBytes(download.bytes)}, over the ${formatBytes(MAX_VIDEO_DOWNLOAD_BYTES)} download limit, so it was not saved.`,
    );
  }
  const total = download.bytes || undefined;
  let received = 0;
  let reported = 0;
  let lastReport = 0;
  const progress = () => {
    lastReport = Date.now();
    reported = received;
    return report(received, total, `downloading video: ${formatBytes(received)}`);
  };
  async function* counted(source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    for await (const chunk of source) {
      received += chunk.length;
      if (Date.now() - lastReport >= DOWNLOAD_PROGRESS_EVERY_MS) await progress();
      yield chunk;
    }
    // The whole file, so the last notification says so.
    if (received > reported) await progress();
  }
  const extension = videoExtension(download.contentType, url);
  return saveStream(
    counted(download.body),
    { outputDir, stem: `video-${ref.requestId}`, extension, workDir },
    MAX_VIDEO_DOWNLOAD_BYTES,
    ctx.signal,
  );
}

/**
 * The saved file's extension: the video type the host declared, else the video type the URL's
 * extension names, else mp4 (what the service's videos are).
 */
function videoExtension(contentType: string | null, url: string): string {
  const declared = mediaType(contentType);
  const type = declared?.kind === 'video' ? declared : mediaTypeFor(extname(new URL(url).pathname), 'video');
  return type?.extension ?? 'mp4';
}
