// Video jobs found again: video_status without a job_id lists the user's recent video jobs from
// the ledger every server process of the user shares, so a job whose handle was lost (a compacted
// context, a new conversation, a call the client timed out, a restarted editor) is followed
// instead of paid for again. Running jobs are refreshed with a few free polls; a submit whose
// outcome is unknown is listed with the idempotency key that retries it safely.

import type { CallToolResult } from '@modelcontextprotocol/server';
import { withDeadline } from '../../gateway/deadline.js';
import { LedgerUnavailable, type RecentJob } from '../../ledger/ledger.js';
import { oneLine } from '../../lib/text.js';
import { UserError } from '../../lib/user-error.js';
import { clockTime, type LedgerCall, openLedger } from '../billing.js';
import type { ToolContext } from '../define.js';
import { success } from '../results.js';
import { decodeJobHandle } from './job-handle.js';
import { readJob } from './video-follow.js';

/** How many jobs a listing shows, newest first. */
const LISTED_JOBS = 20;
/** Running jobs refreshed with a poll per listing, and how long those polls may take together. */
const REFRESHED_JOBS = 5;
const REFRESH_MS = 8_000;

/** One job as the listing gives it, in the structured content. */
export interface ListedJob {
  job_id: string | null;
  /** running, done, failed (last known); unknown (the submit's outcome); submitting (being sent). */
  status: 'running' | 'done' | 'failed' | 'unknown' | 'submitting';
  progress?: number | null;
  /** The prompt's first words. */
  prompt: string;
  model: string;
  tool: string;
  submitted_at: string;
  idempotency_key?: string;
  next?: string;
}

export async function recentJobsResult(ctx: ToolContext): Promise<CallToolResult> {
  const recent = await openLedger(ctx)
    .recentJobs(LISTED_JOBS, ctx.principal.id)
    .catch((error: unknown) => {
      throw error instanceof LedgerUnavailable ? new UserError(error.message) : error;
    });
  const jobs = recent.map((job) => listed(job, ctx));
  await refresh(jobs, ctx);
  const statusTool = ctx.toolName('video_status');
  if (jobs.length === 0) {
    const next = `Nothing to follow. ${ctx.toolName('video_generate')} starts a new job (billed).`;
    return success(`No video jobs in the ledger of billed calls (the last 30 days). ${next}`, { jobs, next });
  }
  const next =
    `Follow a job with ${statusTool} and its job_id (download: true saves a finished one). ` +
    'Retry a submit whose outcome is unknown only with its idempotency_key, so it is not paid for twice.';
  const lines = jobs.map((job, i) => `${i + 1}. ${lineOf(job)}`);
  return success(
    ['Your recent video jobs, newest first (from every server process of this user):', ...lines, next].join(
      '\n',
    ),
    { jobs, next },
  );
}

function listed(job: RecentJob, ctx: ToolContext): ListedJob {
  const base = {
    job_id: job.jobId,
    prompt: job.words,
    model: job.model,
    tool: job.tool,
    submitted_at: job.at,
  };
  if (job.state === 'accepted') {
    const status = job.status === 'done' || job.status === 'failed' ? job.status : 'running';
    return { ...base, status };
  }
  const key = job.idempotencyKey;
  const retry = key ? retryWith(job.tool, key, ctx) : '';
  const next =
    job.state === 'pending'
      ? `Being submitted right now: call ${ctx.toolName('video_status')} again shortly.`
      : `It may have started a job, or not. ${retry || 'Its key was not kept: check before submitting again.'}`;
  return {
    ...base,
    status: job.state === 'pending' ? 'submitting' : 'unknown',
    ...(key ? { idempotency_key: key } : {}),
    next,
  };
}

/** Polls the newest running jobs (free), a few at once and for a bounded time; a failed poll leaves the last known status. */
async function refresh(jobs: ListedJob[], ctx: ToolContext): Promise<void> {
  const running = jobs.filter((job) => job.status === 'running' && job.job_id).slice(0, REFRESHED_JOBS);
  if (running.length === 0) return;
  const deadline = withDeadline(ctx.signal, REFRESH_MS);
  try {
    await Promise.all(
      running.map(async (job) => {
        try {
          const state = await readJob(decodeJobHandle(job.job_id as string), ctx, deadline.signal);
          job.status = state.status;
          job.progress = state.progress;
        } catch (error) {
          ctx.log.debug(`video_status: refreshing ${job.job_id} failed (${(error as Error).message})`);
        }
      }),
    );
  } finally {
    deadline.clear();
  }
}

function lineOf(job: ListedJob): string {
  const progress =
    job.status === 'running' && typeof job.progress === 'number' ? ` (${Math.round(job.progress)}%)` : '';
  const what = job.job_id ? `\`${job.job_id}\` — ${job.status}${progress}` : STATUS_WORDS[job.status];
  const about = `"${oneLine(job.prompt, 80)}" — ${job.model} — ${job.tool}, ${dayAndTime(job.submitted_at)}`;
  return [what, about, job.next].filter(Boolean).join(' — ');
}

const STATUS_WORDS: Record<ListedJob['status'], string> = {
  running: 'running',
  done: 'done',
  failed: 'failed',
  unknown: 'outcome unknown',
  submitting: 'being submitted',
};

function dayAndTime(iso: string): string {
  return `${iso.slice(0, 10)} ${clockTime(iso)}`;
}

function retryWith(tool: string, key: string, ctx: ToolContext): string {
  return (
    `To retry it safely, call ${ctx.toolName(tool)} with the same arguments and idempotency_key "${key}" ` +
    '(the same key, which the gateway forwards so a repeat can be recognised).'
  );
}

/**
 * Why an identical submit is not sent: it is being sent right now, its outcome is unknown, or its
 * job id was not kept. Nothing is sent, so that a job is never paid for twice; the key finds it.
 */
export function unsettledSubmit(earlier: LedgerCall, tool: string, ctx: ToolContext): string {
  const key = earlier.idempotencyKey;
  const keyed = key ? ` (idempotency key "${key}")` : '';
  const what =
    earlier.state === 'pending'
      ? `is being submitted right now${keyed}`
      : earlier.state === 'accepted'
        ? `was accepted at ${clockTime(earlier.at)}${keyed}, but its job_id was not kept`
        : `was sent at ${clockTime(earlier.at)}${keyed} and its outcome is unknown: it may have started a job`;
  return (
    `Not sent, and nothing billed: an identical ${ctx.toolName(tool)} ${what}. ` +
    `Call ${ctx.toolName('video_status')} without job_id to see your recent jobs. ` +
    `${key ? retryWith(earlier.tool, key, ctx) : ''} allow_duplicate: true starts a new, billed one.`
  );
}
