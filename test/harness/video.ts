import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { decodeJobHandle } from '../../src/tools/video/job-handle.js';
import type { ReferenceService } from '../reference-service/index.js';
import { structuredOf } from './harness.js';
import { scaled } from './time.js';

/** The structured answer every video tool gives. */
export interface VideoOut {
  job_id: string;
  status: 'running' | 'done' | 'failed';
  progress: number | null;
  video_url: string | null;
  duration: number | null;
  file_path: string | null;
  error: string | null;
}

export interface Called {
  result: CallToolResult;
  out: VideoOut;
  progress: Progress[];
}

/** Calls a video tool through the MCP client, collecting its progress notifications. */
export async function callVideo(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Called> {
  const progress: Progress[] = [];
  const result = (await client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => progress.push(p),
    ...(signal ? { signal } : {}),
  })) as CallToolResult;
  return { result, out: structuredOf<VideoOut>(result), progress };
}

/** The service's request_id behind a job handle. */
export function requestIdOf(jobId: string): string {
  return decodeJobHandle(jobId).requestId;
}

/** Recorded polls of one job. */
export function pollsOf(service: ReferenceService, jobId: string) {
  const path = `/v1/videos/${requestIdOf(jobId)}`;
  return service.requests.filter((r) => r.route === 'videos.poll' && r.path === path);
}

/** Recorded submits (any of the three kinds). */
export function submitsOf(service: ReferenceService) {
  return service.requests.filter((r) => r.route.startsWith('videos.') && r.route !== 'videos.poll');
}

/** Resolves once `check` is true, polling every 20 ms; rejects after `timeoutMs` (a bounded wait). */
export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + scaled(timeoutMs);
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${scaled(timeoutMs)} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
