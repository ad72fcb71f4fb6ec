// The Responses API objects and SSE events the echo model answers with, in the two forms 9router
// produces: passed through from a provider that speaks the Responses API itself (an OpenAI-style
// response object with output and usage), or translated from a chat-completions provider (its
// own event sequence, whose final response carries no output, usage or model).

export interface ResponseSummary {
  id: string;
  messageId: string;
  model: string;
  text: string;
  /** What counts as input for usage: instructions and the user text. */
  promptText: string;
}

/** 9router adds a fixed overhead to the input tokens of the answers it builds or passes on whole. */
const GATEWAY_INPUT_TOKEN_PADDING = 2000;

function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

export function usageOf(summary: ResponseSummary, withOutput: boolean): Record<string, number> {
  const input = countTokens(summary.promptText);
  const output = withOutput ? countTokens(summary.text) : 0;
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/** Usage as 9router reports it on a JSON answer: input padded, no total. */
export function paddedUsageOf(summary: ResponseSummary, withOutput: boolean): Record<string, number> {
  const usage = usageOf(summary, withOutput);
  return {
    input_tokens: (usage.input_tokens ?? 0) + GATEWAY_INPUT_TOKEN_PADDING,
    output_tokens: usage.output_tokens ?? 0,
  };
}

const createdAt = () => Math.floor(Date.now() / 1000);

/** A provider's own response object; `withOutput: false` gives the empty output some send. */
export function buildResponse(
  summary: ResponseSummary,
  status: 'in_progress' | 'completed',
  withOutput: boolean,
): Record<string, unknown> {
  const output = withOutput
    ? [
        {
          type: 'message',
          id: summary.messageId,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: summary.text, annotations: [] }],
        },
      ]
    : [];
  return {
    id: summary.id,
    object: 'response',
    created_at: createdAt(),
    status,
    model: summary.model,
    output,
    usage: status === 'completed' ? usageOf(summary, withOutput) : null,
  };
}

/** The bare response object of 9router's translated events (no output, usage or model). */
export function translatedResponse(summary: ResponseSummary, status: 'in_progress' | 'completed') {
  return {
    id: summary.id,
    object: 'response',
    created_at: createdAt(),
    status,
    background: false,
    error: null,
  };
}

/** What 9router makes of a chat provider's non-streamed answer. */
export function translatedJson(summary: ResponseSummary, withOutput: boolean): Record<string, unknown> {
  const output = withOutput
    ? [
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: summary.text, annotations: [] }],
        },
      ]
    : [];
  return {
    ...translatedResponse(summary, 'completed'),
    model: summary.model.split('/').slice(1).join('/') || summary.model,
    output,
    usage: paddedUsageOf(summary, withOutput),
  };
}

/** The text part of 9router's translated events, as it is added and when done. */
export function translatedPart(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
