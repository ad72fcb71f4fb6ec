// video_extend: a billed continuation of a finished video (a job_id or a URL) past its end.

import { ANNOTATIONS, defineTool } from '../define.js';
import { videoOutputSchema } from './video-results.js';
import {
  BILLING,
  DURATION,
  STARTING_VIDEO,
  SUBMIT_ARGUMENTS,
  startFromVideo,
  submitConfirmation,
} from './video-submit.js';

export const videoExtend = defineTool({
  name: 'video_extend',
  usesFiles: true,
  group: 'video',
  title: 'Extend a video',
  description: `Start continuing a video past its end; returns a job_id. ${BILLING}`,
  inputSchema: { ...SUBMIT_ARGUMENTS, video: STARTING_VIDEO, duration: DURATION.describe('Seconds to add') },
  outputSchema: videoOutputSchema,
  annotations: ANNOTATIONS.create,
  confirm: {
    kind: 'video',
    call: (args, ctx) => submitConfirmation('extensions', 'video_extend', args, ctx),
  },
  run: (args, ctx) => startFromVideo('extensions', 'video_extend', args, args.duration, ctx),
});
