// The SSE streams of the echo model, in 9router's two forms: passed through from a provider that
// speaks the Responses API (its events, then a `data: [DONE]` line 9router adds), or translated
// from a chat-completions provider (created, in_progress, the output item and part, deltas, the
// done events and a bare completed response; no [DONE]).
import type { Reply, Sink } from './http-util.js';
import {
  buildResponse,
  type ResponseSummary,
  sseEvent,
  translatedPart,
  translatedResponse,
} from './responses-shape.js';
import type { ServiceState } from './state.js';

const DELTA_PAUSE_MS = 5;
const SLOW_DELTA_PAUSE_MS = 200;
const MAX_DELTAS = 50;

/**
 * `full`: the whole answer. `empty`: a completed response with nothing in it (EMPTY_STREAM, and
 * what 9router streams when `stream` was not asked for). `midstream-error`: two deltas, then an
 * error event. `slow`: a delta every 200 ms, to cancel mid-answer.
 */
export type StreamMode = 'full' | 'empty' | 'midstream-error' | 'slow';

/** How 9router reached the model's provider: the Responses API itself, or chat completions. */
export type StreamForm = 'passthrough' | 'translated';

/** ~8-character chunks, but never so many that a long answer streams for seconds. */
function chunksOf(text: string): string[] {
  const size = Math.max(8, Math.ceil(text.length / MAX_DELTAS));
  const chunks: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) chunks.push(text.slice(offset, offset + size));
  return chunks;
}

type Send = (type: string, payload: Record<string, unknown>) => Promise<boolean>;

/** The deltas (two of them before a mid-stream error); false once the client is gone. */
async function sendDeltas(
  send: Send,
  sink: Sink,
  summary: ResponseSummary,
  mode: StreamMode,
  extra: Record<string, unknown>,
): Promise<boolean> {
  const chunks = chunksOf(summary.text);
  const deltas = mode === 'midstream-error' ? chunks.slice(0, 2) : chunks;
  const pause = mode === 'slow' ? SLOW_DELTA_PAUSE_MS : DELTA_PAUSE_MS;
  for (const delta of deltas) {
    if (!(await send('response.output_text.delta', { ...extra, delta }))) return false;
    if (!(await sink.sleep(pause))) return false;
  }
  return true;
}

const upstreamFailure = () =>
  sseEvent('error', { type: 'error', error: { message: 'upstream stream failed' } });

async function passthrough(sink: Sink, summary: ResponseSummary, mode: StreamMode): Promise<boolean> {
  let sequence = 0;
  const send: Send = (type, payload) =>
    sink.write(sseEvent(type, { type, sequence_number: sequence++, ...payload }));
  if (!(await send('response.created', { response: buildResponse(summary, 'in_progress', false) })))
    return false;
  if (mode === 'empty') {
    await send('response.completed', { response: buildResponse(summary, 'completed', false) });
    return sink.write('data: [DONE]\n\n');
  }
  const itemIds = { item_id: summary.messageId, output_index: 0, content_index: 0 };
  if (!(await sendDeltas(send, sink, summary, mode, itemIds))) return false;
  if (mode === 'midstream-error') return sink.write(upstreamFailure());
  await send('response.output_text.done', { ...itemIds, text: summary.text });
  await send('response.completed', { response: buildResponse(summary, 'completed', true) });
  return sink.write('data: [DONE]\n\n');
}

async function translated(sink: Sink, summary: ResponseSummary, mode: StreamMode): Promise<boolean> {
  let sequence = 1;
  const send: Send = (type, payload) =>
    sink.write(sseEvent(type, { type, ...payload, sequence_number: sequence++ }));
  if (mode === 'empty')
    return send('response.completed', { response: translatedResponse(summary, 'completed') });
  const created = { ...translatedResponse(summary, 'in_progress'), output: [] };
  if (!(await send('response.created', { response: created }))) return false;
  const { background: _b, error: _e, ...progress } = translatedResponse(summary, 'in_progress');
  await send('response.in_progress', { response: progress });
  const itemId = `msg_${summary.id}_0`;
  await send('response.output_item.added', {
    output_index: 0,
    item: { id: itemId, type: 'message', content: [], role: 'assistant' },
  });
  const itemIds = { item_id: itemId, output_index: 0, content_index: 0 };
  await send('response.content_part.added', { ...itemIds, part: translatedPart('') });
  if (!(await sendDeltas(send, sink, summary, mode, { ...itemIds, logprobs: [] }))) return false;
  if (mode === 'midstream-error') return sink.write(upstreamFailure());
  await send('response.output_text.done', { ...itemIds, text: summary.text, logprobs: [] });
  await send('response.content_part.done', { ...itemIds, part: translatedPart(summary.text) });
  await send('response.output_item.done', {
    output_index: 0,
    item: { id: itemId, type: 'message', content: [translatedPart(summary.text)], role: 'assistant' },
  });
  return send('response.completed', { response: translatedResponse(summary, 'completed') });
}

export function streamReply(
  summary: ResponseSummary,
  form: StreamForm,
  mode: StreamMode,
  state: ServiceState,
): Reply {
  const produce = form === 'passthrough' ? passthrough : translated;
  return {
    kind: 'stream',
    status: 200,
    contentType: 'text/event-stream',
    headers: { 'cache-control': 'no-cache' },
    async produce(sink) {
      // Counted so tests can see whether a client's cancellation really ended the stream.
      state.responseStreams.open += 1;
      try {
        const finished = await produce(sink, summary, mode);
        state.responseStreams[finished ? 'completed' : 'cut'] += 1;
      } finally {
        state.responseStreams.open -= 1;
      }
    },
  };
}
