// The video tools: three billed submits (generate, edit, extend) and the free video_status that
// follows a job. Submits answer with a job handle at once (or after a short wait); video_status
// waits, reports progress and downloads.

import type { AnyToolDefinition } from '../define.js';
import { videoEdit } from './video-edit.js';
import { videoExtend } from './video-extend.js';
import { videoGenerate } from './video-generate.js';
import { videoStatus } from './video-status.js';

export const VIDEO_TOOLS: readonly AnyToolDefinition[] = [videoGenerate, videoEdit, videoExtend, videoStatus];
