// The video tools: three billed submits (generate, edit, extend) and the free video_status that
// follows a job. Submits answer with a job handle at once (or after a short wait); video_status
// waits, reports progress and downloads.

import { z } from 'zod';
import { FIXED_DEFAULT_MODELS, MODEL_ID, notAnIdSentence } from '../../config/model-ids.js';
import type { VideoSubmitRequest } from '../../gateway/endpoints/videos.js';
import { ALLOW_DUPLICATE } from '../billing.js';
import {
  ANNOTATIONS,
  type AnyToolDefinition,
  defineTool,
  type ToolContext,
  textArgument,
} from '../define.js';
import { FailedStep } from '../results.js';
import { resolveImage, resolveStartingVideo } from './video-inputs.js';
import { videoOutputSchema } from './video-results.js';
import { videoStatus } from './video-status.js';
import { submitAndFollow } from './video-submit.js';
import { MAX_WAIT_SECONDS } from './wait.js';

export const DEFAULT_SUBMIT_WAIT_SECONDS = 5;
const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3'] as const;
const RESOLUTIONS = ['480p', '720p', '1080p'] as const;
const BILLING = 'Each call starts a NEW billed generation: follow the job_id with video_status.';

const common = {
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
const duration = z.number().int('duration must be a whole number of seconds').min(1).max(60).optional();
const video = z.string().trim().min(1).max(4096).describe('A finished job_id or a video URL');

export const videoGenerate = defineTool({
  name: 'video_generate',
  usesFiles: true,
  group: 'video',
  title: 'Generate a video',
  action: 'Video generation',
  description: `Start a video from a prompt (and optionally an image); returns a job_id. ${BILLING}`,
  inputSchema: {
    ...common,
    duration,
    aspect_ratio: z.enum(ASPECT_RATIOS).optional(),
    image_url: z.string().trim().max(15_000_000).optional().describe('http(s) or data:image URL'),
    image_path: z.string().trim().min(1).max(4096).optional().describe('Local image under the input roots'),
  },
  outputSchema: videoOutputSchema,
  annotations: ANNOTATIONS.create,
  async run(args, ctx) {
    const started = Date.now();
    const image = await resolveImage(args.image_url, args.image_path, ctx);
    const body: VideoSubmitRequest = {
      model: args.model ?? ctx.runtime.config.videoModel,
      prompt: args.prompt,
      ...(args.duration !== undefined ? { duration: args.duration } : {}),
      ...(args.aspect_ratio !== undefined ? { aspect_ratio: args.aspect_ratio } : {}),
      ...(args.resolution !== undefined ? { resolution: args.resolution } : {}),
      ...(image ? { image } : {}),
    };
    return submitAndFollow(
      {
        kind: 'generations',
        tool: 'video_generate',
        body,
        waitSeconds: args.wait_seconds,
        idempotencyKey: args.idempotency_key,
        allowDuplicate: args.allow_duplicate,
        started,
      },
      ctx,
    );
  },
});

export const videoEdit = defineTool({
  name: 'video_edit',
  usesFiles: true,
  group: 'video',
  title: 'Edit a video',
  description: `Start editing a video as the prompt says; returns a job_id. ${BILLING}`,
  inputSchema: { ...common, video },
  outputSchema: videoOutputSchema,
  annotations: ANNOTATIONS.create,
  run: (args, ctx) => startFromVideo('edits', 'video_edit', args, undefined, ctx),
});

export const videoExtend = defineTool({
  name: 'video_extend',
  usesFiles: true,
  group: 'video',
  title: 'Extend a video',
  description: `Start continuing a video past its end; returns a job_id. ${BILLING}`,
  inputSchema: { ...common, video, duration: duration.describe('Seconds to add') },
  outputSchema: videoOutputSchema,
  annotations: ANNOTATIONS.create,
  run: (args, ctx) => startFromVideo('extensions', 'video_extend', args, args.duration, ctx),
});

async function startFromVideo(
  kind: 'edits' | 'extensions',
  tool: string,
  args: z.output<z.ZodObject<typeof common & { video: typeof video }>>,
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

export const VIDEO_TOOLS: readonly AnyToolDefinition[] = [videoGenerate, videoEdit, videoExtend, videoStatus];
