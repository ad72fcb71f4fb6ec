import type { ServiceClient } from '../client.js';
import { cancelledError, ServiceError, seconds, unreadableAnswer } from '../errors.js';
import { parseJsonBody } from '../http-body.js';
import { shownValue } from '../normalize.js';
import { answerFromResponse, type ModelAnswer, ResponseStreamReader } from './responses-stream.js';

export type { ModelAnswer, Usage } from './responses-stream.js';
export { answerFromResponse, ResponseStreamReader } from './responses-stream.js';

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

export interface ResponsesRequest {
  model: string;
  input: string | unknown[];
  instructions?: string;
  max_output_tokens?: number;
  reasoning?: { effort: ReasoningEffort };
  temperature?: number;
}

export interface ResponsesOptions {
  signal?: AbortSignal;
  /** Called with each text delta as it streams in. */
  onDelta?: (delta: string, textSoFar: string) => void;
}

const MAX_JSON_CHARS = 16 * 1024 * 1024;
/**
 * A stream carries JSON framing around every few characters of text, so it gets more room than a
 * JSON answer: 100,000 output tokens stream as about 16 MB. Past this the gateway is not sending an
 * answer but an endless stream, which would otherwise grow in memory until the client gives up.
 */
const MAX_STREAM_CHARS = 64 * 1024 * 1024;

/**
 * POST /v1/responses. Streams with `"stream": true` set explicitly (left out, some upstreams
 * complete empty), reading SSE events as they come; accepts a JSON answer too. When the stream
 * completes with no text at all, asks once more with `"stream": false`: the contract says some
 * providers leave one of the two modes empty. Either answer may come as SSE or as JSON whatever
 * was asked (9router streams some providers' answers to `"stream": false` too).
 */
export async function createResponse(
  client: ServiceClient,
  req: ResponsesRequest,
  options: ResponsesOptions = {},
): Promise<ModelAnswer> {
  const streamed = await readResponse(client, req, true, options);
  if (!streamed.retryWithoutStream) return streamed.answer;
  return (await readResponse(client, req, false, options)).answer;
}

interface StreamOutcome {
  answer: ModelAnswer;
  /** True when the stream finished cleanly yet carried no text and no deltas. */
  retryWithoutStream: boolean;
}

async function readResponse(
  client: ServiceClient,
  req: ResponsesRequest,
  stream: boolean,
  options: ResponsesOptions,
): Promise<StreamOutcome> {
  const res = await client.stream({
    method: 'POST',
    path: '/v1/responses',
    json: { ...req, stream },
    signal: options.signal,
    retry: 'billed',
  });
  const reader = new ResponseStreamReader(req.model, options.onDelta);
  const decoder = new TextDecoder();
  // Some gateways answer JSON whatever `stream` says, and some label SSE as text/plain or not at
  // all: unless the content type says SSE, the first non-blank characters decide.
  let mode: 'unknown' | 'sse' | 'json' = /event-stream/i.test(res.headers['content-type'] ?? '')
    ? 'sse'
    : 'unknown';
  let raw = '';
  let streamed = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      const text = decoder.decode(chunk, { stream: true });
      streamed += text.length;
      if (streamed > MAX_STREAM_CHARS) throw tooLarge(MAX_STREAM_CHARS);
      if (mode === 'sse') {
        reader.push(text);
        if (reader.done) break;
        continue;
      }
      raw += text;
      if (raw.length > MAX_JSON_CHARS) throw tooLarge(MAX_JSON_CHARS);
      if (mode === 'unknown' && raw.trimStart()) {
        mode = looksLikeSse(raw) ? 'sse' : 'json';
        if (mode === 'sse') {
          reader.push(raw);
          raw = '';
          if (reader.done) break;
        }
      }
    }
  } catch (error) {
    throw streamFailure(error, options.signal, reader.textLength, client);
  } finally {
    res.body.destroy();
  }
  if (mode !== 'sse') {
    raw += decoder.decode();
    return {
      answer: answerFromResponse(
        shownValue(parseJsonBody<unknown>(client.clean(raw), client.scrub.bind(client))),
        req.model,
      ),
      retryWithoutStream: false,
    };
  }
  reader.push(`${decoder.decode()}\n\n`);
  const finished = reader.finish();
  // Deltas can split a secret (or an escape sequence), so the whole text is cleaned, before anything cuts it.
  const answer = shownValue({ ...finished, text: client.clean(finished.text) });
  return {
    answer,
    retryWithoutStream: !answer.text && reader.textLength === 0 && answer.status !== 'incomplete',
  };
}

function looksLikeSse(text: string): boolean {
  return /^(event|data|id|retry):|^:/.test(text.trimStart());
}

function tooLarge(limit: number): ServiceError {
  return unreadableAnswer(`The model answer exceeded ${limit / 1024 / 1024} MiB`);
}

/** An error while reading the body: cancellation, a stalled stream, or a dropped connection. */
function streamFailure(
  error: unknown,
  signal: AbortSignal | undefined,
  received: number,
  client: ServiceClient,
): ServiceError {
  if (error instanceof ServiceError) return error;
  const after = `after ${received} characters`;
  if (signal?.aborted) return cancelledError();
  // Checked by code, not class: undici is loaded lazily (see client.ts).
  if ((error as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT') {
    return new ServiceError({
      kind: 'timeout',
      message: `The model stream stalled (${after}): nothing arrived for ${seconds(client.timeoutMs)} s`,
      maybeDelivered: true,
    });
  }
  const code = (error as { code?: string }).code;
  const detail = code ?? (error as Error).message;
  return new ServiceError({
    kind: 'network',
    code,
    message: client.scrub(`The connection dropped while the model was answering (${after}; ${detail})`),
    maybeDelivered: true,
  });
}
