// The requests the contract suite sends to both gateways, each with a name the divergence list
// refers to. Queries carry a marker unique to the run: the real gateway caches search answers.
import { randomUUID } from 'node:crypto';
import { type RawRequest, type Side, send } from './exchange.js';

export interface ContractCase {
  name: string;
  /** The request to compare; it may send others first (a poll needs a submitted job). */
  request(side: Side): RawRequest | Promise<RawRequest>;
}

const RUN = randomUUID().slice(0, 8);

/** A query, prompt or page no earlier run has used. */
function fresh(label: string): string {
  return `contract-${RUN}-${label}`;
}

const get = (path: string, extra: Partial<RawRequest> = {}): RawRequest => ({
  method: 'GET',
  path,
  ...extra,
});
const post = (path: string, json: unknown, extra: Partial<RawRequest> = {}): RawRequest => ({
  method: 'POST',
  path,
  json,
  ...extra,
});

function constant(name: string, request: RawRequest): ContractCase {
  return { name, request: () => request };
}

const modelLists: ContractCase[] = [
  constant('models: chat list', get('/v1/models')),
  ...['tts', 'stt', 'web', 'image', 'embedding'].map((kind) =>
    constant(`models: ${kind} list`, get(`/v1/models/${kind}`)),
  ),
  constant('models: unknown kind', get('/v1/models/no-such-kind')),
  constant('models: chat list without a key', get('/v1/models', { auth: 'none' })),
  constant('models: tts list with a wrong key', get('/v1/models/tts', { auth: 'wrong' })),
  ...[
    ['chat model', 'openai/gpt-4o-mini'],
    ['tts model', 'openai/tts-1'],
    ['stt model', 'openai/whisper-1'],
    ['search provider', 'tavily/search'],
    ['fetch provider', 'jina-reader/fetch'],
    ['video model', 'xai/grok-imagine-video'],
  ].map(([label, id]) => constant(`models: info of a ${label}`, get(`/v1/models/info?id=${id}`))),
  constant('models: info of an unknown id', get('/v1/models/info?id=nobody/nothing')),
  constant('models: info without an id', get('/v1/models/info')),
];

const auth: ContractCase[] = [
  constant(
    'auth: search without a key',
    post('/v1/search', { model: 'tavily', query: fresh('nokey') }, { auth: 'none' }),
  ),
  constant(
    'auth: search with a wrong key',
    post('/v1/search', { model: 'tavily', query: fresh('wrongkey') }, { auth: 'wrong' }),
  ),
];

/** Providers both gateways serve; the real gateway has no searxng, the reference no combo of its own. */
const SEARCH_PROVIDERS = ['tavily', 'exa', 'serper', 'brave', 'brave-search', 'search-combo'];

const search: ContractCase[] = [
  ...SEARCH_PROVIDERS.map((provider) =>
    constant(
      `search: ${provider}`,
      post('/v1/search', { model: provider, query: fresh(`search-${provider}`), max_results: 3 }),
    ),
  ),
  constant(
    'search: news',
    post('/v1/search', { model: 'serper', query: fresh('news'), search_type: 'news' }),
  ),
  constant(
    'search: listed id with its suffix',
    post('/v1/search', { model: 'tavily/search', query: fresh('suffix') }),
  ),
  constant(
    'search: unknown provider',
    post('/v1/search', { model: 'no-such-engine', query: fresh('unknown') }),
  ),
  constant('search: missing query', post('/v1/search', { model: 'tavily' })),
  constant(
    'search: control characters in the query',
    post('/v1/search', { model: 'tavily', query: `${fresh('control')}\u0001\u0007` }),
  ),
];

const fetchPage: ContractCase[] = [
  ...['jina-reader', 'tavily', 'exa', 'firecrawl'].map((provider) =>
    constant(
      `fetch: ${provider}`,
      post('/v1/web/fetch', { model: provider, url: `https://example.com/${fresh(`page-${provider}`)}` }),
    ),
  ),
  constant(
    'fetch: loopback URL',
    post('/v1/web/fetch', { model: 'jina-reader', url: 'http://127.0.0.1:9/admin' }),
  ),
  constant('fetch: missing url', post('/v1/web/fetch', { model: 'jina-reader' })),
];

interface SubmittedJob {
  id: string;
  connectionId: string;
}

/** Submits a job on that side (pending for one poll on both gateways) and returns its handle. */
async function submitJob(side: Side): Promise<SubmittedJob> {
  const res = await send(side, post('/v1/videos/generations', { prompt: `${fresh('video')} polls-1` }));
  const body = (await res.json()) as { request_id?: string };
  const connectionId = res.headers.get('x-9router-connection-id');
  if (!res.ok || !body.request_id || !connectionId) {
    throw new Error(`${side.name}: video submit answered ${res.status} ${JSON.stringify(body)}`);
  }
  return { id: body.request_id, connectionId };
}

