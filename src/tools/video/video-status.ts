import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { VideoJobState } from '../../gateway/endpoints/videos.js';
import { ServiceError } from '../../gateway/errors.js';
import { UserError } from '../../lib/user-error.js';
import { ANNOTATIONS, defineTool, type ToolContext, textArgument } from '../define.js';
import { failureSentence } from '../results.js';
import { decodeJobHandle, type JobRef } from './job-handle.js';
import { followJob, saveVideo } from './video-follow.js';
import { recentJobsResult } from './video-jobs.js';
import { jobResult, videoOutputSchema } from './video-results.js';
import { MAX_WAIT_SECONDS, risingProgress, type WaitOutcome, waitDeadline } from './wait.js';

export const DEFAULT_STATUS_WAIT_SECONDS = 30;

const inputSchema = {
  job_id: textArgument('job_id', 2000).optional(),
  wait_seconds: z
    .number()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(DEFAULT_STATUS_WAIT_SECONDS)
    .describe('0 = just look'),
  download: z.boolean().default(false).describe('Save the finished video to a file'),
};

/** A job's status, or without a job_id the list of recent jobs (`jobs`, and `next`). */
const outputSchema = {
  ...videoOutputSchema,
  job_id: videoOutputSchema.job_id.optional(),
  status: videoOutputSchema.status.optional(),
  progress: videoOutputSchema.progress.optional(),
  video_url: videoOutputSchema.video_url.optional(),
  duration: videoOutputSchema.duration.optional(),
  file_path: videoOutputSchema.file_path.optional(),
  error: videoOutputSchema.error.optional(),
  jobs: z.array(z.unknown()).optional(),
};

export const videoStatus = defineTool({
  name: 'video_status',
  usesFiles: true,
  group: 'video',
  title: 'Video job status',
  action: 'Video status',
  description:
    'Follow a video job: waits up to wait_seconds with progress, then gives its status and, when done, the ' +
    'video URL. Free: call again with the same job_id while it runs. No job_id: your recent jobs.',
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.lookup,
  async run(args, ctx) {
    if (args.job_id === undefined) return recentJobsResult(ctx);
    const started = Date.now();
    const ref = decodeJobHandle(args.job_id);
    const report = risingProgress((update) => ctx.progress(update));
    // With a download, the job fills the first half of the call's progress and the file the
    // second: one scale, so the share shown never drops from "video done" to a part of the file.
    const outcome = await followJob(
      ref,
      { deadline: waitDeadline(started, args.wait_seconds), pollFirst: true },
      ctx,
      args.download ? share(report, 0, 50) : report,
    );
    return statusResult(args.job_id, ref, outcome, args.download, ctx, share(report, 50, 50));
  },
});

async function statusResult(
  jobId: string,
  ref: JobRef,
  outcome: WaitOutcome<VideoJobState>,
  download: boolean,
  ctx: ToolContext,
  report: Report,
): Promise<CallToolResult> {
  if (outcome.kind === 'cancelled') throw new UserError('Video status was cancelled.');
  const pollError = 'error' in outcome ? outcome.error : undefined;
  if (outcome.state === null) {
    // Not one status could be read (the job itself is unaffected by that).
    throw new UserError(`Checking video job ${jobId} failed: ${pollFailureText(pollError, ctx)}`);
  }
  const state = outcome.state;
  const note =
    pollError === undefined
      ? undefined
      : `(The last status check failed, so this is the status read before it: ${pollFailureText(pollError, ctx)})`;
  if (state.status !== 'done' || !download || !state.videoUrl) {
    return jobResult({ jobId, state, wantsFile: download, ...(note ? { note } : {}) }, ctx);
  }
  try {
    const saved = await saveVideo(state.videoUrl, ref, ctx, report);
    return jobResult({ jobId, state, saved }, ctx);
  } catch (error) {
    // The job is done and billed: the result still gives the video's URL, and how to save it.
    if (ctx.signal.aborted) throw new UserError('Video download was cancelled; no partial file was kept.');
    const next =
      error instanceof UserError
        ? 'Fetch it from there directly if it is needed.'
        : `Call ${ctx.toolName('video_status')} with download: true to try again.`;
    throw new UserError(
      `Job ${jobId} is done, but saving its video failed: ${failureSentence(error, ctx.runtime.scrub)} ` +
        `The video is at ${state.videoUrl} (a temporary URL). ${next}`,
    );
  }
}

type Report = ReturnType<typeof risingProgress>;

/** Reports `value` of `total` as `from + span × value/total` of 100; a count without a total as it is. */
function share(report: Report, from: number, span: number): Report {
  return (value, total, message) =>
    total
      ? report(from + (span * Math.min(value, total)) / total, 100, message)
      : report(value, total, message);
}

/** Why a status check failed, and what to do: the job itself is never affected by a failed poll. */
function pollFailureText(error: unknown, ctx: ToolContext): string {
  // A 404 that names a wait is a cooldown's replayed error, maybe another job's, not this job's.
  if (error instanceof ServiceError && error.status === 404 && error.retryAfterSeconds === undefined) {
    return ctx.runtime.scrub(
      `${error.message}. The service does not know this job: it may have expired, or the job_id comes from another gateway or key. ` +
        `If its video is still needed, start a new job with ${ctx.toolName('video_generate')} (billed).`,
    );
  }
  return `${failureSentence(error, ctx.runtime.scrub)} The job itself is unaffected: call ${ctx.toolName('video_status')} again with the same job_id.`;
}
