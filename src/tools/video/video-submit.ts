// The billed half of the video tools: one submit, recorded in the ledger of billed calls, sent
// once, always with an Idempotency-Key, then (optionally) a short wait. Once the service has
// accepted a job, the result always carries its job_id — whatever happens while waiting — so the
// agent is never tempted to submit again; an identical submit within the duplicate window is
// answered with the earlier job instead of being sent.

import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { FIXED_DEFAULT_MODELS, MODEL_ID, notAnIdSentence } from '../../config/model-ids.js';
import {
  submitVideo,
  type VideoSubmitKind,
  type VideoSubmitRequest,
} from '../../gateway/endpoints/videos.js';
import { saysStatus } from '../../gateway/error-advice.js';
import { ServiceError } from '../../gateway/errors.js';
import { excerpt } from '../../lib/text.js';
import { UserError } from '../../lib/user-error.js';
import { ALLOW_DUPLICATE, type BillableCall, billed, classifyBilledFailure, clockTime } from '../billing.js';
import { type Confirmation, type ToolContext, textArgument } from '../define.js';
import { FailedStep, failureSentence, MaybeBilled } from '../results.js';
import { canEncode, decodeJobHandle, encodeJobHandle, type JobRef } from './job-handle.js';
import { followJob } from './video-follow.js';
import { resolveStartingVideo } from './video-inputs.js';
import { unsettledSubmit } from './video-jobs.js';
import { jobResult } from './video-results.js';
import { MAX_WAIT_SECONDS, risingProgress, waitDeadline } from './wait.js';

export const DEFAULT_SUBMIT_WAIT_SECONDS = 5;
export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3'] as const;
const RESOLUTIONS = ['480p', '720p', '1080p'] as const;
export const BILLING = 'Each call starts a NEW billed generation: follow the job_id with video_status.';

/** The arguments every submit takes. */
export const SUBMIT_ARGUMENTS = {
  prompt: textArgument('prompt', 4000),
  model: z
    .string()
    .trim()
    .max(200)
    .regex(MODEL_ID, notAnIdSentence('model', FIXED_DEFAULT_MODELS.video))
    .optional(),
  resolution: z.enum(RESOLUTIONS).optional(),
  wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).default(DEFAULT_SUBMIT_WAIT_SECONDS),
  idempotency_key: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[\x21-\x7e]+$/, 'idempotency_key must be printable ASCII without spaces')
    .optional()
    .describe('Reuse only to retry an unknown outcome'),
  allow_duplicate: ALLOW_DUPLICATE,
};
export const DURATION = z
  .number()
  .int('duration must be a whole number of seconds')
  .min(1)
  .max(60)
  .optional();
export const STARTING_VIDEO = z.string().trim().min(1).max(4096).describe('A finished job_id or a video URL');

export interface SubmitOptions {
  kind: VideoSubmitKind;
  /** The tool's base name, for messages. */
  tool: string;
  body: VideoSubmitRequest;
  waitSeconds: number;
  idempotencyKey: string | undefined;
  /** Epoch ms the call started: the wait counts from here, so submit time is part of it. */
  started: number;
  /** What an edit or extension starts from, as given (a job_id or a URL): part of what makes two submits the same. */
  startsFrom?: string;
  /** Submit even when an identical one was accepted within the duplicate window. */
  allowDuplicate?: boolean;
}

/** How often a submit still waiting for the gateway's answer reports progress. */
const SUBMIT_HEARTBEAT_MS = 5_000;

/** Each kind of submit, as messages name it and as the user is asked to confirm it. */
const KINDS: Record<VideoSubmitKind, { what: string; action: string }> = {
  generations: { what: 'video generation', action: 'Generate a video' },
  edits: { what: 'video edit', action: 'Edit a video' },
  extensions: { what: 'video extension', action: 'Extend a video' },
};

type Report = ReturnType<typeof risingProgress>;

/** What a submit shows the person before it is sent (GATEWAY_CONFIRM=video): its arguments. */
export interface SubmitShown {
  prompt: string;
  model?: string | undefined;
  duration?: number | undefined;
  aspect_ratio?: string | undefined;
  resolution?: string | undefined;
  /** The image as given: a URL or a local path. */
  image?: string | undefined;
  /** The video an edit or extension starts from, as given. */
  video?: string | undefined;
}

