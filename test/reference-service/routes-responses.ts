// POST /v1/responses and /responses: an echo model (`[instructions] Echo: <input>`, or the text
// setModelAnswer gives), answered the way 9router answers for the model's provider:
// - `openai/*` (9router reaches it through chat completions): `stream: true` streams its translated
//   events; `stream: false` or left out streams an empty completed response.
// - other chat providers and combos (groq, anthropic, the `fakechat` provider node): translated
//   events for `stream: true`, one translated JSON object for `stream: false`, an empty completed
//   stream when `stream` is left out.
// - the `fakeresp` provider node (speaks the Responses API): its own events and [DONE], its JSON
//   object, and, with `stream` left out, that JSON object under an event-stream content type
//   followed by `data: [DONE]`.
// A model of a provider the gateway does not have answers 404. Markers in the input trigger
// failures: MIDSTREAM_ERROR (error event mid-stream), EMPTY_NONSTREAM (empty output), STRAY_DONE (a
// JSON body followed by a stray `data: [DONE]` line), EMPTY_STREAM (an empty completed stream even
// with `stream: true`), JSON_ONLY (one JSON object whatever `stream` says, as some gateways do),
// SLOW_STREAM (a delta every 200 ms for about 10 s, to cancel mid-answer).
import { randomBytes } from 'node:crypto';
import { errorReply, jsonReply, type Reply, RequestError } from './http-util.js';
import { type JsonObject, jsonObjectBody, optionalString, requireString } from './request-body.js';
import { buildResponse, paddedUsageOf, type ResponseSummary, translatedJson } from './responses-shape.js';
import { type StreamForm, type StreamMode, streamReply } from './responses-streams.js';
import type { RouteContext } from './router.js';
import { ownerOf, providerOf, type ServiceState } from './state.js';
import type { ModelAnswer, ModelQuestion } from './types.js';

/** Provider nodes, as the test gateway has them: one speaks chat completions, one the Responses API. */
const CHAT_NODES = new Set(['fakechat']);
const RESPONSES_NODES = new Set(['fakeresp']);

/** How 9router reaches a model: `openai`, another chat provider, or a Responses API provider. */
type Upstream = 'openai' | 'chat' | 'responses';

/** Any model of a provider the gateway has is accepted (the upstream judges the model name). */
function upstreamOf(state: ServiceState, model: string): Upstream | null {
  const provider = providerOf(model);
  if (RESPONSES_NODES.has(provider)) return 'responses';
  if (CHAT_NODES.has(provider)) return 'chat';
  const list = state.effectiveModelList('chat');
  if (list.some((entry) => entry.id === model && ownerOf(entry) === 'combo')) return 'chat';
  const known = list.some((entry) => ownerOf(entry) !== 'combo' && providerOf(entry.id) === provider);
  if (!known) return null;
  return provider === 'openai' ? 'openai' : 'chat';
}

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

function outputText(
  question: ModelQuestion,
  answer: ModelAnswer | null,
  maxTokens: number | undefined,
): string {
  const { input, instructions } = question;
  const full = answer ? answer(question) : `${instructions ? `[${instructions}] ` : ''}Echo: ${input}`;
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

function streamMode(input: string): StreamMode {
  if (input.includes('MIDSTREAM_ERROR')) return 'midstream-error';
  if (input.includes('EMPTY_STREAM')) return 'empty';
  if (input.includes('SLOW_STREAM')) return 'slow';
  return 'full';
}

function jsonAnswer(summary: ResponseSummary, upstream: Upstream, input: string): Reply {
  const withOutput = !input.includes('EMPTY_NONSTREAM');
  const response =
    upstream === 'responses'
      ? { ...buildResponse(summary, 'completed', withOutput), usage: paddedUsageOf(summary, withOutput) }
      : translatedJson(summary, withOutput);
  if (input.includes('STRAY_DONE')) {
    const raw = `${JSON.stringify(response)}\n\ndata: [DONE]\n\n`;
    return { kind: 'raw', status: 200, contentType: 'application/json', body: raw };
  }
  return jsonReply(response);
}

export function createResponse(context: RouteContext): Reply {
  const body = jsonObjectBody(context.body);
  const model = requireString(body.model, 'model');
  const upstream = upstreamOf(context.state, model);
  if (!upstream) {
    return errorReply(404, {
      message: `No active credentials for provider: ${providerOf(model)}`,
      code: 'model_not_found',
    });
  }
  const input = inputText(body.input);
  const instructions = optionalString(body.instructions, 'instructions');
  const text = outputText(
    { model, input, instructions },
    context.state.modelAnswer,
    maxOutputTokens(body.max_output_tokens),
  );
  const summary: ResponseSummary = {
    id: `resp_${randomBytes(12).toString('hex')}`,
    messageId: `msg_${randomBytes(12).toString('hex')}`,
    model,
    text,
    promptText: `${instructions ?? ''} ${input}`,
  };
  const form: StreamForm = upstream === 'responses' ? 'passthrough' : 'translated';
  if (input.includes('JSON_ONLY')) return jsonAnswer(summary, upstream, input);
  if (body.stream === true) return streamReply(summary, form, streamMode(input), context.state);
  if (body.stream === false && upstream !== 'openai') return jsonAnswer(summary, upstream, input);
  if (body.stream !== false && upstream === 'responses') {
    // 9router streams the provider's JSON answer as it came, then its own [DONE].
    const json = JSON.stringify(buildResponse(summary, 'completed', true));
    return { kind: 'raw', status: 200, contentType: 'text/event-stream', body: `${json}data: [DONE]\n\n` };
  }
  return streamReply(summary, form, 'empty', context.state);
}
