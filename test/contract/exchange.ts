// One raw HTTP exchange with a gateway, reduced to what the contract compares: the status, the
// headers that matter (content type, Retry-After, the video connection id) and the body's shape.
import { mergeShapes, type Shape, shapeOf } from './shape.js';

/** A gateway the suite talks to: the real one or the reference service. */
export interface Side {
  name: 'real' | 'reference';
  url: string;
  apiKey: string;
}

export interface FilePart {
  filename: string;
  type: string;
  bytes: Uint8Array;
}

export interface RawRequest {
  method: 'GET' | 'POST';
  /** Path and query, e.g. `/v1/models/info?id=tavily/search`. */
  path: string;
  /** The key sent: the gateway's own (default), none at all, or a wrong one. */
  auth?: 'key' | 'none' | 'wrong';
  headers?: Record<string, string>;
  json?: unknown;
  multipart?: Record<string, string | FilePart>;
}

export type ObservedBody =
  | { kind: 'empty' }
  | { kind: 'json'; shape: Shape }
  | { kind: 'invalid-json' }
  /** Event types in order (repeats collapsed), each type's merged data shape, and the [DONE] line. */
  | { kind: 'sse'; types: string[]; data: Map<string, Shape>; done: boolean }
  | { kind: 'text' }
  | { kind: 'bytes' };

export interface Observation {
  status: number;
  /** The media type without parameters (`application/json`), or `none`. */
  contentType: string;
  retryAfter: boolean;
  connectionId: boolean;
  body: ObservedBody;
}

function encodeBody(request: RawRequest): { body?: FormData | string; headers: Record<string, string> } {
  if (request.multipart) {
    const form = new FormData();
    for (const [name, value] of Object.entries(request.multipart)) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([value.bytes], { type: value.type }), value.filename);
    }
    return { body: form, headers: {} };
  }
  if (request.json !== undefined) {
    return { body: JSON.stringify(request.json), headers: { 'content-type': 'application/json' } };
  }
  return { headers: {} };
}

export async function send(side: Side, request: RawRequest): Promise<Response> {
  const { body, headers } = encodeBody(request);
  const auth = request.auth ?? 'key';
  const authorization: Record<string, string> =
    auth === 'none' ? {} : { authorization: `Bearer ${auth === 'wrong' ? 'sk-wrong-key' : side.apiKey}` };
  return fetch(`${side.url}${request.path}`, {
    method: request.method,
    headers: { ...authorization, ...headers, ...request.headers },
    body,
    signal: AbortSignal.timeout(20_000),
  });
}

const SSE_OUTSIDE_EVENTS = '(text outside events)';

function parseSse(text: string): ObservedBody {
  const types: string[] = [];
  const data = new Map<string, Shape>();
  let done = false;
  for (const block of text.replace(/\r\n?/g, '\n').split(/\n\n+/)) {
    if (!block.trim()) continue;
    let type = '';
    const lines: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) type = line.slice(6).trim();
      else if (line.startsWith('data:')) lines.push(line.slice(5).replace(/^ /, ''));
    }
    const payload = lines.join('\n');
    if (payload === '[DONE]') {
      done = true;
      continue;
    }
    let parsed: unknown;
    try {
      parsed = lines.length ? JSON.parse(payload) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) {
      type = SSE_OUTSIDE_EVENTS;
    } else if (!type && typeof parsed === 'object' && parsed !== null) {
      type = String((parsed as { type?: unknown }).type ?? 'message');
    }
    if (types.at(-1) !== type) types.push(type);
    if (parsed !== undefined) {
      const before = data.get(type);
      const shape = shapeOf(parsed);
      data.set(type, before ? mergeShapes(before, shape) : shape);
    }
  }
  return { kind: 'sse', types, data, done };
}

function bodyOf(contentType: string, bytes: Buffer): ObservedBody {
  if (bytes.length === 0) return { kind: 'empty' };
  if (contentType === 'text/event-stream') return parseSse(bytes.toString('utf8'));
  if (contentType === 'application/json') {
    try {
      return { kind: 'json', shape: shapeOf(JSON.parse(bytes.toString('utf8'))) };
    } catch {
      return { kind: 'invalid-json' };
    }
  }
  if (contentType.startsWith('text/')) return { kind: 'text' };
  return { kind: 'bytes' };
}

export async function observe(side: Side, request: RawRequest): Promise<Observation> {
  const res = await send(side, request);
  const contentType =
    (res.headers.get('content-type') ?? 'none').split(';')[0]?.trim().toLowerCase() ?? 'none';
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    contentType,
    retryAfter: res.headers.has('retry-after'),
    connectionId: res.headers.has('x-9router-connection-id'),
    body: bodyOf(contentType, bytes),
  };
}