export async function submitConfirmation(
  kind: VideoSubmitKind,
  tool: string,
  shown: SubmitShown,
  ctx: ToolContext,
): Promise<Confirmation> {
  const { prompt, duration, image, video } = shown;
  return {
    call: submitCall(tool, prompt, shown.model ?? ctx.runtime.config.videoModel, duration),
    action: KINDS[kind].action,
    details: [
      ['Prompt', excerpt(prompt)],
      ['Duration', duration !== undefined ? `${duration} s` : undefined],
      ['Aspect ratio', shown.aspect_ratio],
      ['Resolution', shown.resolution],
      ['Image', image && (image.startsWith('data:') ? 'a local image' : excerpt(image, 120))],
      ['Starting video', video && excerpt(video, 120)],
    ],
  };
}

/** A submit as the ledger and the limits see it (its amount: the seconds asked for). */
function submitCall(tool: string, prompt: string, model: string, duration: number | undefined) {
  return {
    kind: 'video',
    tool,
    model,
    text: prompt,
    expected: duration,
    amountArgument: 'duration',
  } satisfies BillableCall;
}

export async function submitAndFollow(options: SubmitOptions, ctx: ToolContext): Promise<CallToolResult> {
  const { kind, tool, body } = options;
  const key = options.idempotencyKey ?? `gtm-${randomUUID()}`;
  const model = body.model ?? ctx.runtime.config.videoModel;
  const report = risingProgress((update) => ctx.progress(update));
  const call = submitCall(tool, body.prompt, model, body.duration);
  return billed(
    ctx,
    {
      ...call,
      inputs: { image: body.image?.url, video: options.startsFrom ?? body.video?.url },
      options: { duration: body.duration, aspect_ratio: body.aspect_ratio, resolution: body.resolution },
      idempotencyKey: key,
      allowDuplicate: options.allowDuplicate,
    },
    async (send) => {
      let ref: JobRef;
      try {
        ref = await send(
          () => submitWithHeartbeat(options, key, ctx, report),
          (accepted) => ({
            status: 'running',
            ...(canEncode(accepted) ? { jobId: encodeJobHandle(accepted) } : { reason: 'unusable job id' }),
          }),
        );
      } catch (error) {
        // Adds what only the submit knows: whether a job may exist, and the key to retry it with.
        return submitFailure(error, { ...options, key }, ctx);
      }
      if (!canEncode(ref)) {
        ctx.log.warn(`${tool}: accepted job has unusable ids ${JSON.stringify(ref)}`);
        throw new UserError(
          ctx.runtime.scrub(
            `The service accepted the ${KINDS[kind].what} (so it is billed) but answered with a job id this server cannot follow (request_id ${JSON.stringify(ref.requestId.slice(0, 80))}). Do not submit again; look the job up in the gateway.`,
          ),
        );
      }
      const jobId = encodeJobHandle(ref);
      ctx.log.info(
        `${tool}: job ${jobId} accepted (request_id ${ref.requestId}, connection ${ref.connectionId ?? 'none'}, idempotency key ${key})`,
      );
      if (options.waitSeconds <= 0) return jobResult({ jobId, state: null, submitted: true }, ctx);
      return follow(ref, jobId, options, ctx, report, { submitted: true });
    },
    async (earlier) => {
      if (earlier.state !== 'accepted' || !earlier.jobId)
        throw new UserError(unsettledSubmit(earlier, tool, ctx));
      // The identical job accepted earlier, followed as a submit would follow its own: free.
      const note =
        `Nothing was sent or billed: an identical ${ctx.toolName(tool)} was accepted at ${clockTime(earlier.at)}, ` +
        'and this is its job. To pay for a new one, call again with allow_duplicate: true.';
      return follow(decodeJobHandle(earlier.jobId), earlier.jobId, options, ctx, report, { note });
    },
  );
}

/** Starts an edit or an extension from the video given (a finished job_id or a URL). */
export async function startFromVideo(
  kind: 'edits' | 'extensions',
  tool: string,
  args: z.output<z.ZodObject<typeof SUBMIT_ARGUMENTS & { video: typeof STARTING_VIDEO }>>,
  seconds: number | undefined,
  ctx: ToolContext,
) {
  const started = Date.now();
  const url = await resolveStartingVideo(args.video, ctx.toolName(tool), ctx).catch((error: unknown) => {
    // Named as its own step: a failure here says that nothing was submitted, so nothing was billed.
    throw new FailedStep('Reading the starting video (nothing was submitted)', error);
  });
  const body: VideoSubmitRequest = {
    model: args.model ?? ctx.runtime.config.videoModel,
    prompt: args.prompt,
    video: { url },
    ...(seconds !== undefined ? { duration: seconds } : {}),
    ...(args.resolution !== undefined ? { resolution: args.resolution } : {}),
  };
  return submitAndFollow(
    {
      kind,
      tool,
      body,
      waitSeconds: args.wait_seconds,
      idempotencyKey: args.idempotency_key,
      allowDuplicate: args.allow_duplicate,
      startsFrom: args.video,
      started,
    },
    ctx,
  );
}

