import { guardedBody } from '../body-errors.js';
import type { ServiceClient } from '../client.js';
import { unreadableAnswer } from '../errors.js';
import { discardBody } from '../http-body.js';
import { asNumber, asObject, asString } from '../normalize.js';

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

/**
 * The service gives an upstream up to 120 s to accept a submit before it answers 408. A submit
 * waits 2.5 × GATEWAY_TIMEOUT_MS (150 s at the default), so a slow accept still comes back with a
 * job_id instead of this server giving up first with an outcome nobody knows (a job that may
 * be billed, and no job_id to follow it). A multiple, like speech's and transcription's, so a
 * lowered timeout shortens it too.
 */
export const SUBMIT_TIMEOUT_FACTOR = 2.5;

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
    timeoutMs: client.timeoutMs * SUBMIT_TIMEOUT_FACTOR,
  });
  const obj = asObject(data);
  const requestId = idOf(obj.request_id) ?? idOf(obj.id) ?? idOf(asObject(obj.data).id);
  if (!requestId) throw unreadableAnswer('The service accepted the video job but returned no request_id');
  return { requestId, connectionId: headers['x-9router-connection-id']?.trim() || null };
}

/** Ids are strings, but a gateway may send a number; an empty string is no id. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  const text = asString(value)?.trim();
  return text ? text : undefined;
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
          code:
            asString(errObj.code) ??
            asString(errObj.type) ??
            (typeof errObj.code === 'number' ? String(errObj.code) : null),
          message:
            (typeof err === 'string' ? err : asString(errObj.message)) ?? endedWithoutReason(rawStatus),
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

function endedWithoutReason(rawStatus: string): string {
  const word = rawStatus.trim().toLowerCase();
  if (word === 'expired') return 'the job expired at the service before its video was collected';
  if (word === 'cancelled' || word === 'canceled') return 'the job was cancelled at the service';
  return `the job ended as "${rawStatus}" without a reason`;
}

/** An open download: the body to stream, what the headers said about it, and a way to drop it. */
export interface VideoDownload {
  body: AsyncIterable<Buffer>;
  /** From Content-Length; null when the server did not say. */
  bytes: number | null;
  /** The media type without parameters, lower-case; null when absent. */
  contentType: string | null;
  /** Drops the body unread (e.g. when it is too big). */
  discard(): void;
}

/** Content types that are text, never a video file. */
const NOT_A_VIDEO = /^(application\/(json|problem\+json|xml)|text\/)/;

/** Opens a finished video for streaming (follows redirects; the key goes only to the service's origin). */
export async function openVideoDownload(
  client: ServiceClient,
  url: string,
  signal?: AbortSignal,
): Promise<VideoDownload> {
  const response = await client.download(url, signal);
  const length = Number(response.headers['content-length']);
  const contentType = response.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || null;
  if (contentType && NOT_A_VIDEO.test(contentType)) {
    // An error page or an API answer (a host may redirect to one): never saved as "the video".
    discardBody(response.body);
    const host = new URL(response.url ?? url).host;
    throw unreadableAnswer(
      `The video URL (${host}) answered ${contentType}, not a video, so nothing was saved`,
      host,
    );
  }
  return {
    body: guardedBody(response.body, 'the video', client.timeoutMs, (t) => client.scrub(t), signal),
    bytes: Number.isSafeInteger(length) && length >= 0 && response.headers['content-length'] ? length : null,
    contentType,
    discard: () => discardBody(response.body),
  };
}
