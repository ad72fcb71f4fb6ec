import { describe, expect, it } from 'vitest';
import { transcriptText } from '../../src/gateway/endpoints/audio.js';
import { bareProviderId } from '../../src/gateway/endpoints/models.js';
import { answerFromResponse, ResponseStreamReader } from '../../src/gateway/endpoints/responses.js';
import { readJobState } from '../../src/gateway/endpoints/videos.js';
import { parseErrorBody, ServiceError } from '../../src/gateway/errors.js';
import { parseJsonBody, parseRetryAfter } from '../../src/gateway/http-body.js';
import {
  providerWithoutCredentials,
  readUpstreamFailure,
  resetAfterSeconds,
} from '../../src/gateway/upstream-failure.js';
import { secretScrubber } from '../../src/lib/secrets.js';

describe('error bodies', () => {
  it('reads every shape the contract allows', () => {
    expect(
      parseErrorBody('{"error":{"message":"[xai] bad","code":"bad_request"}}', 'application/json'),
    ).toEqual({
      message: '[xai] bad',
      code: 'bad_request',
      json: true,
      errorObject: true,
    });
    expect(parseErrorBody('{"error":"API key required"}', 'application/json')).toEqual({
      message: 'API key required',
      json: true,
    });
    expect(parseErrorBody('{"error":{"message":"x","code":429}}', undefined)).toEqual({
      message: 'x',
      code: '429',
      json: true,
      errorObject: true,
    });
    expect(
      parseErrorBody(
        '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
        'text/html',
      ),
    ).toEqual({ message: 'non-JSON answer: 502 Bad Gateway', json: false });
    expect(parseErrorBody('upstream exploded\nstack...', 'text/plain')).toEqual({
      message: 'upstream exploded',
      json: false,
    });
    expect(parseErrorBody('', undefined)).toEqual({});
  });

  it('gives actionable hints by status', () => {
    const e401 = new ServiceError({
      kind: 'http',
      status: 401,
      message: 'The service answered 401: Missing API key',
      maybeDelivered: true,
    });
    expect(e401.describe()).toMatch(/Set GATEWAY_API_KEY/);
    const e429 = new ServiceError({
      kind: 'http',
      status: 429,
      message: 'x',
      retryAfterSeconds: 30,
      maybeDelivered: true,
    });
    expect(e429.describe()).toMatch(/retry after 30 s/);
    const creds = new ServiceError({
      kind: 'http',
      status: 400,
      message: 'The service answered 400: No credentials for provider: tavily',
      serviceMessage: 'No credentials for provider: tavily',
      maybeDelivered: true,
    });
    expect(creds.describe()).toMatch(
      /tavily is cooling down after an earlier error .* or the gateway has no tavily account/,
    );
  });

  it('names the upstream provider a gateway message is tagged with, and its cooldown', () => {
    expect(readUpstreamFailure('[exa] exa returned 401: {"error":"denied"} (reset after 2m)')).toEqual({
      subject: 'exa',
      provider: 'exa',
      upstreamStatus: 401,
      detail: 'exa returned 401: {"error":"denied"}',
    });
    // A provider node is tagged with an internal id: the model the request named stands in.
    expect(
      readUpstreamFailure(
        '[openai-compatible-chat-9dba2309-4c69-4664-b4e8-6b388914e2dd/m1] [403]: {"error":"no"}',
        'fakechat/m1',
      ),
    ).toMatchObject({
      subject: 'fakechat/m1',
      provider: 'fakechat',
      upstreamStatus: 403,
      detail: '{"error":"no"}',
    });
    expect(readUpstreamFailure('[openai/tts-1/alloy] quota')).toMatchObject({
      subject: 'openai/tts-1/alloy',
      provider: 'openai',
      upstreamStatus: undefined,
    });
    expect(readUpstreamFailure('[tavily] Tavily error: 401')?.upstreamStatus).toBe(401);
    // The gateway's own errors carry no tag.
    expect(readUpstreamFailure('Invalid API key')).toBeUndefined();
    expect(readUpstreamFailure('[{"a":1}] not a tag')).toBeUndefined();
    expect(resetAfterSeconds('x (reset after 1m 53s)')).toBe(113);
    expect(resetAfterSeconds('x (reset after 30s)')).toBe(30);
    expect(resetAfterSeconds('x (reset after 1h)')).toBe(3600);
    expect(resetAfterSeconds('x (reset after soon)')).toBeUndefined();
    expect(providerWithoutCredentials('No credentials for provider: xai')).toBe('xai');
  });

  it('parses Retry-After in seconds and as a date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(new Date(Date.now() + 5_000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('tolerates a trailing data: [DONE] and reports truncated JSON as malformed', () => {
    expect(parseJsonBody('{"a":1}\ndata: [DONE]\n')).toEqual({ a: 1 });
    expect(() => parseJsonBody('{"a":')).toThrow(/not valid JSON/);
  });

  it('scrubs secrets and bearer tokens', () => {
    const scrub = secretScrubber(['sk-secret-1234']);
    expect(scrub('key sk-secret-1234 and Bearer abcdefghijklmnop')).toBe('key *** and Bearer ***');
  });
});

describe('providers', () => {
  it('strips the /search and /fetch suffixes', () => {
    expect(bareProviderId('tavily/search', 'search')).toBe('tavily');
    expect(bareProviderId('jina-reader/fetch', 'fetch')).toBe('jina-reader');
    expect(bareProviderId('search-combo', 'search')).toBe('search-combo');
  });
});

