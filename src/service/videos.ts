import type { ServiceClient, ServiceResponse } from './client.js';
import { ServiceError } from './errors.js';
import { asNumber, asObject, asString } from './normalize.js';

export type VideoSubmitKind = 'generations' | 'edits' | 'extensions';

export interface VideoSubmitRequest {
  model?: string;
  prompt: string;
  duration?: number;
  aspect_ratio?: string;
  resolution?: string;
  /** Image-to-video: an https URL or a data: URL. */
  image?: { url: string };
  /** Edits and extensions: the URL of a finished video (never a job id). */
  video?: { url: string };
}

export interface VideoSubmitted {
  requestId: string;
  /** The upstream account that owns the job (`x-9router-connection-id`); polls must send it back. */
  connectionId: string | null;
}

export type VideoStatus = 'running' | 'done' | 'failed';

export interface VideoJobState {
  status: VideoStatus;
  /** The word the service used (pending, processing, expired, ...). */
  rawStatus: string;
  progress: number | null;
  videoUrl: string | null;
  duration: number | null;
  model: string | null;
  error: { code: string | null; message: string } | null;
}

/** Submits a billed job: sent once (retry policy `submit`), always with an Idempotency-Key. */
export async function submitVideo(
  client: ServiceClient,
  kind: VideoSubmitKind,
  body: VideoSubmitRequest,
  idempotencyKey: string,
  signal?: AbortSignal,
): Promise<VideoSubmitted> {
  const { data, headers } = await client.json<unknown>({
    method: 'POST',
    path: `/v1/videos/${kind}`,
    json: body,
    headers: { 'idempotency-key': idempotencyKey },
    signal,
    retry: 'submit',
  });
  const obj = asObject(data);
  const requestId = asString(obj.request_id) ?? asString(obj.id) ?? asString(asObject(obj.data).id);
  if (!requestId) {
    throw new ServiceError({
      kind: 'malformed',
      message: 'The service accepted the video job but returned no request_id',
      maybeDelivered: true,
    });
  }
  return { requestId, connectionId: headers['x-9router-connection-id']?.trim() || null };
}

export async function pollVideo(
  client: ServiceClient,
  requestId: string,
  connectionId: string | null,
  signal?: AbortSignal,
): Promise<VideoJobState> {
  const { data } = await client.json<unknown>({
    method: 'GET',
    path: `/v1/videos/${encodeURIComponent(requestId)}`,
    headers: connectionId ? { 'x-connection-id': connectionId } : {},
    signal,
    retry: 'safe',
  });
  return readJobState(data);
}

const RUNNING = new Set([
  'pending',
  'queued',
  'processing',
  'in_progress',
  'running',
  'submitted',
  'starting',
]);
const DONE = new Set(['done', 'completed', 'succeeded', 'success', 'finished']);

export function normalizeVideoStatus(raw: string): VideoStatus {
  const word = raw.trim().toLowerCase();
  if (DONE.has(word)) return 'done';
  if (RUNNING.has(word)) return 'running';
  return 'failed';
}

export function readJobState(data: unknown): VideoJobState {
  const obj = asObject(data);
  const rawStatus = asString(obj.status) ?? 'unknown';
  const video = asObject(obj.video ?? asObject(obj.data).video);
  const videoUrl = asString(video.url) ?? asString(obj.video_url) ?? asString(obj.url) ?? null;
  let status = normalizeVideoStatus(rawStatus);
  // No status word but a video URL: treat as done; no status and no URL: still running.
  if (rawStatus === 'unknown') status = videoUrl ? 'done' : 'running';
  const err = obj.error;
  const errObj = asObject(err);
  const error =
    status === 'failed'
      ? {
          code: asString(errObj.code) ?? (typeof errObj.code === 'number' ? String(errObj.code) : null),
          message:
            (typeof err === 'string' ? err : asString(errObj.message)) ?? `the job ended as "${rawStatus}"`,
        }
      : null;
  const progress = asNumber(obj.progress);
  return {
    status,
    rawStatus,
    progress: status === 'done' ? 100 : progress === undefined ? null : Math.max(0, Math.min(100, progress)),
    videoUrl: status === 'done' ? videoUrl : null,
    duration: asNumber(video.duration) ?? asNumber(obj.duration) ?? null,
    model: asString(obj.model) ?? null,
    error,
  };
}

/** Opens a finished video for streaming (sends the key only to the service's own origin). */
export function openVideoDownload(
  client: ServiceClient,
  url: string,
  signal?: AbortSignal,
): Promise<ServiceResponse> {
  return client.download(url, signal);
}
