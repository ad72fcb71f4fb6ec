import { nestsTooDeep } from '../../lib/json-depth.js';
import { ServiceError } from '../errors.js';
import { asArray, asNumber, asObject, asString, type Json, shownText } from '../normalize.js';

export interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
}

/** A model's whole answer, from a stream or from one JSON body. */
export interface ModelAnswer {
  text: string;
  model: string;
  usage: Usage | null;
  /** `completed`, or `incomplete` when the answer stopped early (see `incompleteReason`). */
  status: string;
  /** Why an answer is incomplete, e.g. `max_output_tokens`; null when unknown or complete. */
  incompleteReason: string | null;
}

/** Folds Responses SSE events into one answer. Pure: fed text, yields the result. */
export class ResponseStreamReader {
  private buffer = '';
  /** Text received since the last event end, not yet joined onto `buffer`. */
  private pending: string[] = [];
  private text = '';
  private doneText: string | null = null;
  private final: ModelAnswer | null = null;
  private failure: string | null = null;
  done = false;

  constructor(
    private readonly model: string,
    private readonly onDelta?: (delta: string, textSoFar: string) => void,
  ) {}

  /** Characters of text the deltas carried so far. */
  get textLength(): number {
    return this.text.length;
  }

  push(chunk: string): void {
    const text = chunk.replace(/\r\n?/g, '\n');
    if (this.done || !text) return;
    // Text without an event end is only collected: joining and rescanning everything received on
    // every chunk would be quadratic when a (hostile) event never ends.
    const before = this.pending.at(-1) ?? this.buffer;
    if (!text.includes('\n\n') && !(before.endsWith('\n') && text.startsWith('\n'))) {
      this.pending.push(text);
      return;
    }
    this.buffer = this.buffer + this.pending.join('') + text;
    this.pending = [];
    let end = this.buffer.indexOf('\n\n');
    while (end !== -1 && !this.done) {
      this.handleEvent(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
      end = this.buffer.indexOf('\n\n');
    }
  }

  finish(): ModelAnswer {
    if (this.failure !== null) {
      const when = this.text ? ` mid-answer after ${this.text.length} characters` : '';
      throw new ServiceError({
        kind: 'http',
        message: `The model failed${when}: ${this.failure}. Retry, or choose another model`,
        maybeDelivered: true,
      });
    }
    if (this.final?.text) return this.final;
    const text = this.text || this.doneText || '';
    return {
      text,
      model: this.final?.model ?? this.model,
      usage: this.final?.usage ?? null,
      // Deltas but no completion event: the stream ended early, so the text may be cut.
      status: this.final?.status ?? (text ? 'incomplete' : 'completed'),
      incompleteReason: this.final?.incompleteReason ?? (this.final || !text ? null : 'stream ended early'),
    };
  }

  private handleEvent(block: string): void {
    let type = '';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) type = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    const payload = data.join('\n').trim();
    if (!payload) return;
    if (payload === '[DONE]') {
      this.done = true;
      return;
    }
    // An event nested too deep to parse in bounded time is skipped, like a stray non-JSON line.
    if (nestsTooDeep(payload)) return;
    let event: Json;
    try {
      event = asObject(JSON.parse(payload));
    } catch {
      return; // a stray non-JSON line is not worth failing the answer for
    }
    type = asString(event.type) ?? type;
    if (type === 'response.output_text.delta') this.addDelta(asString(event.delta) ?? '');
    else if (type === 'response.output_text.done')
      this.doneText = (this.doneText ?? '') + (asString(event.text) ?? '');
    else if (type === 'response.completed' || type === 'response.incomplete') {
      this.final = answerFromResponse(event.response ?? event, this.model);
      this.done = true;
    } else if (type === 'error' || type === 'response.failed') {
      const err = asObject(event.error ?? asObject(event.response).error);
      this.failure = shownText(asString(err.message) ?? asString(event.message) ?? 'unknown error');
      this.done = true;
    } else if (Array.isArray(event.choices)) {
      // Tolerate a gateway that streams chat-completion chunks on this route.
      this.addDelta(asString(asObject(asObject(asArray(event.choices)[0]).delta).content) ?? '');
    }
  }

  private addDelta(delta: string): void {
    if (!delta) return;
    this.text += delta;
    this.onDelta?.(delta, this.text);
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
  const status = asString(obj.status) ?? 'completed';
  return {
    text: parts.join(''),
    model: answeringModel(asString(obj.model), requestedModel),
    usage: usageOf(obj.usage),
    status,
    incompleteReason:
      status === 'incomplete' ? (asString(asObject(obj.incomplete_details).reason) ?? null) : null,
  };
}

/**
 * The model that answered, as an id the caller can pass again: a gateway names the upstream's
 * own model (`small` for `fakeresp/small`), which alone routes nowhere, so when it is the asked
 * model without its provider prefix the asked id is kept. A different name (a dated version of
 * the model, or another model a combo chose) is reported as the gateway gives it.
 */
function answeringModel(reported: string | undefined, requested: string): string {
  if (!reported || requested.endsWith(`/${reported}`)) return requested;
  return reported;
}

/** Token counts as reported (they may include a fixed gateway overhead); total summed if absent. */
function usageOf(raw: unknown): Usage | null {
  const usage = asObject(raw);
  if (Object.keys(usage).length === 0) return null;
  const input = asNumber(usage.input_tokens ?? usage.prompt_tokens) ?? null;
  const output = asNumber(usage.output_tokens ?? usage.completion_tokens) ?? null;
  const total = asNumber(usage.total_tokens) ?? (input !== null && output !== null ? input + output : null);
  return { input_tokens: input, output_tokens: output, total_tokens: total };
}