describe('video job states', () => {
  it('normalises every status variant', () => {
    for (const s of ['pending', 'queued', 'processing', 'in_progress', 'running'])
      expect(readJobState({ status: s }).status).toBe('running');
    for (const s of ['done', 'completed', 'succeeded'])
      expect(readJobState({ status: s, video: { url: 'https://x/v.mp4' } }).status).toBe('done');
    for (const s of ['failed', 'error', 'expired', 'cancelled'])
      expect(readJobState({ status: s }).status).toBe('failed');
  });

  it('reads progress, the video and the failure reason', () => {
    expect(readJobState({ status: 'pending', progress: 42 }).progress).toBe(42);
    const done = readJobState({
      status: 'done',
      video: { url: 'https://cdn/v.mp4', duration: 8 },
      model: 'm',
    });
    expect(done).toMatchObject({ videoUrl: 'https://cdn/v.mp4', duration: 8, progress: 100, error: null });
    const failed = readJobState({ status: 'failed', error: { code: 'moderation', message: 'refused' } });
    expect(failed.error).toEqual({ code: 'moderation', message: 'refused' });
    expect(readJobState({ status: 'expired' }).error?.message).toMatch(/expired/);
  });
});

describe('Responses stream', () => {
  it('folds deltas and the completed event', () => {
    const seen: string[] = [];
    const reader = new ResponseStreamReader('m', (d) => seen.push(d));
    reader.push(
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hel"}\n\n',
    );
    reader.push(
      'event: response.output_text.delta\r\ndata: {"type":"response.output_text.delta","delta":"lo"}\r\n\r\n',
    );
    reader.push(
      'event: response.completed\ndata: {"type":"response.completed","response":{"model":"x/m","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hello"}]}],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}\n\ndata: [DONE]\n\n',
    );
    expect(seen).toEqual(['Hel', 'lo']);
    expect(reader.finish()).toEqual({
      text: 'Hello',
      model: 'x/m',
      status: 'completed',
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
      incompleteReason: null,
    });
  });

  it('reads response.failed, incomplete answers and streams that end early', () => {
    const failed = new ResponseStreamReader('m');
    failed.push(
      'data: {"type":"response.output_text.delta","delta":"par"}\n\ndata: {"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}\n\n',
    );
    expect(() => failed.finish()).toThrow(/failed mid-answer after 3 characters: boom/);

    const capped = new ResponseStreamReader('m');
    capped.push(
      'data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[],"usage":{"input_tokens":4,"output_tokens":16}}}\n\n',
    );
    expect(capped.finish()).toMatchObject({
      text: '',
      status: 'incomplete',
      incompleteReason: 'max_output_tokens',
      usage: { input_tokens: 4, output_tokens: 16, total_tokens: 20 },
    });

    const cut = new ResponseStreamReader('m');
    cut.push('data: {"type":"response.output_text.delta","delta":"half an ans"}\n\n');
    expect(cut.finish()).toMatchObject({ text: 'half an ans', status: 'incomplete' });
  });

  it('uses output_text.done when no deltas came, stops at [DONE], and tolerates chat-completion chunks', () => {
    const doneOnly = new ResponseStreamReader('m');
    doneOnly.push('data: {"type":"response.output_text.done","text":"whole"}\n\ndata: [DONE]\n\n');
    expect(doneOnly.done).toBe(true);
    expect(doneOnly.finish().text).toBe('whole');

    const chat = new ResponseStreamReader('m');
    chat.push('data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n: keep-alive\n\ndata: not json\n\n');
    chat.push('data: {"choices":[{"delta":{"content":" there"}}]}\n\n');
    expect(chat.finish().text).toBe('Hi there');
  });

  it('keeps the streamed text when the completed event is empty, and fails on an error event', () => {
    const reader = new ResponseStreamReader('m');
    reader.push(
      'data: {"type":"response.output_text.delta","delta":"abc"}\n\ndata: {"type":"response.completed","response":{"output":[]}}\n\n',
    );
    expect(reader.finish().text).toBe('abc');
    const failing = new ResponseStreamReader('m');
    failing.push('event: error\ndata: {"type":"error","error":{"message":"upstream stream failed"}}\n\n');
    expect(() => failing.finish()).toThrow(/upstream stream failed/);
  });

  it('reads a non-streamed object', () => {
    expect(
      answerFromResponse({ output: [{ content: [{ type: 'output_text', text: 'hi' }] }] }, 'm').text,
    ).toBe('hi');
  });
});

describe('transcripts', () => {
  it('extracts text from json, verbose json, srt and vtt', () => {
    expect(transcriptText('{"text":"hello"}', 'application/json', 'json')).toBe('hello');
    expect(transcriptText('{"segments":[{"text":"a"},{"text":"b"}]}', undefined, 'verbose_json')).toBe('a b');
    expect(
      transcriptText(
        '1\n00:00:00,000 --> 00:00:01,000\nhello\n\n2\n00:00:01,000 --> 00:00:02,000\nworld\n',
        'text/plain',
        'srt',
      ),
    ).toBe('hello world');
    expect(transcriptText('WEBVTT\n\n00:00.000 --> 00:01.000\nhi\n', 'text/vtt', 'vtt')).toBe('hi');
  });
});