/** Sends the submit once, reporting progress while the gateway takes its time to accept it. */
async function submitWithHeartbeat(
  options: SubmitOptions,
  key: string,
  ctx: ToolContext,
  report: Report,
): Promise<JobRef> {
  // Accepting a job may take the gateway up to two minutes. Progress meanwhile shows what the call
  // is waiting for, and keeps clients that time calls out unless they hear progress from
  // cancelling one that may already be billed.
  const sent = Date.now();
  const heartbeat = setInterval(() => {
    const waited = Math.floor((Date.now() - sent) / 1000);
    void report(
      0,
      undefined,
      `waiting for the gateway to accept the ${KINDS[options.kind].what} (${waited} s)`,
    );
  }, SUBMIT_HEARTBEAT_MS);
  try {
    return await submitVideo(ctx.runtime.service.client, options.kind, options.body, key, ctx.signal);
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Follows a job for the rest of the call's wait. A just-submitted job is first polled after a
 * pause; an earlier one at once (at least once, whatever the wait).
 */
async function follow(
  ref: JobRef,
  jobId: string,
  options: SubmitOptions,
  ctx: ToolContext,
  report: Report,
  view: { submitted?: boolean; note?: string },
): Promise<CallToolResult> {
  const outcome = await followJob(
    ref,
    { deadline: waitDeadline(options.started, options.waitSeconds), pollFirst: !view.submitted },
    ctx,
    report,
  );
  const pollError = 'error' in outcome ? outcome.error : undefined;
  const waitNote =
    outcome.kind === 'cancelled'
      ? 'The wait was cancelled; the job goes on.'
      : pollError !== undefined
        ? `(Checking its status failed — ${failureSentence(pollError, ctx.runtime.scrub)} The job itself is unaffected.)`
        : undefined;
  const note = [view.note, waitNote].filter(Boolean).join(' ');
  return jobResult(
    { jobId, state: outcome.state, submitted: view.submitted === true, ...(note ? { note } : {}) },
    ctx,
  );
}

/**
 * Says whether the failed submit may have started (and billed) a job, and what to do next. Any
 * other failure (a refusal, a bug) is thrown on, named as the submit step.
 */
function submitFailure(error: unknown, options: SubmitOptions & { key: string }, ctx: ToolContext): never {
  const { tool, kind, key } = options;
  const what = KINDS[kind].what;
  // A submit says what an unclear outcome means itself, with the key to retry with.
  if (error instanceof MaybeBilled) error = error.cause;
  if (!(error instanceof ServiceError)) throw new FailedStep(`Starting the ${what}`, error);
  const reason = failureSentence(error, ctx.runtime.scrub);
  const retryAdvice =
    `Do not resubmit blindly: call ${ctx.toolName('video_status')} without job_id to see whether the job exists ` +
    `(your recent jobs, this one listed as outcome unknown), or retry safely: call ${ctx.toolName(tool)} with ` +
    `idempotency_key "${key}" (the same key), which the gateway forwards so a repeat can be recognised.`;
  switch (classifyBilledFailure(error)) {
    case 'refused':
      throw new UserError(`The ${what} was refused, so no job was started and nothing was billed. ${reason}`);
    case 'not-sent':
      throw new UserError(`The ${what} request never reached the service, so nothing was billed. ${reason}`);
    case 'cancelled':
      ctx.log.warn(`${tool}: cancelled while submitting; a job may exist (idempotency key ${key})`);
      throw new UserError(
        `The ${what} was cancelled while being sent; a job may or may not exist (idempotency key "${key}"). ${retryAdvice}`,
      );
    case 'ambiguous': {
      ctx.log.warn(
        `${tool}: submit outcome unknown (${error.kind}${error.status ? ` ${error.status}` : ''}); idempotency key ${key}`,
      );
      const headline = error.notGatewayLike
        ? `Outcome unknown: ${reason} If the gateway is there after all, the ${what} may have started (and been billed).`
        : error.kind === 'malformed'
          ? `The service answered the ${what} with success but its answer was unreadable (${ctx.runtime.scrub(error.message)}), so a job was probably started and billed, and its job_id is unknown.`
          : `Outcome unknown: ${ctx.runtime.scrub(error.message)}${saysStatus(error.message, error.status) ? '' : ` (HTTP ${error.status})`}. The request may have reached the service, so the ${what} may or may not have started (and been billed).`;
      throw new UserError(`${headline} ${retryAdvice}`);
    }
  }
}
