// video_edit: a billed edit of a finished video (a job_id or a URL), as the prompt says.

import { ANNOTATIONS, defineTool } from '../define.js';
import { videoOutputSchema } from './video-results.js';
import {
  BILLING,
  STARTING_VIDEO,
  SUBMIT_ARGUMENTS,
  startFromVideo,
  submitConfirmation,
} from './video-submit.js';

export const videoEdit = defineTool({
  name: 'video_edit',
  usesFiles: true,
  group: 'video',
  title: 'Edit a video',
  description: `Start editing a video as the prompt says; returns a job_id. ${BILLING}`,
  inputSchema: { ...SUBMIT_ARGUMENTS, video: STARTING_VIDEO },
  outputSchema: videoOutputSchema,
  annotations: ANNOTATIONS.create,
  confirm: { kind: 'video', call: (args, ctx) => submitConfirmation('edits', 'video_edit', args, ctx) },
  run: (args, ctx) => startFromVideo('edits', 'video_edit', args, undefined, ctx),
});
