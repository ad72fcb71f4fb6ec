// Video job handles: everything needed to poll a job, in one short opaque string, so any server
// process (after a restart, or another replica) can follow a job it did not start, with no state.
//
//   vj_ + base64url( version | connection-id length | connection id | request id | check )
//
// `check` is the first 4 bytes of SHA-256 over everything before it. It is NOT a secret MAC and
// proves nothing about who made the handle: it only catches typos, truncation and hand edits, so
// a damaged handle is refused with a clear message instead of polling some other job. (A forged
// handle could at most poll a job the gateway key can poll anyway.)

import { createHash } from 'node:crypto';
import { UserError } from '../../lib/user-error.js';

export interface JobRef {
  /** The service's request_id. */
  requestId: string;
  /** The `x-9router-connection-id` the submit answered with, sent back as `x-connection-id`. */
  connectionId: string | null;
}

export const JOB_HANDLE_PREFIX = 'vj_';
const VERSION = 1;
const CHECK_BYTES = 4;
const MAX_REQUEST_ID = 1024;
const MAX_CONNECTION_ID = 255;
/**
 * The request id travels in a URL path (encoded), the connection id in an HTTP header. "." and
 * ".." survive encodeURIComponent and URL parsing resolves them, so `/v1/videos/..` would poll
 * `/v1/` with the key: no real job has such an id.
 */
const SAFE_REQUEST_ID = /^(?!\.{1,2}$)[^\p{Cc}]+$/u;
const SAFE_CONNECTION_ID = /^[\x21-\x7e]+$/;

export function encodeJobHandle(ref: JobRef): string {
  if (!canEncode(ref)) throw new Error(`job ids cannot be encoded: ${JSON.stringify(ref).slice(0, 200)}`);
  const connection = Buffer.from(ref.connectionId ?? '', 'utf8');
  const request = Buffer.from(ref.requestId, 'utf8');
  const body = Buffer.concat([Buffer.from([VERSION, connection.length]), connection, request]);
  return JOB_HANDLE_PREFIX + Buffer.concat([body, check(body)]).toString('base64url');
}

/** True when the text looks like a job handle (for telling handles from URLs). */
export function looksLikeJobHandle(text: string): boolean {
  return text.trim().startsWith(JOB_HANDLE_PREFIX);
}

/** Decodes and validates a handle; throws UserError with what is wrong and what to do. */
export function decodeJobHandle(handle: string): JobRef {
  const text = handle.trim();
  const bad = (why: string) =>
    new UserError(
      `"${preview(text)}" is not a valid video job_id (${why}). Use the job_id exactly as a video tool returned it (it starts with ${JOB_HANDLE_PREFIX}).`,
    );
  if (!text.startsWith(JOB_HANDLE_PREFIX)) throw bad(`it does not start with ${JOB_HANDLE_PREFIX}`);
  const encoded = text.slice(JOB_HANDLE_PREFIX.length);
  if (encoded === '') throw bad('it is truncated or garbled');
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) throw bad('it contains characters a job_id never has');
  const bytes = Buffer.from(encoded, 'base64url');
  if (bytes.length < 2 + 1 + CHECK_BYTES || bytes.toString('base64url') !== encoded)
    throw bad('it is truncated or garbled');
  const body = bytes.subarray(0, bytes.length - CHECK_BYTES);
  if (!check(body).equals(bytes.subarray(bytes.length - CHECK_BYTES)))
    throw bad('its checksum does not match, so it was altered or mistyped');
  if (body[0] !== VERSION) throw bad(`unknown version ${body[0]}`);
  const connectionLength = body[1] ?? 0;
  if (2 + connectionLength >= body.length) throw bad('it is truncated or garbled');
  const connectionId = body.subarray(2, 2 + connectionLength).toString('utf8');
  const requestId = body.subarray(2 + connectionLength).toString('utf8');
  const ref = { requestId, connectionId: connectionId === '' ? null : connectionId };
  if (!canEncode(ref)) throw bad('it holds an invalid id');
  return ref;
}

/** Whether the service's ids fit in a handle (always, for any id a real gateway returns). */
export function canEncode(ref: JobRef): boolean {
  return (
    ref.requestId.length <= MAX_REQUEST_ID &&
    SAFE_REQUEST_ID.test(ref.requestId) &&
    (ref.connectionId === null ||
      (ref.connectionId.length <= MAX_CONNECTION_ID && SAFE_CONNECTION_ID.test(ref.connectionId)))
  );
}

function check(body: Buffer): Buffer {
  return createHash('sha256').update(body).digest().subarray(0, CHECK_BYTES);
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 40 ? `${flat.slice(0, 37)}...` : flat;
}
