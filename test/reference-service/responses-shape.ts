// The Responses API objects and SSE framing the echo model answers with.

export interface ResponseSummary {
  id: string;
  messageId: string;
  model: string;
  text: string;
  /** What counts as input for usage: instructions and the user text. */
  promptText: string;
}

function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

export function usageOf(summary: ResponseSummary, withOutput: boolean): Record<string, number> {
  const input = countTokens(summary.promptText);
  const output = withOutput ? countTokens(summary.text) : 0;
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/** A response object; `withOutput: false` gives the empty output some upstreams send. */
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
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: summary.model,
    output,
    ...(status === 'completed' ? { usage: usageOf(summary, withOutput) } : {}),
  };
}

export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
