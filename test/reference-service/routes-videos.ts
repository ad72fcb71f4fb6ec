// Video jobs: submit (generations, edits, extensions) and poll. A job belongs to one upstream
// account (its connection id); polling without that id answers 404, as a multi-account gateway does.
import { randomBytes } from 'node:crypto';
import { errorReply, jsonReply, type Reply, RequestError } from './http-util.js';
import { type JsonObject, jsonObjectBody, optionalNumber, optionalString } from './request-body.js';
import type { RouteContext, RouteHandler } from './router.js';
import { providerOf, VIDEO_MODEL } from './state.js';
import type { VideoJobTiming } from './types.js';
import { videoFilePath } from './video-files.js';

const ASPECT_RATIOS = new Set(['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3']);
const RESOLUTIONS = new Set(['480p', '720p', '1080p']);
const DEFAULT_DURATION_SECONDS = 8;
const RUNNING_STATUS_WORDS = ['pending', 'processing', 'in_progress'] as const;

export type VideoSubmitKind = 'generations' | 'edits' | 'extensions';

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function urlOf(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new RequestError(400, `${field} must be an object`);
  const url = (value as JsonObject).url;
  if (url === undefined || url === null || url === '') return undefined;
  if (typeof url !== 'string') throw new RequestError(400, `${field}.url must be a string`);
  return url;
}

function validateModel(body: JsonObject): string {
  const model = optionalString(body.model, 'model') ?? VIDEO_MODEL;
  if (model.includes('combo'))
    throw new RequestError(400, `Combos are not supported for video generation: ${model}`);
  const provider = providerOf(model);
  if (provider !== 'xai')
    throw new RequestError(400, `Provider '${provider}' does not support video generation`);
  return model;
}

function validateSubmit(body: JsonObject, kind: VideoSubmitKind): number {
  if (typeof body.prompt !== 'string' || body.prompt.trim() === '')
    throw new RequestError(400, 'prompt is required');
  validateModel(body);
  const duration = optionalNumber(body.duration, 'duration');
  if (duration !== undefined && duration <= 0) throw new RequestError(400, 'duration must be positive');
  const aspectRatio = optionalString(body.aspect_ratio, 'aspect_ratio');
  if (aspectRatio !== undefined && !ASPECT_RATIOS.has(aspectRatio)) {
    throw new RequestError(400, `Invalid aspect_ratio: ${aspectRatio}`);
  }
  const resolution = optionalString(body.resolution, 'resolution');
  if (resolution !== undefined && !RESOLUTIONS.has(resolution)) {
    throw new RequestError(400, `Invalid resolution: ${resolution}`);
  }
  const image = urlOf(body.image, 'image');
  if (image !== undefined && !isHttpUrl(image) && !image.startsWith('data:image/')) {
    throw new RequestError(400, 'image.url must be an http(s) URL or a data:image/ URL');
  }
  if (kind !== 'generations') {
    const video = urlOf(body.video, 'video');
    if (video === undefined) throw new RequestError(400, 'video.url is required');
    // The service takes the finished video's URL, never a job id.
    if (!isHttpUrl(video)) throw new RequestError(400, `video.url must be an http(s) URL, got: ${video}`);
  }
  return duration ?? DEFAULT_DURATION_SECONDS;
}

export function submitVideo(kind: VideoSubmitKind): RouteHandler {
  return (context: RouteContext): Reply => {
    const body = jsonObjectBody(context.body);
    const duration = validateSubmit(body, kind);
    const { state } = context;
    const id = `vid_${randomBytes(8).toString('hex')}`;
    const connectionId = state.nextConnectionId();
    const idempotencyKey = context.headers['idempotency-key'];
    state.videoJobs.set(id, {
      id,
      connectionId,
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      polls: 0,
      body,
    });
    state.videoPlans.set(id, { timing: state.currentVideoTiming(), duration });
    return jsonReply({ request_id: id }, 200, { 'x-9router-connection-id': connectionId });
  };
}

function terminalBody(timing: VideoJobTiming, doneBody: () => unknown): unknown {
  if (timing.status) return { status: timing.status };
  if (timing.failWith) return { status: 'failed', error: { ...timing.failWith } };
  return doneBody();
}

export function pollVideo(context: RouteContext): Reply {
  const id = context.params.id ?? '';
  const job = context.state.videoJobs.get(id);
  const plan = context.state.videoPlans.get(id);
  // The job lives on one upstream account: without its connection id the wrong account is asked.
  if (!job || !plan || context.headers['x-connection-id'] !== job.connectionId) {
    // xAI's own 404, passed on with the provider's tag.
    const upstream = { code: 'not_found', error: `No video request with id ${id}` };
    return errorReply(404, { message: `[xai] ${JSON.stringify(upstream)}`, code: 'model_not_found' });
  }
  job.polls += 1;
  const { timing } = plan;
  const pollsUntilDone = Math.max(0, timing.pollsUntilDone);
  // Polls name the account that answered, as submits do.
  const owner = { 'x-9router-connection-id': job.connectionId };
  if (job.polls < pollsUntilDone) {
    // Clients must tolerate every running-status word the gateways use.
    const status = RUNNING_STATUS_WORDS[(job.polls - 1) % RUNNING_STATUS_WORDS.length];
    if (timing.reportProgress === false) return jsonReply({ status }, 200, owner);
    return jsonReply({ status, progress: Math.floor((job.polls / pollsUntilDone) * 99) }, 200, owner);
  }
  const done = () => ({
    status: 'done',
    video: {
      url: finishedVideoUrl(context.state.url, id, timing),
      duration: plan.duration,
      respect_moderation: true,
    },
    model: 'grok-imagine-video',
  });
  return jsonReply(terminalBody(timing, done), 200, owner);
}

function finishedVideoUrl(ownUrl: string, id: string, timing: VideoJobTiming): string {
  const file = videoFilePath(id, timing.videoBytes);
  if (timing.redirectVideoTo === undefined) return `${ownUrl}${file}`;
  const hop = new URL(`${ownUrl}/files/redirect/${id}.mp4`);
  hop.searchParams.set('to', `${timing.redirectVideoTo}${file}`);
  return hop.toString();
}

/** GET /files/redirect/<id>.mp4?to=<url>: a 302 hop, as signed CDN links often take. */
export function redirectToVideoFile(context: RouteContext): Reply {
  const to = context.query.to;
  if (!to || !isHttpUrl(to)) return errorReply(400, { message: 'to must be an http(s) URL' });
  return { kind: 'raw', status: 302, contentType: 'text/plain', body: 'Found', headers: { location: to } };
}
