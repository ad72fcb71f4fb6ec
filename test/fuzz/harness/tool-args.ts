import fc from 'fast-check';
import { synthesizeAudio } from '../../reference-service/index.js';
import { jobHandle } from './handles.js';
import { anyJson, extraFields, hostileNumber, hostileString, mixedString, preview } from './hostile.js';
import { pathInput } from './paths.js';
import { fetchedUrl, forwardedUrl, httpUrl } from './urls.js';
import type { World } from './world.js';

/** One fuzzed tools/call: the tool name and its (possibly absurd) arguments. */
export interface FuzzCall {
  name: string;
  arguments: unknown;
}

/** A field: what an agent plausibly sends (odd but allowed), and what a hostile one might. */
interface FieldSpec {
  plausible: fc.Arbitrary<unknown>;
  hostile: fc.Arbitrary<unknown>;
  /** Present in the baseline (mutations may still drop it). */
  required?: boolean;
  /** Always sent, and only ever replaced by `hostile`: wait_seconds, whose defaults would sleep. */
  pinned?: boolean;
}
const f = (plausible: fc.Arbitrary<unknown>, hostile: fc.Arbitrary<unknown> = hostileString): FieldSpec => ({
  plausible,
  hostile,
});
const required = (spec: FieldSpec): FieldSpec => ({ ...spec, required: true });
const choice = (...values: string[]) => f(fc.constantFrom(...values));
const number = (min: number, max: number) => f(fc.integer({ min, max }), hostileNumber);
const boolean = f(fc.boolean(), fc.constantFrom('true', 0, 1, null));
const text = f(
  fc.oneof(
    { arbitrary: fc.constantFrom('kites', 'rust async traits', 'answer me', 'objanswer', 'a'), weight: 4 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 40 }).filter((t) => t.trim() !== ''), weight: 3 },
    { arbitrary: mixedString.map((t) => `q ${t}`), weight: 3 },
  ),
);
const model = (...known: string[]) =>
  f(
    fc.oneof(
      { arbitrary: fc.constantFrom(...known), weight: 8 },
      { arbitrary: fc.constantFrom('nope/nothing', 'combo-fast', 'a:b@c+d', 'x'.repeat(200)), weight: 1 },
    ),
  );
/** Valid waits are tiny and always sent (the defaults wait 5-30 s): a fuzz run must not sleep. */
const waitSeconds: FieldSpec = {
  plausible: fc.oneof({ arbitrary: fc.constant(0), weight: 8 }, { arbitrary: fc.constant(0.01), weight: 1 }),
  hostile: fc.constantFrom(-1, 51, 1e9, -0.01, 'NaN', '5', null, Number.MAX_VALUE, [], {}),
  pinned: true,
};
const domains = f(
  fc.constantFrom(['github.com'], ['*.example.org', 'docs.rs'], ['https://x.com/path']),
  fc.array(fc.oneof(fc.constantFrom('-neg.com', 'ünï.de', 'a..b', '', '*', 'x'.repeat(254)), hostileString), {
    maxLength: 25,
  }),
);
const base64Audio = f(
  fc.oneof(
    fc.constant(synthesizeAudio('fuzz', 'mp3').toString('base64')),
    fc.constant(`data:audio/mpeg;base64,${synthesizeAudio('x', 'mp3').toString('base64')}`),
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
  ),
  fc.oneof(
    fc.constantFrom('', '====', 'data:,', 'data:audio/wav;base64,', 'not base64!', 'aGVsbG8gd29ybGQ='),
    hostileString,
  ),
);

/**
 * Arguments as a plausible baseline (optional fields present or not; of an `exclusive` group at
 * most one, now and then all) with up to three fields replaced by hostile values or wrong types,
 * or dropped, plus undeclared extras. Few mutations per call keep most calls past the schema,
 * into the code behind it, and make a shrunk counterexample point at one field.
 */
function args(
  shape: Record<string, FieldSpec>,
  exclusive: string[] = [],
): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(shape);
  const spec = (k: string) => shape[k] as FieldSpec;
  const plausible = Object.fromEntries(names.map((k) => [k, spec(k).plausible]));
  const present = names.filter((k) => spec(k).required || spec(k).pinned || exclusive.includes(k));
  const mutation = fc.oneof(
    ...names.map((k) =>
      fc.tuple(fc.constant(k), spec(k).pinned ? spec(k).hostile : fc.oneof(spec(k).hostile, anyJson)),
    ),
    ...names.filter((k) => !spec(k).pinned).map((k) => fc.constant<[string, unknown]>([k, undefined])),
  );
  return fc
    .tuple(
      fc.record(plausible, { requiredKeys: present }),
      fc.integer({ min: -1, max: exclusive.length }),
      fc.oneof(
        { withCrossShrink: true },
        { arbitrary: fc.constant([]), weight: 3 },
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
      ),
      extraFields,
    )
    .map(([base, keep, mutations, extra]) => {
      const out: Record<string, unknown> = { ...extra, ...base };
      if (keep >= 0) for (const k of exclusive) if (k !== exclusive[keep]) delete out[k];
      for (const [key, value] of mutations) {
        if (value === undefined) delete out[key];
        else out[key] = value;
      }
      return out;
    });
}