const pollOf = (job: SubmittedJob): RawRequest =>
  get(`/v1/videos/${job.id}`, { headers: { 'x-connection-id': job.connectionId } });

const video: ContractCase[] = [
  constant(
    'video: submit',
    post('/v1/videos/generations', {
      model: 'xai/grok-imagine-video',
      prompt: fresh('submit'),
      duration: 6,
      aspect_ratio: '16:9',
    }),
  ),
  constant(
    'video: submit without a prompt',
    post('/v1/videos/generations', { model: 'xai/grok-imagine-video' }),
  ),
  { name: 'video: poll while pending', request: async (side) => pollOf(await submitJob(side)) },
  {
    name: 'video: poll when done',
    request: async (side) => {
      const job = await submitJob(side);
      await (await send(side, pollOf(job))).arrayBuffer();
      return pollOf(job);
    },
  },
  // Last of the video cases: the real gateway locks the xai account after an upstream 404.
  constant(
    'video: poll of an unknown job',
    get(`/v1/videos/${randomUUID()}`, { headers: { 'x-connection-id': '1' } }),
  ),
];

const speech: ContractCase[] = [
  constant(
    'speech: audio bytes',
    post('/v1/audio/speech', { model: 'openai/tts-1/alloy', input: 'Hello there.' }),
  ),
  constant(
    'speech: JSON answer',
    post('/v1/audio/speech?response_format=json', { model: 'openai/tts-1/alloy', input: 'Hello there.' }),
  ),
  constant(
    'speech: tts list id as listed',
    post('/v1/audio/speech', { model: 'openai/tts-1', input: 'Hello.' }),
  ),
  // A two-part openai id is a voice on the default model; a longer one, the default voice there.
  constant('speech: provider/voice', post('/v1/audio/speech', { model: 'openai/alloy', input: 'Hello.' })),
  constant(
    'speech: more than provider/model/voice',
    post('/v1/audio/speech', { model: 'openai/tts-1/alloy/extra', input: 'Hello.' }),
  ),
  constant(
    'speech: provider without speech',
    post('/v1/audio/speech', { model: 'tavily/search', input: 'Hello.' }),
  ),
  constant('speech: missing input', post('/v1/audio/speech', { model: 'openai/tts-1/alloy' })),
];

const AUDIO: RawRequest['multipart'] = {
  file: {
    filename: 'hello.wav',
    type: 'audio/wav',
    bytes: Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt SPOKEN: hello from the contract suite\n', 'latin1'),
  },
};

const transcription: ContractCase[] = [
  ...['json', 'text', 'verbose_json', 'srt', 'vtt'].map((format) =>
    constant(`transcription: ${format}`, {
      method: 'POST',
      path: '/v1/audio/transcriptions',
      multipart: { ...AUDIO, model: 'openai/whisper-1', response_format: format },
    }),
  ),
  constant('transcription: groq', {
    method: 'POST',
    path: '/v1/audio/transcriptions',
    multipart: { ...AUDIO, model: 'groq/whisper-large-v3' },
  }),
  constant(
    'transcription: JSON body',
    post('/v1/audio/transcriptions', { model: 'openai/whisper-1', file: 'hello.wav' }),
  ),
];

/** A chat model reached through chat completions (openai), and both kinds of provider node. */
const responsesOf = (label: string, model: string, stream: boolean | undefined): ContractCase =>
  constant(
    `responses: ${label}`,
    post('/v1/responses', {
      model,
      input: fresh(`responses-${label.replace(/\W+/g, '-')}`),
      ...(stream === undefined ? {} : { stream }),
    }),
  );

const responses: ContractCase[] = [
  responsesOf('openai, stream true', 'openai/gpt-4o-mini', true),
  responsesOf('openai, stream false', 'openai/gpt-4o-mini', false),
  responsesOf('openai, stream left out', 'openai/gpt-4o-mini', undefined),
  responsesOf('chat node, stream true', 'fakechat/echo', true),
  responsesOf('chat node, stream false', 'fakechat/echo', false),
  responsesOf('Responses node, stream true', 'fakeresp/echo', true),
  responsesOf('Responses node, stream false', 'fakeresp/echo', false),
  responsesOf('Responses node, stream left out', 'fakeresp/echo', undefined),
  responsesOf('unknown provider', 'nobody/nothing', true),
];

export const CONTRACT_CASES: readonly ContractCase[] = [
  ...modelLists,
  ...auth,
  ...search,
  ...fetchPage,
  ...video,
  ...speech,
  ...transcription,
  ...responses,
];
