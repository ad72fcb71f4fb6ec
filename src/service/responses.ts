import type { ServiceClient } from './client.js';
import { parseJsonBody } from './client.js';
import { ServiceError } from './errors.js';
import { asArray, asNumber, asObject, asString, type Json } from './normalize.js';

export interface ResponsesRequest {
  model: string;
  input: string | unknown[];
  instructions?: string;
  max_output_tokens?: number;
  reasoning?: { effort: 'minimal' | 'low' | 'medium' | 'high' };
  temperature?: number;
}

export interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
}

export interface ModelAnswer {
  text: string;
  model: string;
  usage: Usage | null;
  status: string;
}

export interface ResponsesOptions {
  signal?: AbortSignal;
  /** Called with each text delta as it streams in. */
  onDelta?: (delta: string, textSoFar: string) => void;
}

/**
 * POST /v1/responses with `"stream": true` set explicitly (left out, some upstreams complete
 * empty). Reads SSE events as they come; accepts a JSON answer too.
 */
export async function createResponse(
  client: ServiceClient,
  req: ResponsesRequest,
  options: ResponsesOptions = {},
): Promise<ModelAnswer> {
  const res = await client.stream({
    method: 'POST',
    path: '/v1/responses',
    json: { ...req, stream: true },
    signal: options.signal,
    retry: 'safe',
  });
  if (!/event-stream/i.test(res.headers['content-type'] ?? '')) {
    const text = await res.body.text();
    return answerFromResponse(parseJsonBody<unknown>(text, client.scrub.bind(client)), req.model);
  }
  const reader = new ResponseStreamReader(req.model, options.onDelta);
  const decoder = new TextDecoder();
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    reader.push(decoder.decode(chunk, { stream: true }));
    if (reader.done) break;
  }
  reader.push(`${decoder.decode()}\n\n`);
  if (!reader.done) res.body.destroy();
  return reader.finish();
}

/** Folds Responses SSE events into one answer. Pure: fed text, yields the result. */
export class ResponseStreamReader {
  private buffer = '';
  private text = '';
  private final: ModelAnswer | null = null;
  private failure: string | null = null;
  done = false;

  constructor(
    private readonly model: string,
    private readonly onDelta?: (delta: string, textSoFar: string) => void,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk.replace(/\r\n/g, '\n');
    let end = this.buffer.indexOf('\n\n');
    while (end !== -1) {
      this.handleEvent(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
      end = this.buffer.indexOf('\n\n');
    }
  }

  finish(): ModelAnswer {
    if (this.failure !== null) {
      throw new ServiceError({
        kind: 'http',
        status: 502,
        message: `The model stream failed: ${this.failure}`,
        maybeDelivered: true,
      });
    }
    if (this.final && (this.final.text || !this.text)) return this.final;
    // No completed event, or one with an empty output: keep the text the deltas carried.
    return {
      text: this.text,
      model: this.final?.model ?? this.model,
      usage: this.final?.usage ?? null,
      status: this.final?.status ?? 'incomplete',
    };
  }

  private handleEvent(block: string): void {
    let type = '';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) type = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    const payload = data.join('\n');
    if (!payload || payload === '[DONE]') return;
    let event: Json;
    try {
      event = asObject(JSON.parse(payload));
    } catch {
      return; // a stray non-JSON line is not worth failing the answer for
    }
    type = asString(event.type) ?? type;
    if (type === 'response.output_text.delta') {
      const delta = asString(event.delta) ?? '';
      this.text += delta;
      if (delta) this.onDelta?.(delta, this.text);
    } else if (type === 'response.completed' || type === 'response.incomplete') {
      this.final = answerFromResponse(event.response ?? event, this.model);
      this.done = true;
    } else if (type === 'error' || type === 'response.failed') {
      const err = asObject(event.error ?? asObject(event.response).error);
      this.failure = asString(err.message) ?? asString(event.message) ?? 'unknown error';
      this.done = true;
    }
  }
}

/** Reads a non-streamed Responses object (or a response.completed payload). */
export function answerFromResponse(data: unknown, requestedModel: string): ModelAnswer {
  const obj = asObject(data);
  const parts: string[] = [];
  if (typeof obj.output_text === 'string') parts.push(obj.output_text);
  else {
    for (const item of asArray(obj.output)) {
      for (const content of asArray(asObject(item).content)) {
        const c = asObject(content);
        if ((c.type === 'output_text' || c.type === 'text') && typeof c.text === 'string') parts.push(c.text);
      }
    }
  }
  const usage = asObject(obj.usage);
  const hasUsage = Object.keys(usage).length > 0;
  return {
    text: parts.join(''),
    model: asString(obj.model) ?? requestedModel,
    usage: hasUsage
      ? {
          input_tokens: asNumber(usage.input_tokens) ?? null,
          output_tokens: asNumber(usage.output_tokens) ?? null,
          total_tokens: asNumber(usage.total_tokens) ?? null,
        }
      : null,
    status: asString(obj.status) ?? 'completed',
  };
}
