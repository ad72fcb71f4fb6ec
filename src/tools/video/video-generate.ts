// video_generate: a billed video from a prompt, and optionally an image (a URL or a local file
// under the input roots).

import { z } from 'zod';
import type { VideoSubmitRequest } from '../../gateway/endpoints/videos.js';
import { ANNOTATIONS, defineTool } from '../define.js';
import { resolveImage } from './video-inputs.js';
import { videoOutputSchema } from './video-results.js';
import {
  ASPECT_RATIOS,
  BILLING,
  DURATION,
  SUBMIT_ARGUMENTS,
  submitAndFollow,
  submitConfirmation,
} from './video-submit.js';

export const videoGenerate = defineTool({
  name: 'video_generate',
  usesFiles: true,
  group: 'video',
  title: 'Generate a video',
  action: 'Video generation',
  description: `Start a video from a prompt (and optionally an image); returns a job_id. ${BILLING}`,
  inputSchema: {
    ...SUBMIT_ARGUMENTS,
    duration: DURATION,
    aspect_ratio: z.enum(ASPECT_RATIOS).optional(),
    image_url: z.string().trim().max(15_000_000).optional().describe('http(s) or data:image URL'),
    image_path: z.string().trim().min(1).max(4096).optional().describe('Local image under the input roots'),
  },
  outputSchema: videoOutputSchema,
  annotations: ANNOTATIONS.create,
  confirm: {
    kind: 'video',
    call: (args, ctx) =>
      submitConfirmation(
        'generations',
        'video_generate',
        { ...args, image: args.image_url ?? args.image_path },
        ctx,
      ),
  },
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