export function toolCalls(w: World): fc.Arbitrary<FuzzCall> {
  const path = f(pathInput(w));
  const handle = jobHandle(w);
  const url = f(httpUrl, forwardedUrl);
  const video = {
    prompt: required(text),
    model: model('xai/grok-imagine-video'),
    resolution: choice('480p', '720p', '1080p'),
    wait_seconds: waitSeconds,
    idempotency_key: choice('key-1', 'fuzz-key', 'k'.repeat(200)),
  };
  const byTool: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
    web_search: args({
      query: required(text),
      max_results: number(1, 20),
      search_type: choice('web', 'news'),
      time_range: choice('day', 'week', 'month', 'year', 'any'),
      include_domains: domains,
      exclude_domains: domains,
      country: choice('us', 'de'),
      language: choice('en', 'de'),
      provider: choice('tavily', 'tavily', 'nope'),
    }),
    web_fetch: args({
      url: required(url),
      format: choice('markdown', 'text', 'html'),
      max_length: number(100, 100_000),
      start_index: number(0, 250_000),
      provider: choice('jina-reader', 'jina-reader', 'nope'),
      // Prompt mode streams an answer from the reference model for ~300 ms: kept rare.
      prompt: f(
        fc.oneof({ arbitrary: fc.constant(undefined), weight: 40 }, { arbitrary: text.plausible, weight: 1 }),
        fc.constantFrom('', '   ', 'x'.repeat(2001)),
      ),
    }),
    video_generate: args(
      {
        ...video,
        duration: number(1, 60),
        aspect_ratio: choice('16:9', '9:16', '1:1'),
        image_url: url,
        image_path: path,
      },
      ['image_url', 'image_path'],
    ),
    video_edit: args({
      ...video,
      video: required(f(fc.oneof(handle, httpUrl, path.plausible), forwardedUrl)),
    }),
    video_extend: args({
      ...video,
      video: required(f(fc.oneof(handle, httpUrl), forwardedUrl)),
      duration: number(1, 60),
    }),
    video_status: args({ job_id: required(f(handle)), wait_seconds: waitSeconds, download: boolean }),
    audio_speech: args({
      text: required(text),
      model: model('openai/tts-1/alloy', 'openai/tts-1', 'edge-tts/en-US-AriaNeural', 'openai/gpt-4o-mini'),
      voice: choice('alloy', 'nova', 'shimmer'),
      format: choice('mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'),
      return_audio: boolean,
    }),
    audio_transcribe: args(
      {
        file_path: path,
        url: f(fetchedUrl(w)),
        data_base64: base64Audio,
        model: model('groq/whisper-large-v3', 'deepgram/nova-3', 'openai/tts-1/alloy'),
        language: choice('en', 'de-DE'),
        prompt: text,
        response_format: choice('json', 'text', 'verbose_json', 'srt', 'vtt'),
        max_length: number(100, 100_000),
        start_index: number(0, 5_000),
      },
      ['file_path', 'url', 'data_base64'],
    ),
    list_models: args({ capability: choice('chat', 'search', 'fetch', 'speech', 'transcription', 'video') }),
    ask_model: args({
      prompt: required(
        f(fc.oneof(text.plausible, fc.constantFrom('MIDSTREAM_ERROR', 'EMPTY_STREAM', 'JSON_ONLY'))),
      ),
      model: model('openai/gpt-4o-mini', 'combo-fast', 'anthropic/claude-sonnet-4'),
      instructions: text,
      max_output_tokens: number(16, 100_000),
      reasoning_effort: choice('minimal', 'low', 'medium', 'high'),
    }),
  };
  const known = Object.entries(byTool).map(([name, arbitrary]) => ({
    arbitrary: arbitrary.map((a): FuzzCall => ({ name, arguments: a })),
    // The reference model streams its answers with pauses: ask_model is the slowest call.
    weight: name === 'ask_model' ? 1 : name === 'audio_speech' ? 2 : 3,
  }));
  const oddCalls = fc.oneof(
    // Arguments that are not an object at all, for any tool (objects are the cases above).
    fc.record({
      name: fc.constantFrom(...Object.keys(byTool)),
      arguments: anyJson.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
    }),
    // Tools that do not exist, including near-misses and prefixed names.
    fc.record({
      name: fc.oneof(
        fc.constantFrom('web-search', 'WEB_SEARCH', 'gw_web_fetch', 'web_search ', ''),
        mixedString,
      ),
      arguments: fc.constant({}),
    }),
  );
  return fc.oneof(...known, { arbitrary: oddCalls, weight: 1 }).map(withReadableDisplay);
}

/** fast-check prints counterexamples with this: megabyte strings shortened to a readable preview. */
function withReadableDisplay(call: FuzzCall): FuzzCall {
  return Object.defineProperty(call, fc.toStringMethod, {
    value: () => `${call.name}(${preview(call.arguments)})`,
    enumerable: false,
  });
}
