// POST /v1/responses and /responses: an echo model. With `stream: true` it streams SSE events;
// with `stream: false` one JSON object; with `stream` left out it streams an EMPTY completed
// response (the gateway quirk the contract warns about). Markers in the input trigger failures:
// MIDSTREAM_ERROR (error event mid-stream), EMPTY_NONSTREAM (empty output), STRAY_DONE (a
// JSON body followed by a stray `data: [DONE]` line).
import { randomBytes } from 'node:crypto';
import { jsonReply, type Reply, RequestError, type Sink } from './http-util.js';
import { type JsonObject, jsonObjectBody, optionalString, requireString } from './request-body.js';
import { buildResponse, type ResponseSummary, sseEvent } from './responses-shape.js';
import type { RouteContext } from './router.js';

const DELTA_PAUSE_MS = 5;
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

function streamReply(summary: ResponseSummary, mode: 'full' | 'empty' | 'midstream-error'): Reply {
  const produce = async (sink: Sink) => {
    let sequence = 0;
    const send = (type: string, payload: Record<string, unknown>) =>
      sink.write(sseEvent(type, { type, sequence_number: sequence++, ...payload }));
    if (!(await send('response.created', { response: buildResponse(summary, 'in_progress', false) }))) return;
    if (mode === 'empty') {
      await send('response.completed', { response: buildResponse(summary, 'completed', false) });
      await sink.write('data: [DONE]\n\n');
      return;
    }
    const itemIds = { item_id: summary.messageId, output_index: 0, content_index: 0 };
    const chunks = chunksOf(summary.text);
    // A failing upstream gets a couple of deltas out before the error event ends the stream.
    const deltas = mode === 'midstream-error' ? chunks.slice(0, 2) : chunks;
    for (const delta of deltas) {
      if (!(await send('response.output_text.delta', { ...itemIds, delta }))) return;
      if (!(await sink.sleep(DELTA_PAUSE_MS))) return;
    }
    if (mode === 'midstream-error') {
      await sink.write(sseEvent('error', { type: 'error', error: { message: 'upstream stream failed' } }));
      return;
    }
    await send('response.output_text.done', { ...itemIds, text: summary.text });
    await send('response.completed', { response: buildResponse(summary, 'completed', true) });
    await sink.write('data: [DONE]\n\n');
  };
  return {
    kind: 'stream',
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    headers: { 'cache-control': 'no-cache' },
    produce,
  };
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
  if (body.stream === true) {
    return streamReply(summary, input.includes('MIDSTREAM_ERROR') ? 'midstream-error' : 'full');
  }
  if (body.stream === undefined || body.stream === null) return streamReply(summary, 'empty');
  const withOutput = !input.includes('EMPTY_NONSTREAM');
  const response = buildResponse(summary, 'completed', withOutput);
  if (input.includes('STRAY_DONE')) {
    const raw = `${JSON.stringify(response)}\n\ndata: [DONE]\n\n`;
    return { kind: 'raw', status: 200, contentType: 'application/json', body: raw };
  }
  return jsonReply(response);
}
