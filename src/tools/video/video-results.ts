import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { formatBytes } from '../../files/files.js';
import type { SavedFile } from '../../files/output-files.js';
import { savedFileMime } from '../../files/saved-files.js';
import type { VideoJobState } from '../../gateway/endpoints/videos.js';
import { oneLine } from '../../lib/text.js';
import type { ToolContext } from '../define.js';
import { nextStep, success } from '../results.js';
import { MAX_WAIT_SECONDS } from './wait.js';

/**
 * What all four video tools answer. A job that failed is reported as a successful call with
 * `status: "failed"` and `error` (the tool did its work: it found out how the job ended), with a
 * text that starts with "FAILED" so no model mistakes it for a video. isError is kept for calls
 * that could not do their work (bad arguments, a refused submit, an unreachable service).
 */
export const videoOutputSchema = {
  job_id: z.string().describe('The job handle: pass it to video_status (or as `video` to edit/extend).'),
  status: z.enum(['running', 'done', 'failed']),
  progress: z.number().min(0).max(100).nullable().describe('0-100 when the service reports it.'),
  video_url: z.string().nullable().describe('The finished video (a temporary URL).'),
  duration: z.number().nullable().describe('Seconds of video, when known.'),
  file_path: z.string().nullable().describe('Where the video was saved, when downloaded.'),
  error: z.string().nullable().describe('Why the job failed, when it failed.'),
  next: nextStep,
};

export interface JobView {
  jobId: string;
  /** The last state read; null when no status was read (a submit without waiting). */
  state: VideoJobState | null;
  /** The job was just submitted: it is called a new job (a new generation, billed once). */
  submitted?: boolean;
  /** Said after the status (e.g. why the wait ended early). */
  note?: string;
  saved?: SavedFile;
  /** The caller asked for the file: the follow-up hint repeats download: true. */
  wantsFile?: boolean;
}

export function jobResult(view: JobView, ctx: ToolContext): CallToolResult {
  const { jobId, state, saved } = view;
  const status = state?.status ?? 'running';
  const structured = {
    job_id: jobId,
    status,
    progress: state ? state.progress : null,
    video_url: state?.videoUrl ?? null,
    duration: state?.duration ?? null,
    file_path: saved?.path ?? null,
    error: state?.error ? describeJobError(state.error) : null,
  };
  const statusTool = ctx.toolName('video_status');
  const links: CallToolResult['content'] = [];
  const length = structured.duration !== null ? `${structured.duration} s ` : '';
  const job = `${view.submitted ? 'New video job' : 'Video job'} \`${jobId}\``;
  // What happened, then what to do next: the same words in the text and in `next`.
  let said: string;
  let step = '';
  if (status === 'failed') {
    said = `FAILED — ${job.replace(/^\w/, (c) => c.toLowerCase())} ended without a video: ${structured.error}.`;
    step =
      `Nothing to download. To try again, fix what the error points at and call ${ctx.toolName('video_generate')}: ` +
      'a new generation, billed again.';
  } else if (status === 'done' && saved) {
    said = `${job} is done: ${length}video saved to ${saved.path} (${formatBytes(saved.bytes)}).`;
    links.push(
      ctx.savedFile(
        saved.path,
        savedFileMime(saved.path),
        `The finished ${length}video from job ${jobId}`,
        saved.bytes,
      ),
    );
  } else if (status === 'done' && structured.video_url) {
    said = `${job} is done: ${length}video at ${structured.video_url}`;
    step = `The URL is temporary: to keep the video, call ${statusTool} with this job_id and download: true.`;
  } else if (status === 'done') {
    said = `${job} is done, but the service gave no usable video URL (status "${oneLine(state?.rawStatus ?? '', 40)}").`;
    step = 'Check the job in the gateway.';
  } else {
    said = `${job} is ${state ? 'still ' : ''}running${runningDetail(state)}.`;
    step =
      `To follow it, call ${statusTool} with this job_id and wait_seconds (up to ${MAX_WAIT_SECONDS})` +
      `${view.wantsFile ? ' and download: true (nothing was saved yet)' : ''}. ` +
      'Do not submit again: every submit starts, and bills, a new generation.';
  }
  // Once saved, the file is the video: where it was downloaded from is in video_url.
  if (status === 'done' && structured.video_url && !saved)
    links.push(remoteVideoLink(structured.video_url, jobId));
  const next = [view.note, step].filter(Boolean).join(' ');
  const text = [said, view.note, step].filter(Boolean).join('\n');
  return success(text, next ? { ...structured, next } : structured, links);
}

function runningDetail(state: VideoJobState | null): string {
  if (!state) return '';
  const progress = state.progress !== null ? `${Math.round(state.progress)}% done, ` : '';
  return ` (${progress}service status "${oneLine(state.rawStatus, 40)}")`;
}

export function describeJobError(error: NonNullable<VideoJobState['error']>): string {
  const message = oneLine(error.message, 400).replace(/\.$/, '');
  return error.code ? `${message} (code ${oneLine(error.code, 60)})` : message;
}

function remoteVideoLink(url: string, jobId: string): CallToolResult['content'][number] {
  return {
    type: 'resource_link',
    uri: url,
    name: `${jobId}.mp4`,
    mimeType: 'video/mp4',
    description: `The finished video (temporary URL: download it soon) — job ${jobId}`,
  };
}
