// xAI's video API as 9router reads it: a submit answers `{request_id}`; polls answer pending with
// progress, then done with the video's URL (served here, on loopback), or failed. An unknown id is
// a 404. In the prompt, `video-fails` makes the job fail and `polls-<n>` keeps it pending for n
// polls (default 1); `video-bytes-<n>` sets the file's size. A submit without a prompt is a 400.
import { randomUUID } from 'node:crypto';
import { answerFault, json } from './answer.js';
import type { Route } from './types.js';

interface Job {
  prompt: string;
  polls: number;
  pendingPolls: number;
}

const jobs = new Map<string, Job>();

/** A small file that starts like an MP4 (ftyp box), `bytes` long. */
export function videoBytes(id: string, bytes: number): Buffer {
  const head = Buffer.from([
    0,
    0,
    0,
    0x18,
    ...Buffer.from('ftypisom'),
    0,
    0,
    2,
    0,
    ...Buffer.from('isomiso2mp41'),
  ]);
  const body = Buffer.alloc(Math.max(0, bytes - head.length), `video ${id} `);
  return Buffer.concat([head, body]).subarray(0, Math.max(bytes, head.length));
}

const submit: Route = (req, res) => {
  const kind = /^\/v1\/videos\/(generations|edits|extensions)$/.exec(req.path)?.[1];
  if (req.host !== 'api.x.ai' || req.method !== 'POST' || !kind) return false;
  if (answerFault(req, res, (_s, message) => ({ code: 'fake', error: message }))) return true;
  const prompt = String(req.json?.prompt ?? '');
  // xAI refuses a job without a prompt (9router passes it on unchecked).
  if (!prompt.trim()) {
    return json(res, 400, { code: 'Client specified an invalid argument', error: 'prompt is required' });
  }
  const id = randomUUID();
  jobs.set(id, { prompt, polls: 0, pendingPolls: Number(/\bpolls-(\d+)\b/.exec(prompt)?.[1] ?? 1) });
  return json(res, 200, { request_id: id });
};

const poll: Route = (req, res, ctx) => {
  const id = /^\/v1\/videos\/([^/]+)$/.exec(req.path)?.[1];
  if (req.host !== 'api.x.ai' || req.method !== 'GET' || !id) return false;
  const job = jobs.get(id);
  if (!job) return json(res, 404, { code: 'not_found', error: `No video request with id ${id}` });
  job.polls += 1;
  if (job.polls <= job.pendingPolls) {
    return json(res, 200, {
      status: 'pending',
      progress: Math.round((job.polls / (job.pendingPolls + 1)) * 100),
    });
  }
  if (/\bvideo-fails\b/.test(job.prompt)) {
    return json(res, 200, {
      status: 'failed',
      error: { code: 'content_moderation', message: 'The video was refused by moderation.' },
    });
  }
  const bytes = Number(/\bvideo-bytes-(\d+)\b/.exec(job.prompt)?.[1] ?? 4096);
  return json(res, 200, {
    status: 'done',
    video: { url: `${ctx.localUrl}/files/${id}.mp4?bytes=${bytes}`, duration: 6, respect_moderation: true },
    model: 'grok-imagine-video',
  });
};

const file: Route = (req, res) => {
  const id = /^\/files\/([\w-]+)\.mp4$/.exec(req.path)?.[1];
  if (req.host !== 'local' || !id) return false;
  const body = videoBytes(id, Number(req.query.get('bytes') ?? 4096));
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': body.length });
  res.end(body);
  return true;
};

export const videoRoutes: Route[] = [submit, poll, file];
