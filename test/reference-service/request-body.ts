// Reading request bodies and the small validators every JSON route shares.
import type { IncomingMessage } from 'node:http';
import { RequestError } from './http-util.js';
import { type MultipartResult, multipartBoundary, parseMultipart } from './multipart.js';
import type { RecordedFile } from './types.js';

/** JSON bodies may carry data: URLs of images, so the cap is generous; beyond it the body is refused. */
const MAX_JSON_BODY_BYTES = 32 * 1024 * 1024;

export type ParsedBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'invalid-json'; raw: string }
  | { kind: 'too-large' }
  | { kind: 'multipart'; result: MultipartResult };

async function readText(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_BODY_BYTES) tooLarge = true;
    // Keep draining an oversized body so the reply can still be delivered on the same connection.
    if (!tooLarge) chunks.push(chunk);
  }
  return tooLarge ? null : Buffer.concat(chunks).toString('utf8');
}

/** Multipart bodies stream through the parser (never buffered); anything else is read as JSON text. */
export async function readRequestBody(req: IncomingMessage, expectsMultipart: boolean): Promise<ParsedBody> {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') {
    req.resume();
    return { kind: 'none' };
  }
  const boundary = expectsMultipart ? multipartBoundary(req.headers['content-type']) : null;
  if (boundary) return { kind: 'multipart', result: await parseMultipart(req, boundary) };
  const text = await readText(req);
  if (text === null) return { kind: 'too-large' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'invalid-json', raw: text };
  }
}

/** What the request log keeps of a body: the parsed value, a file summary, or the raw text. */
export function recordedBody(body: ParsedBody): unknown {
  switch (body.kind) {
    case 'none':
      return undefined;
    case 'json':
      return body.value;
    case 'invalid-json':
      return body.raw.length > 65_536 ? body.raw.slice(0, 65_536) : body.raw;
    case 'too-large':
      return '<body too large>';
    case 'multipart': {
      if (!body.result.ok) return '<invalid multipart form data>';
      const file: RecordedFile | null = body.result.file;
      return { fields: body.result.fields, file };
    }
  }
}

export type JsonObject = Record<string, unknown>;

/** The JSON object a route expects, or the contract's 400 for anything else. */
export function jsonObjectBody(body: ParsedBody): JsonObject {
  if (body.kind === 'too-large') throw new RequestError(413, 'Request body too large');
  if (body.kind !== 'json') throw new RequestError(400, 'Invalid JSON body');
  const value = body.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RequestError(400, 'Request body must be a JSON object');
  }
  return value as JsonObject;
}

export function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new RequestError(400, `${field} is required`);
  return value;
}

export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RequestError(400, `${field} must be a string`);
  return value;
}

export function optionalNumber(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new RequestError(400, `${field} must be a number`);
  }
  return value;
}

/** `model`, or its alias `provider`, as search and fetch accept either. */
export function requireModel(body: JsonObject): string {
  const model = body.model ?? body.provider;
  if (typeof model !== 'string' || model.trim() === '')
    throw new RequestError(400, 'Missing required field: provider (or model)');
  return model.trim();
}
