// The reference service against its contract: every route, both auth failures, and every fault kind,
// through plain HTTP on loopback.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scaled } from '../harness/time.js';
import {
  CLIP,
  type ReferenceService,
  type RouteName,
  startReferenceService,
  synthesizeAudio,
  videoFileBytes,
} from '../reference-service/index.js';

let service: ReferenceService;

beforeAll(async () => {
  service = await startReferenceService();
});
afterAll(() => service.close());
beforeEach(() => {
  service.clearFaults();
  service.resetCounters();
});

function authHeaders(target: ReferenceService = service): Record<string, string> {
  return { authorization: `Bearer ${target.apiKey}` };
}

function post(path: string, body: unknown, headers: Record<string, string> = {}, target = service) {
  return fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders(target), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function get(path: string, headers: Record<string, string> = {}, target = service) {
  return fetch(`${target.url}${path}`, { headers: { ...authHeaders(target), ...headers } });
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
async function json(response: Response): Promise<any> {
  return response.json();
}

/** The body the service recorded for the latest request (multipart bodies are summaries). */
function lastRecordedBody<T>(): T {
  const last = service.requests.at(-1);
  if (!last) throw new Error('no request was recorded');
  return last.body as T;
}

function transcriptionForm(
  fields: Record<string, string>,
  file?: { name: string; bytes: Uint8Array },
): FormData {
  const form = new FormData();
  if (file) form.append('file', new Blob([file.bytes], { type: 'audio/mpeg' }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

function transcribe(form: FormData, target = service) {
  return fetch(`${target.url}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: authHeaders(target),
    body: form,
  });
}

describe('routing and auth', () => {
  it('answers health without a key and 404 on unknown paths', async () => {
    expect(await json(await fetch(`${service.url}/api/health`))).toEqual({ ok: true });
    const missing = await get('/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe('not_found');
    expect(service.counters.health).toBe(1);
  });

  it('serves /v1, /api/v1 and bare /responses as the same routes', async () => {
    for (const path of ['/v1/models', '/api/v1/models']) expect((await get(path)).status).toBe(200);
    const body = { model: 'openai/gpt-4o-mini', input: 'hi', stream: false };
    for (const path of ['/v1/responses', '/api/v1/responses', '/responses']) {
      expect((await post(path, body)).status).toBe(200);
    }
    expect(service.counters.models).toBe(2);
    expect(service.counters.responses).toBe(3);
  });

  it('answers a missing or wrong key with 401 and never echoes the key; model lists need none', async () => {
    const missing = await post('/v1/search', { model: 'tavily', query: 'q' }, { authorization: '' });
    expect(missing.status).toBe(401);
    expect(await json(missing)).toEqual({
      error: { message: 'Missing API key', type: 'authentication_error', code: 'invalid_api_key' },
    });
    const wrong = await post(
      '/v1/search',
      { model: 'tavily', query: 'q' },
      { authorization: 'Bearer not-the-key' },
    );
    expect(wrong.status).toBe(401);
    const text = await wrong.text();
    expect(JSON.parse(text)).toEqual({
      error: { message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key' },
    });
    expect(text).not.toContain(service.apiKey);
    const viaHeader = await post(
      '/v1/search',
      { model: 'tavily', query: 'q' },
      {
        authorization: '',
        'x-api-key': service.apiKey,
      },
    );
    expect(viaHeader.status).toBe(200);
    expect(service.counters.search).toBe(3);
    for (const path of ['/v1/models', '/v1/models/tts', '/v1/models/info?id=openai/whisper-1']) {
      expect((await fetch(`${service.url}${path}`)).status, path).toBe(200);
      expect((await get(path, { authorization: 'Bearer not-the-key' })).status, path).toBe(200);
    }
  });

  it('refuses bad JSON and records every request', async () => {
    const response = await post('/v1/search', '{"model":');
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toBe('Invalid JSON body');
    const last = service.requests.at(-1);
    expect(last).toMatchObject({ route: 'search', method: 'POST', path: '/v1/search', body: '{"model":' });
    expect(last?.headers.authorization).toBe(`Bearer ${service.apiKey}`);
  });
});

describe('POST /v1/search', () => {
  it('returns deterministic results with the contract shape', async () => {
    const body = await json(
      await post('/v1/search', { model: 'tavily', query: 'node streams', max_results: 3 }),
    );
    expect(body).toMatchObject({ provider: 'tavily', query: 'node streams', answer: null, errors: [] });
    expect(body.usage).toEqual({ queries_used: 1, search_cost_usd: 0.008 });
    expect(body.metrics.response_time_ms).toBeTypeOf('number');
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toEqual({
      title: 'Result 1 for node streams',
      url: 'https://example.com/node-streams/1',
      display_url: 'example.com/node-streams/1',
      snippet:
        'Snippet 1 about node streams: what it is, how it works in practice, the trade-offs people hit, and links for further reading.',
      position: 1,
      score: 0.99,
      published_at: '2026-01-15',
      favicon_url: null,
      content: null,
      metadata: { author: null, language: null, source_type: null, image_url: null },
      citation: { provider: 'tavily', retrieved_at: expect.any(String), rank: 1 },
      provider_raw: null,
    });
    expect(body.results[1].published_at).toBeNull();
  });

  it('caps results, applies domain filters, news titles and both answer forms', async () => {
    const capped = await json(await post('/v1/search', { provider: 'brave', query: 'x', max_results: 50 }));
    expect(capped.results).toHaveLength(20);
    const filtered = await json(
      await post('/v1/search', {
        model: 'exa',
        query: 'q',
        max_results: 4,
        domain_filter: ['github.com', 'docs.rs', '-example.com'],
      }),
    );
    const hosts = filtered.results.map((result: { url: string }) => new URL(result.url).host);
    expect(hosts).toEqual(['github.com', 'docs.rs', 'github.com', 'docs.rs']);
    const excluded = await json(
      await post('/v1/search', { model: 'serper', query: 'q', domain_filter: ['-example.com'] }),
    );
    expect(excluded.results.every((result: { url: string }) => !result.url.includes('example.com'))).toBe(
      true,
    );
    const news = await json(await post('/v1/search', { model: 'searxng', query: 'q', search_type: 'news' }));
    expect(news.results[0].title).toBe('News: Result 1 for q');
    const answer = await json(
      await post('/v1/search', { model: 'search-combo', query: 'the answer please' }),
    );
    expect(answer.answer).toBeTypeOf('string');
    const objectAnswer = await json(await post('/v1/search', { model: 'tavily', query: 'objanswer please' }));
    expect(objectAnswer.answer).toMatchObject({ source: 'openai', model: 'gpt-4o-mini' });
  });

  it('refuses bad requests with 400', async () => {
    const cases: [unknown, string][] = [
      [{ query: 'q' }, 'Missing required field: provider (or model)'],
      [{ model: 'tavily/search', query: 'q' }, 'Unknown provider: tavily/search'],
      [{ model: 'nope', query: 'q' }, 'Unknown provider: nope'],
      [{ model: 'tavily' }, 'Missing required field: query'],
      [
        { model: 'tavily', query: 'q', domain_filter: 'github.com' },
        'domain_filter must be an array of domains',
      ],
    ];
    for (const [body, message] of cases) {
      const response = await post('/v1/search', body);
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toBe(message);
    }
    // 9router locks the provider over control characters: the cooldown's bare error, Retry-After.
    const control = await post('/v1/search', { model: 'brave', query: 'a\u0001b' });
    expect(control.status).toBe(400);
    expect(control.headers.get('retry-after')).toBe('30');
    expect(await json(control)).toEqual({
      error: { message: '[brave-search] Query contains invalid control characters (reset after 30s)' },
    });
  });
});

describe('POST /v1/web/fetch', () => {
  it('returns the page with the contract shape', async () => {
    const body = await json(
      await post('/v1/web/fetch', { model: 'jina-reader', url: 'https://example.com/docs' }),
    );
    expect(body).toMatchObject({
      provider: 'jina-reader',
      url: 'https://example.com/docs',
      title: 'Page /docs',
      metadata: { author: null, published_at: null },
      usage: { fetch_cost_usd: 0 },
    });
    expect(body.content.format).toBe('markdown');
    expect(body.content.text.startsWith('# Page /docs')).toBe(true);
    expect(body.content.length).toBe(body.content.text.length);
  });

  it('serves long and untitled pages, html and truncation', async () => {
    const long = await json(
      await post('/v1/web/fetch', { model: 'firecrawl', url: 'https://example.com/long' }),
    );
    expect(long.content.length).toBeGreaterThan(55_000);
    expect(long.content.text).toContain('Line 00001: ');
    expect(long.content.text).toContain('Line 01000: ');
    const huge = await json(
      await post('/v1/web/fetch', { model: 'firecrawl', url: 'https://example.com/huge' }),
    );
    expect(huge.content.length).toBeGreaterThan(200_000);
    expect(huge.content.text).toContain('Line 04000: ');
    const untitled = await json(
      await post('/v1/web/fetch', { model: 'exa', url: 'https://example.com/untitled' }),
    );
    expect(untitled.title).toBeNull();
    const html = await json(
      await post('/v1/web/fetch', { model: 'tavily', url: 'https://a.test/x', format: 'html' }),
    );
    expect(html.content.text.startsWith('<html><body>')).toBe(true);
    const cut = await json(
      await post('/v1/web/fetch', {
        model: 'fetch-combo',
        url: 'https://example.com/long',
        max_characters: 100,
      }),
    );
    expect(cut.content).toMatchObject({ length: 100 });
    expect(long.content.text.startsWith(cut.content.text)).toBe(true);
  });

  it('refuses suffixed ids, bad schemes and private addresses', async () => {
    const cases: [unknown, string][] = [
      [{ model: 'jina-reader/fetch', url: 'https://example.com' }, 'Unknown provider: jina-reader/fetch'],
      [{ model: 'jina-reader' }, 'Missing required field: url'],
      [
        { model: 'jina-reader', url: 'ftp://example.com/x' },
        'Unsupported URL scheme: ftp: (only http and https)',
      ],
    ];
    for (const [body, message] of cases) {
      const response = await post('/v1/web/fetch', body);
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toBe(message);
    }
    for (const url of [
      'http://localhost/a',
      'http://127.0.0.1:8080/',
      'http://10.1.2.3/',
      'http://[::1]/',
      'http://169.254.169.254/',
    ]) {
      const response = await post('/v1/web/fetch', { model: 'jina-reader', url });
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toBe('Blocked URL: internal host');
    }
  });
});

describe('video jobs', () => {
  it('submits, rotates connection ids, and runs the poll lifecycle to a downloadable file', async () => {
    const submit = await post(
      '/v1/videos/generations',
      { prompt: 'a cat', duration: 6, aspect_ratio: '16:9', resolution: '720p' },
      { 'idempotency-key': 'key-1' },
    );
    expect(submit.status).toBe(200);
    const { request_id: id } = await json(submit);
    const connectionId = submit.headers.get('x-9router-connection-id') ?? '';
    expect(['1', '2', '3']).toContain(connectionId);
    expect(service.videoJobs.get(id)).toMatchObject({ connectionId, idempotencyKey: 'key-1', polls: 0 });
    const second = await post('/v1/videos/generations', { prompt: 'a dog' });
    expect(second.headers.get('x-9router-connection-id')).not.toBe(connectionId);

    const wrongAccount = await get(`/v1/videos/${id}`, {
      'x-connection-id': connectionId === '1' ? '2' : '1',
    });
    expect(wrongAccount.status).toBe(404);
    expect((await json(wrongAccount)).error).toEqual({
      message: `[xai] {"code":"not_found","error":"No video request with id ${id}"}`,
      type: 'invalid_request_error',
      code: 'model_not_found',
    });
    expect((await get(`/v1/videos/${id}`)).status).toBe(404);

    const pollOwner: (string | null)[] = [];
    const poll = () =>
      get(`/v1/videos/${id}`, { 'x-connection-id': connectionId }).then((response) => {
        pollOwner.push(response.headers.get('x-9router-connection-id'));
        return json(response);
      });
    const running = await poll();
    expect(running).toEqual({ status: 'pending', progress: 49 });
    const done = await poll();
    expect(done).toEqual({
      status: 'done',
      video: { url: `${service.url}/files/video/${id}.mp4`, duration: 6, respect_moderation: true },
      model: 'grok-imagine-video',
    });
    expect(pollOwner).toEqual([connectionId, connectionId]);
    const file = await fetch(done.video.url);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await file.arrayBuffer());
    // A real clip by default (the demo and the views play it).
    expect(bytes.equals(CLIP)).toBe(true);
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(service.counters['videos.generations']).toBe(2);
    expect(service.counters['videos.poll']).toBe(4);
  });

  it('varies running status words, and ends failed, expired or cancelled as configured', async () => {
    const own = await startReferenceService();
    try {
      const submit = async () => {
        const response = await post('/v1/videos/generations', { prompt: 'p' }, {}, own);
        const headers = { 'x-connection-id': response.headers.get('x-9router-connection-id') ?? '' };
        const { request_id: id } = await json(response);
        return () => get(`/v1/videos/${id}`, headers, own).then(json);
      };
      own.setVideoTiming({ pollsUntilDone: 4 });
      const slow = await submit();
      const statuses = [(await slow()).status, (await slow()).status, (await slow()).status];
      expect(statuses).toEqual(['pending', 'processing', 'in_progress']);
      own.setVideoTiming({ pollsUntilDone: 1, failWith: { code: 'moderation', message: 'refused' } });
      expect(await (await submit())()).toEqual({
        status: 'failed',
        error: { code: 'moderation', message: 'refused' },
      });
      own.setVideoTiming({ failWith: undefined, status: 'expired' });
      expect(await (await submit())()).toEqual({ status: 'expired' });
      own.setVideoTiming({ status: 'cancelled' });
      expect(await (await submit())()).toEqual({ status: 'cancelled' });
      expect((await slow()).status).toBe('done');
      own.setVideoTiming({ status: undefined, pollsUntilDone: 0, videoBytes: 1234 });
      const done = await (await submit())();
      expect(done.video.url).toMatch(/\/files\/video\/vid_\w+\.mp4\?bytes=1234$/);
      expect((await (await fetch(done.video.url)).arrayBuffer()).byteLength).toBe(1234);
    } finally {
      await own.close();
    }
  });

  it('validates submits: prompt, combos, enums, and edit/extension video URLs', async () => {
    const cases: [string, unknown, string][] = [
      ['generations', {}, 'prompt is required'],
      [
        'generations',
        { prompt: 'p', model: 'video-combo' },
        'Combos are not supported for video generation: video-combo',
      ],
      ['generations', { prompt: 'p', aspect_ratio: '21:9' }, 'Invalid aspect_ratio: 21:9'],
      ['generations', { prompt: 'p', resolution: '4k' }, 'Invalid resolution: 4k'],
      ['edits', { prompt: 'p' }, 'video.url is required'],
      [
        'extensions',
        { prompt: 'p', video: { url: 'vid_123' } },
        'video.url must be an http(s) URL, got: vid_123',
      ],
    ];
    for (const [kind, body, message] of cases) {
      const response = await post(`/v1/videos/${kind}`, body);
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toBe(message);
    }
    const edit = await post('/v1/videos/edits', { prompt: 'p', video: { url: 'https://cdn.test/v.mp4' } });
    expect(edit.status).toBe(200);
    expect(
      await post('/v1/videos/extensions', { prompt: 'p', video: { url: 'https://cdn.test/v.mp4' } }),
    ).toHaveProperty('status', 200);
  });

  it('can omit progress, hop through a redirect to another origin, and counts abandoned polls', async () => {
    const own = await startReferenceService();
    const cdn = await startReferenceService();
    try {
      own.setVideoTiming({
        pollsUntilDone: 2,
        reportProgress: false,
        redirectVideoTo: cdn.url,
        videoBytes: 10,
      });
      const submit = await post('/v1/videos/generations', { prompt: 'p' }, {}, own);
      const { request_id: id } = await json(submit);
      const headers = { 'x-connection-id': submit.headers.get('x-9router-connection-id') ?? '' };
      expect(await json(await get(`/v1/videos/${id}`, headers, own))).toEqual({ status: 'pending' });
      const done = await json(await get(`/v1/videos/${id}`, headers, own));
      const hop = await fetch(done.video.url, { redirect: 'manual' });
      expect(hop.status).toBe(302);
      expect(hop.headers.get('location')).toBe(`${cdn.url}/files/video/${id}.mp4?bytes=10`);
      expect((await (await fetch(done.video.url)).arrayBuffer()).byteLength).toBe(10);
      expect([own.counters['files.redirect'], cdn.counters['files.video']]).toEqual([2, 1]);

      own.inject('videos.poll', { hang: true });
      const controller = new AbortController();
      const hanging = fetch(`${own.url}/v1/videos/${id}`, {
        headers: { ...authHeaders(own), ...headers },
        signal: controller.signal,
      });
      hanging.catch(() => undefined);
      for (let i = 0; i < 200 && own.counters['videos.poll'] < 3; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(own.abandoned['videos.poll']).toBe(0);
      controller.abort();
      for (let i = 0; i < 200 && own.abandoned['videos.poll'] < 1; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(own.abandoned['videos.poll']).toBe(1);
    } finally {
      await own.close();
      await cdn.close();
    }
  });

  it('streams video files of any requested size', async () => {
    const size = 3 * 1024 * 1024 + 17;
    const response = await fetch(`${service.url}/files/video/abc.mp4?bytes=${size}`);
    expect(response.headers.get('content-length')).toBe(String(size));
    expect(Buffer.from(await response.arrayBuffer()).equals(videoFileBytes(size))).toBe(true);
  });
});

describe('audio', () => {
  it('speaks mp3 bytes, other formats where the provider honours them, and base64 json', async () => {
    const mp3 = await post('/v1/audio/speech', { model: 'openai/tts-1/alloy', input: 'Hello' });
    expect(mp3.headers.get('content-type')).toBe('audio/mp3');
    const bytes = Buffer.from(await mp3.arrayBuffer());
    expect(bytes.length).toBe(1000 + 200 * 5);
    expect(bytes.subarray(0, 3).toString('latin1')).toBe('ID3');
    // openai ignores the format asked for.
    const notWav = await post('/v1/audio/speech?response_format=wav', {
      model: 'openai/tts-1/nova',
      input: 'Hi',
    });
    expect(notWav.headers.get('content-type')).toBe('audio/mp3');
    const wav = await post('/v1/audio/speech?response_format=wav', {
      model: 'selfhosted-tts/kokoro',
      input: 'Hi',
    });
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(
      Buffer.from(await wav.arrayBuffer())
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('RIFF');
    const asJson = await json(
      await post('/v1/audio/speech?response_format=json', { model: 'openai/tts-1/nova', input: 'Hello' }),
    );
    expect(asJson.format).toBe('mp3');
    expect(Buffer.from(asJson.audio, 'base64').equals(synthesizeAudio('Hello', 'mp3'))).toBe(true);
  });

  it('reads ids as 9router does: refuses non-speech providers (400), fails upstream what OpenAI would (502)', async () => {
    const provider = await post('/v1/audio/speech', { model: 'groq/whisper-large-v3', input: 'x' });
    expect(provider.status).toBe(400);
    expect((await json(provider)).error.message).toBe("Provider 'groq' does not support TTS via this route.");
    for (const [model, message] of [
      ['openai/gpt-4o/alloy', '[openai/gpt-4o/alloy] gpt-4o does not support audio (reset after 30s)'],
      // Two parts: a voice on the default model, so "tts-1" is a voice OpenAI does not have.
      ['openai/tts-1', "[openai/tts-1] Invalid value for 'voice': 'tts-1'. (reset after 30s)"],
      ['openai/tts-1/verse', "[openai/tts-1/verse] Invalid value for 'voice': 'verse'. (reset after 30s)"],
    ]) {
      const failed = await post('/v1/audio/speech', { model, input: 'x' });
      expect(failed.status, model).toBe(502);
      expect(failed.headers.get('retry-after'), model).toBe('30');
      expect(await json(failed)).toEqual({ error: { message } });
    }
    for (const model of [
      'openai/alloy',
      'openai/gpt-4o-mini-tts/verse',
      'openai/tts-1-hd/onyx',
      'selfhosted-tts/kokoro/bf_emma',
    ]) {
      expect((await post('/v1/audio/speech', { model, input: 'x' })).status, model).toBe(200);
    }
  });

  it('lists voices for some providers only, as 9router', async () => {
    const edge = await json(await get('/v1/audio/voices?provider=edge-tts'));
    expect(edge.voices[0]).toMatchObject({ id: 'en-US-AriaNeural', lang: 'en-US' });
    const openai = await get('/v1/audio/voices?provider=openai');
    expect(openai.status).toBe(400);
    expect((await json(openai)).error.message).toMatch(/^provider must be one of: elevenlabs, deepgram/);
  });

  it('transcribes multipart uploads in every response format', async () => {
    const file = { name: 'clip.mp3', bytes: new Uint8Array(2000).fill(7) };
    const base = { model: 'groq/whisper-large-v3', language: 'en', prompt: 'names' };
    const expected = 'Transcript of clip.mp3 (2000 bytes), language en, prompt names';
    expect(await json(await transcribe(transcriptionForm(base, file)))).toEqual({ text: expected });
    const text = await transcribe(transcriptionForm({ ...base, response_format: 'text' }, file));
    expect(await text.text()).toBe(expected);
    const verbose = await json(
      await transcribe(transcriptionForm({ ...base, response_format: 'verbose_json' }, file)),
    );
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'en', text: expected });
    expect(verbose.segments[0]).toMatchObject({ id: 0, start: 0, text: expected });
    const srt = await (await transcribe(transcriptionForm({ ...base, response_format: 'srt' }, file))).text();
    expect(srt).toBe(`1\n00:00:00,000 --> 00:00:01,000\n${expected}\n`);
    const vtt = await transcribe(transcriptionForm({ ...base, response_format: 'vtt' }, file));
    expect(vtt.headers.get('content-type')).toContain('text/vtt');
    expect(await vtt.text()).toBe(`WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n${expected}\n`);
    const recorded = lastRecordedBody<{ fields: Record<string, string>; file: unknown }>();
    expect(recorded.fields.model).toBe('groq/whisper-large-v3');
    expect(recorded.file).toEqual({
      name: 'clip.mp3',
      type: 'audio/mpeg',
      size: 2000,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
    });
  });

  it('makes long transcripts for big files and refuses bad transcription requests', async () => {
    const big = { name: 'long.wav', bytes: new Uint8Array(400_000) };
    const long = await json(await transcribe(transcriptionForm({ model: 'openai/whisper-1' }, big)));
    expect(long.text.length).toBeGreaterThan(15_000);
    expect(long.text.length).toBeLessThanOrEqual(20_000);
    const asJson = await post('/v1/audio/transcriptions', { model: 'groq/whisper-large-v3' });
    expect((await json(asJson)).error.message).toBe('Invalid multipart form data');
    const small = { name: 'a.mp3', bytes: new Uint8Array(10) };
    const cases: [FormData, number, string][] = [
      [transcriptionForm({ model: 'groq/whisper-large-v3' }), 400, 'file is required'],
      [transcriptionForm({}, small), 400, 'model is required'],
      [
        transcriptionForm({ model: 'elevenlabs/scribe' }, small),
        400,
        "Provider 'elevenlabs' does not support STT",
      ],
      [
        transcriptionForm({ model: 'openai/gpt-4o' }, small),
        502,
        '[openai] upstream error: model does not support transcription',
      ],
    ];
    for (const [form, status, message] of cases) {
      const response = await transcribe(form);
      expect(response.status).toBe(status);
      expect((await json(response)).error.message).toBe(message);
    }
  });

  it('streams a large upload through the parser chunk by chunk', async () => {
    const boundary = 'streaming-boundary-42';
    const chunk = Buffer.alloc(64 * 1024, 0x5a);
    const chunks = 128;
    const hash = createHash('sha256');
    for (let index = 0; index < chunks; index += 1) hash.update(chunk);
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ngroq/whisper-large-v3\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${service.url}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { ...authHeaders(), 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(head);
      let sent = 0;
      const pump = () => {
        while (sent < chunks) {
          sent += 1;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    expect(status).toBe(200);
    expect(lastRecordedBody<{ file: unknown }>().file).toEqual({
      name: 'big.mp3',
      type: 'audio/mpeg',
      size: chunk.length * chunks,
      sha256: hash.digest('hex'),
    });
  });
});

interface SseEvent {
  event: string | undefined;
  data: string;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines.find((line) => line.startsWith('data: '))?.slice(6) ?? '';
      return { event, data };
    });
}

describe('POST /v1/responses', () => {
  const model = 'openai/gpt-4o-mini';
  const node = 'fakeresp/echo';
  const eventTypes = (events: SseEvent[]) => [...new Set(events.map((event) => event.event ?? event.data))];

  it("streams a chat provider in 9router's translated events: text in deltas, a bare completion, no [DONE]", async () => {
    const response = await post('/v1/responses', { model, input: 'hello there friend', stream: true });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await response.text());
    expect(eventTypes(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = events.filter((event) => event.event === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((event) => JSON.parse(event.data).delta).join('')).toBe('Echo: hello there friend');
    const completed = JSON.parse(events.at(-1)?.data ?? '{}');
    expect(completed.response).toEqual({
      id: expect.stringMatching(/^resp_/),
      object: 'response',
      created_at: expect.any(Number),
      status: 'completed',
      background: false,
      error: null,
    });
    expect(completed.sequence_number).toBe(events.length);
  });

  it("passes a Responses API provider's stream through, with output, usage and [DONE]", async () => {
    const events = parseSse(
      await (await post('/v1/responses', { model: node, input: 'hello there friend', stream: true })).text(),
    );
    expect(eventTypes(events)).toEqual([
      'response.created',
      'response.output_text.delta',
      'response.output_text.done',
      'response.completed',
      '[DONE]',
    ]);
    const completed = JSON.parse(events.find((event) => event.event === 'response.completed')?.data ?? '{}');
    expect(completed.response.output[0].content[0].text).toBe('Echo: hello there friend');
    expect(completed.response.usage).toEqual({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
  });

  it('answers stream false with one JSON object (padded usage), except for openai', async () => {
    const ask = (target: string) =>
      post('/v1/responses', {
        model: target,
        instructions: 'be brief',
        input: [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: [{ type: 'input_text', text: 'second question is longer' }] },
        ],
        max_output_tokens: 5,
        stream: false,
      });
    for (const target of ['fakechat/echo', node]) {
      const body = await json(await ask(target));
      expect(body).toMatchObject({ object: 'response', status: 'completed' });
      expect(body.id).toMatch(/^resp_/);
      expect(body.output[0]).toMatchObject({ type: 'message', role: 'assistant' });
      expect(body.output[0].content[0]).toMatchObject({
        type: 'output_text',
        text: '[be brief] Echo: second question',
      });
      expect(body.usage).toEqual({ input_tokens: 2006, output_tokens: 5 });
    }
    const openai = await ask(model);
    expect(openai.headers.get('content-type')).toContain('text/event-stream');
    expect(eventTypes(parseSse(await openai.text()))).toEqual(['response.completed']);
  });

  it('reproduces the quirks: empty completed without stream, empty non-stream, stray [DONE], mid-stream error', async () => {
    const implicit = parseSse(await (await post('/v1/responses', { model, input: 'hi' })).text());
    expect(eventTypes(implicit)).toEqual(['response.completed']);
    const raw = await (await post('/v1/responses', { model: node, input: 'hi' })).text();
    expect(raw).toMatch(/^\{"id":"resp_.*\}data: \[DONE\]\n\n$/s);
    const chat = 'fakechat/echo';
    const empty = await json(
      await post('/v1/responses', { model: chat, input: 'EMPTY_NONSTREAM', stream: false }),
    );
    expect(empty.output).toEqual([]);
    const stray = await (
      await post('/v1/responses', { model: chat, input: 'STRAY_DONE', stream: false })
    ).text();
    expect(stray.trimEnd().endsWith('data: [DONE]')).toBe(true);
    for (const target of [model, node]) {
      const failing = parseSse(
        await (
          await post('/v1/responses', { model: target, input: 'MIDSTREAM_ERROR now', stream: true })
        ).text(),
      );
      expect(failing.filter((event) => event.event === 'response.output_text.delta')).toHaveLength(2);
      expect(failing.at(-1)?.event).toBe('error');
      expect(JSON.parse(failing.at(-1)?.data ?? '{}')).toEqual({
        type: 'error',
        error: { message: 'upstream stream failed' },
      });
    }
  });

  it('streams empty with EMPTY_STREAM, answers JSON with JSON_ONLY, and counts streams completed or cut', async () => {
    const empty = parseSse(
      await (await post('/v1/responses', { model, input: 'EMPTY_STREAM', stream: true })).text(),
    );
    expect(eventTypes(empty)).toEqual(['response.completed']);
    const jsonOnly = await post('/v1/responses', { model, input: 'JSON_ONLY', stream: true });
    expect(jsonOnly.headers.get('content-type')).toContain('application/json');
    expect((await json(jsonOnly)).output[0].content[0].text).toBe('Echo: JSON_ONLY');
    expect(service.responseStreams).toMatchObject({ open: 0, completed: 1, cut: 0 });

    const controller = new AbortController();
    const slow = await fetch(`${service.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeaders() },
      body: JSON.stringify({ model, input: 'SLOW_STREAM '.repeat(10), stream: true }),
      signal: controller.signal,
    });
    const reader = slow.body?.getReader();
    await reader?.read();
    expect(service.responseStreams.open).toBe(1);
    controller.abort();
    const deadline = Date.now() + 5_000;
    while (service.responseStreams.cut === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(service.responseStreams).toMatchObject({ open: 0, completed: 1, cut: 1 });
  });

  it('refuses a missing model (400) and a provider it does not have (404); any model of a known one goes', async () => {
    expect((await post('/v1/responses', { input: 'x', stream: false })).status).toBe(400);
    const unknown = await post('/v1/responses', { model: 'nobody/nothing', input: 'x', stream: false });
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toEqual({
      error: {
        message: 'No active credentials for provider: nobody',
        type: 'invalid_request_error',
        code: 'model_not_found',
      },
    });
    const unlisted = await post('/v1/responses', {
      model: 'anthropic/claude-opus-9',
      input: 'x',
      stream: false,
    });
    expect(unlisted.status).toBe(200);
  });
});

describe('model discovery', () => {
  it('lists chat models combos first, the other kinds, and web models with suffixed ids', async () => {
    const chat = await json(await get('/v1/models'));
    expect(chat.object).toBe('list');
    expect(chat.data[0]).toEqual({ id: 'combo-fast', object: 'model', owned_by: 'combo' });
    const tts = await json(await get('/v1/models/tts'));
    expect(tts.data.map((entry: { id: string }) => entry.id)).toEqual([
      'openai/tts-1',
      'openai/tts-1-hd',
      'openai/gpt-4o-mini-tts',
      'selfhosted-tts/kokoro',
    ]);
    for (const kind of ['stt', 'image', 'embedding', 'image-to-text'])
      expect((await get(`/v1/models/${kind}`)).status).toBe(200);
    const web = await json(await get('/v1/models/web'));
    expect(web.data).toEqual([
      { id: 'tavily/search', object: 'model', kind: 'webSearch', owned_by: 'tavily' },
      { id: 'jina-reader/fetch', object: 'model', kind: 'webFetch', owned_by: 'jina-reader' },
    ]);
    expect((await get('/v1/models/video')).status).toBe(404);
  });

  it('describes a model by id and 404s unknown ones', async () => {
    const info = await json(await get('/v1/models/info?id=openai/whisper-1'));
    expect(info).toMatchObject({
      id: 'openai/whisper-1',
      kind: 'stt',
      owned_by: 'openai',
      endpoint: '/v1/audio/transcriptions',
    });
    expect(info.params).toContain('language');
    // As in 9router's catalogue: chat models name no params, video has no single endpoint.
    expect(await json(await get('/v1/models/info?id=openai/gpt-4o-mini'))).toEqual({
      id: 'openai/gpt-4o-mini',
      name: 'gpt-4o-mini',
      kind: 'llm',
      owned_by: 'openai',
      endpoint: '/v1/chat/completions',
    });
    expect(await json(await get('/v1/models/info?id=xai/grok-imagine-video'))).toMatchObject({
      kind: 'video',
      endpoint: null,
    });
    const unknown = await get('/v1/models/info?id=nope/nothing');
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toEqual({
      error: { message: 'Model not found: nope/nothing', type: 'not_found' },
    });
    expect((await get('/v1/models/info?id=combo-fast')).status).toBe(404);
    // Speech models are listed without a voice; an id with one is unknown, as in 9router.
    expect(await json(await get('/v1/models/info?id=openai/tts-1'))).toMatchObject({
      id: 'openai/tts-1',
      kind: 'tts',
      endpoint: '/v1/audio/speech',
    });
    expect((await get('/v1/models/info?id=openai/tts-1/alloy')).status).toBe(404);
  });

  it('lets tests replace or remove lists', async () => {
    const own = await startReferenceService({ webModels: false });
    try {
      expect((await json(await get('/v1/models/web', {}, own))).data).toEqual([]);
      own.setWebModels([{ id: 'brave/search', kind: 'webSearch' }]);
      expect((await json(await get('/v1/models/web', {}, own))).data[0].id).toBe('brave/search');
      own.setWebModels(null);
      expect((await get('/v1/models/web', {}, own)).status).toBe(404);
      own.setModelList('chat', [{ id: 'x/model' }, { id: 'my-combo', owned_by: 'combo' }]);
      const chat = await json(await get('/v1/models', {}, own));
      expect(chat.data.map((entry: { id: string }) => entry.id)).toEqual(['my-combo', 'x/model']);
      own.setModelList('tts', null);
      expect((await get('/v1/models/tts', {}, own)).status).toBe(404);
      own.setModelList('tts', [{ id: 'openai/tts-1/alloy' }]);
      expect((await json(await get('/v1/models/tts', {}, own))).data[0].id).toBe('openai/tts-1/alloy');
      // The speech route checks no list: an unlisted id on a speech provider still speaks.
      const unlisted = await post('/v1/audio/speech', { model: 'openai/tts-1-hd/nova', input: 'x' }, {}, own);
      expect(unlisted.status).toBe(200);
    } finally {
      await own.close();
    }
  });
});

/** One well-formed request per route, so each fault kind can be proven on every route. */
const ROUTE_REQUESTS: Record<
  RouteName,
  (init?: { signal?: AbortSignal; auth?: boolean }) => Promise<Response>
> = {
  search: (init) => send('/v1/search', init, { model: 'tavily', query: 'q' }),
  fetch: (init) => send('/v1/web/fetch', init, { model: 'jina-reader', url: 'https://example.com/' }),
  'videos.generations': (init) => send('/v1/videos/generations', init, { prompt: 'p' }),
  'videos.edits': (init) =>
    send('/v1/videos/edits', init, { prompt: 'p', video: { url: 'https://cdn.test/v.mp4' } }),
  'videos.extensions': (init) =>
    send('/v1/videos/extensions', init, { prompt: 'p', video: { url: 'https://cdn.test/v.mp4' } }),
  'videos.poll': (init) => send('/v1/videos/vid_unknown', init),
  speech: (init) => send('/v1/audio/speech', init, { model: 'openai/tts-1/alloy', input: 'hi' }),
  transcriptions: (init) =>
    send(
      '/v1/audio/transcriptions',
      init,
      transcriptionForm({ model: 'openai/whisper-1' }, { name: 'a.mp3', bytes: new Uint8Array(64) }),
    ),
  voices: (init) => send('/v1/audio/voices?provider=edge-tts', init),
  responses: (init) =>
    send('/v1/responses', init, { model: 'openai/gpt-4o-mini', input: 'hi', stream: false }),
  models: (init) => send('/v1/models', init),
  'models.kind': (init) => send('/v1/models/tts', init),
  'models.info': (init) => send('/v1/models/info?id=openai/gpt-4o-mini', init),
  health: (init) => send('/api/health', init),
  'files.video': (init) => send('/files/video/abc.mp4?bytes=100', init),
  'files.redirect': (init) =>
    send(
      `/files/redirect/abc.mp4?to=${encodeURIComponent('https://cdn.test/abc.mp4')}`,
      init,
      undefined,
      'manual',
    ),
};

function send(
  path: string,
  init: { signal?: AbortSignal; auth?: boolean } = {},
  body?: unknown,
  redirect: 'follow' | 'manual' = 'follow',
): Promise<Response> {
  const headers: Record<string, string> = init.auth === false ? {} : authHeaders();
  if (body !== undefined && !(body instanceof FormData)) headers['content-type'] = 'application/json';
  return fetch(`${service.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    ...(body === undefined ? {} : { body: body instanceof FormData ? body : JSON.stringify(body) }),
    ...(init.signal ? { signal: init.signal } : {}),
    redirect,
  });
}

const ROUTES = Object.keys(ROUTE_REQUESTS) as RouteName[];

function onEveryRoute<T>(check: (route: RouteName) => Promise<T>): Promise<T[]> {
  return Promise.all(ROUTES.map(check));
}

describe('fault injection on every route', () => {
  it('answers normally without faults', async () => {
    await onEveryRoute(async (route) => {
      const response = await ROUTE_REQUESTS[route]();
      await response.arrayBuffer();
      const expected = route === 'videos.poll' ? 404 : route === 'files.redirect' ? 302 : 200;
      expect(response.status, route).toBe(expected);
    });
  });

  it('status faults: object body by default, provider-tagged message, extra headers, then back to normal', async () => {
    for (const route of ROUTES) {
      service.inject(route, {
        status: 429,
        message: '[tavily] quota exceeded',
        headers: { 'Retry-After': '3' },
      });
    }
    await onEveryRoute(async (route) => {
      const response = await ROUTE_REQUESTS[route]();
      expect(response.status, route).toBe(429);
      expect(response.headers.get('retry-after'), route).toBe('3');
      expect((await json(response)).error).toMatchObject({
        message: '[tavily] quota exceeded',
        code: 'rate_limit_exceeded',
      });
      const next = await ROUTE_REQUESTS[route]();
      await next.arrayBuffer();
      expect(next.status, route).not.toBe(429);
      expect(service.counters[route], route).toBe(2);
    });
  });

  it('string-form errors and numeric codes', async () => {
    for (const route of ROUTES) service.inject(route, { status: 503, errorAsString: true });
    await onEveryRoute(async (route) => {
      const response = await ROUTE_REQUESTS[route]();
      expect(await json(response), route).toEqual({ error: 'Service Unavailable' });
    });
    for (const route of ROUTES) service.inject(route, { status: 502, numericCode: true });
    await onEveryRoute(async (route) => {
      expect((await json(await ROUTE_REQUESTS[route]())).error, route).toMatchObject({
        code: 502,
        message: 'Bad Gateway',
      });
    });
  });

  it('html error pages, raw bodies and truncated JSON', async () => {
    for (const route of ROUTES) service.inject(route, { html: true });
    await onEveryRoute(async (route) => {
      const response = await ROUTE_REQUESTS[route]();
      expect(response.status, route).toBe(502);
      expect(response.headers.get('content-type')).toBe('text/html');
      expect((await response.text()).split('\n')[0]).toContain('<title>502 Bad Gateway</title>');
    });
    for (const route of ROUTES) service.inject(route, { body: 'not json at all', status: 500 });
    await onEveryRoute(async (route) => {
      const response = await ROUTE_REQUESTS[route]();
      expect([response.status, await response.text()], route).toEqual([500, 'not json at all']);
    });
    for (const route of ROUTES) service.inject(route, { truncatedJson: true });
    await onEveryRoute(async (route) => {
      const response = await ROUTE_REQUESTS[route]();
      expect(response.status, route).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      const text = await response.text();
      expect(text.length, route).toBeGreaterThan(0);
      expect(() => JSON.parse(text), route).toThrow();
    });
  });

  it('resets the connection without a response', async () => {
    for (const route of ROUTES) service.inject(route, { reset: true });
    await onEveryRoute(async (route) => {
      await expect(ROUTE_REQUESTS[route](), route).rejects.toThrow();
      expect(service.counters[route], route).toBe(1);
    });
  });

  it('delays, hangs and slows the body', async () => {
    for (const route of ROUTES) service.inject(route, { delayMs: 80, status: 504 });
    await onEveryRoute(async (route) => {
      const started = Date.now();
      const response = await ROUTE_REQUESTS[route]();
      expect(response.status, route).toBe(504);
      expect(Date.now() - started, route).toBeGreaterThanOrEqual(70);
    });
    for (const route of ROUTES) service.inject(route, { hang: true });
    await onEveryRoute(async (route) => {
      // Given up only once the service has the request (and so its hang): a request given up on
      // its way would leave the hang queued for the next one.
      const before = service.counters[route];
      const controller = new AbortController();
      const pending = ROUTE_REQUESTS[route]({ signal: controller.signal });
      pending.catch(() => undefined);
      while (service.counters[route] === before) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort();
      await expect(pending, route).rejects.toThrow();
    });
    for (const route of ROUTES) service.inject(route, { slowBodyMs: 120 });
    await onEveryRoute(async (route) => {
      // Measured from the request, not from the headers: a busy client may see the headers late,
      // but no client can see the whole body before the service's pause is over.
      const started = Date.now();
      const response = await ROUTE_REQUESTS[route]();
      await response.arrayBuffer();
      expect(Date.now() - started, route).toBeGreaterThanOrEqual(115);
    });
  });
});

describe('fault queue semantics', () => {
  it('applies a fault `times` times, queues faults in order, and supports Infinity until cleared', async () => {
    service.inject('models', { status: 500, times: 2 });
    service.inject('models', { status: 503 });
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) statuses.push((await get('/v1/models')).status);
    expect(statuses).toEqual([500, 500, 503, 200]);
    service.inject('models', { status: 429, times: Number.POSITIVE_INFINITY });
    for (let index = 0; index < 3; index += 1) expect((await get('/v1/models')).status).toBe(429);
    service.clearFaults();
    expect((await get('/v1/models')).status).toBe(200);
    expect(service.counters.models).toBe(8);
    service.resetCounters();
    expect(service.counters.models).toBe(0);
    expect(service.requests).toHaveLength(0);
  });

  it('applies faults before auth and counts unauthorized requests', async () => {
    service.inject('search', { status: 503 });
    expect((await ROUTE_REQUESTS.search({ auth: false })).status).toBe(503);
    expect((await ROUTE_REQUESTS.search({ auth: false })).status).toBe(401);
    expect(service.counters.search).toBe(2);
  });

  it('close() ends hanging requests promptly', async () => {
    const own = await startReferenceService();
    own.inject('models', { hang: true });
    const pending = fetch(`${own.url}/v1/models`, { headers: authHeaders(own) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(scaled(1000));
    await expect(pending).rejects.toThrow();
  });
});
