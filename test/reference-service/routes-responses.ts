// POST /v1/responses and /responses: an echo model. With `stream: true` it streams SSE events;
// with `stream: false` one JSON object; with `stream` left out it streams an EMPTY completed
// response (the gateway quirk the contract warns about). Markers in the input trigger failures:
// MIDSTREAM_ERROR (error event mid-stream), EMPTY_NONSTREAM (empty output), STRAY_DONE (a
// JSON body followed by a stray `data: [DONE]` line), EMPTY_STREAM (an empty completed stream even
// with `stream: true`), JSON_ONLY (one JSON object whatever `stream` says, as some gateways do),
// SLOW_STREAM (a delta every 200 ms for about 10 s, to cancel mid-answer).
import { randomBytes } from 'node:crypto';
import { jsonReply, type Reply, RequestError, type Sink } from './http-util.js';
import { type JsonObject, jsonObjectBody, optionalString, requireString } from './request-body.js';
import { buildResponse, type ResponseSummary, sseEvent } from './responses-shape.js';
import type { RouteContext } from './router.js';
import type { ServiceState } from './state.js';

const DELTA_PAUSE_MS = 5;
const SLOW_DELTA_PAUSE_MS = 200;
const MAX_DELTAS = 50;

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (typeof part === 'object' && part !== null ? (part as JsonObject).text : undefined))
    .filter((text): text is string => typeof text === 'string')
    .join(' ');
}

/** The text of the input: a string, or the last user item of an item list. */
function inputText(input: unknown): string {
  if (typeof input === 'string' && input.trim() !== '') return input;
  if (!Array.isArray(input)) throw new RequestError(400, 'input is required');
  for (let index = input.length - 1; index >= 0; index -= 1) {
    const item: unknown = input[index];
    if (typeof item !== 'object' || item === null) continue;
    const { role, content } = item as JsonObject;
    if (role === 'user') return textOfContent(content);
  }
  throw new RequestError(400, 'input must contain a user message');
}

function outputText(input: string, instructions: string | undefined, maxTokens: number | undefined): string {
  const full = `${instructions ? `[${instructions}] ` : ''}Echo: ${input}`;
  if (maxTokens === undefined) return full;
  return full.split(/\s+/).slice(0, maxTokens).join(' ');
}

function maxOutputTokens(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RequestError(400, 'max_output_tokens must be a positive integer');
  }
  return value;
}

/** ~8-character chunks, but never so many that a long answer streams for seconds. */
function chunksOf(text: string): string[] {
  const size = Math.max(8, Math.ceil(text.length / MAX_DELTAS));
  const chunks: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) chunks.push(text.slice(offset, offset + size));
  return chunks;
}

type StreamMode = 'full' | 'empty' | 'midstream-error' | 'slow';

function streamReply(summary: ResponseSummary, mode: StreamMode, state: ServiceState): Reply {
  const produce = async (sink: Sink) => {
    let sequence = 0;
    const send = (type: string, payload: Record<string, unknown>) =>
      sink.write(sseEvent(type, { type, sequence_number: sequence++, ...payload }));
    if (!(await send('response.created', { response: buildResponse(summary, 'in_progress', false) })))
      return false;
    if (mode === 'empty') {
      await send('response.completed', { response: buildResponse(summary, 'completed', false) });
      return sink.write('data: [DONE]\n\n');
    }
    const itemIds = { item_id: summary.messageId, output_index: 0, content_index: 0 };
    const chunks = chunksOf(summary.text);
    // A failing upstream gets a couple of deltas out before the error event ends the stream.
    const deltas = mode === 'midstream-error' ? chunks.slice(0, 2) : chunks;
    const pause = mode === 'slow' ? SLOW_DELTA_PAUSE_MS : DELTA_PAUSE_MS;
    for (const delta of deltas) {
      if (!(await send('response.output_text.delta', { ...itemIds, delta }))) return false;
      if (!(await sink.sleep(pause))) return false;
    }
    if (mode === 'midstream-error') {
      return sink.write(sseEvent('error', { type: 'error', error: { message: 'upstream stream failed' } }));
    }
    await send('response.output_text.done', { ...itemIds, text: summary.text });
    await send('response.completed', { response: buildResponse(summary, 'completed', true) });
    return sink.write('data: [DONE]\n\n');
  };
  return {
    kind: 'stream',
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    headers: { 'cache-control': 'no-cache' },
    async produce(sink) {
      // Counted so tests can see whether a client's cancellation really ended the stream.
      state.responseStreams.open += 1;
      try {
        const finished = await produce(sink);
        state.responseStreams[finished ? 'completed' : 'cut'] += 1;
      } finally {
        state.responseStreams.open -= 1;
      }
    },
  };
}

function streamMode(input: string): StreamMode {
  if (input.includes('MIDSTREAM_ERROR')) return 'midstream-error';
  if (input.includes('EMPTY_STREAM')) return 'empty';
  if (input.includes('SLOW_STREAM')) return 'slow';
  return 'full';
}

export function createResponse(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const model = requireString(body.model, 'model');
  if (!context.state.effectiveModelList('chat').some((entry) => entry.id === model)) {
    throw new RequestError(404, `Model not found: ${model}`);
  }
  const input = inputText(body.input);
  const instructions = optionalString(body.instructions, 'instructions');
  const text = outputText(input, instructions, maxOutputTokens(body.max_output_tokens));
  const summary: ResponseSummary = {
    id: `resp_${randomBytes(12).toString('hex')}`,
    messageId: `msg_${randomBytes(12).toString('hex')}`,
    model,
    text,
    promptText: `${instructions ?? ''} ${input}`,
  };
  const jsonOnly = input.includes('JSON_ONLY');
  if (body.stream === true && !jsonOnly) return streamReply(summary, streamMode(input), context.state);
  if ((body.stream === undefined || body.stream === null) && !jsonOnly) {
    return streamReply(summary, 'empty', context.state);
  }
  const withOutput = !input.includes('EMPTY_NONSTREAM');
  const response = buildResponse(summary, 'completed', withOutput);
  if (input.includes('STRAY_DONE')) {
    const raw = `${JSON.stringify(response)}\n\ndata: [DONE]\n\n`;
    return { kind: 'raw', status: 200, contentType: 'application/json', body: raw };
  }
  return jsonReply(response);
}
