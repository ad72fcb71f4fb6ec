// Model discovery: GET /v1/models, /v1/models/{kind}, /v1/models/info?id=.

import { errorReply, jsonReply, type Reply } from './http-util.js';
import type { RouteContext } from './router.js';
import { ownerOf, providerOf, type ServiceState, VIDEO_MODEL } from './state.js';
import type { ModelEntry, ModelListKind, WebModelEntry } from './types.js';

const LIST_KINDS: readonly ModelListKind[] = ['chat', 'tts', 'stt', 'image', 'embedding', 'image-to-text'];

function isListKind(kind: string): kind is ModelListKind {
  return (LIST_KINDS as readonly string[]).includes(kind);
}

/** What 9router says of a chat model's abilities (most models: no reasoning, 128k context). */
function chatCapabilities(id: string): Record<string, unknown> {
  const reasoning = /claude|\/o\d|gpt-5|grok-4/.test(id);
  const contextWindow = /claude/.test(id) ? 200_000 : 128_000;
  const maxOutput = /claude/.test(id) ? 64_000 : 16_384;
  return {
    vision: true,
    pdf: false,
    audioInput: false,
    videoInput: false,
    imageOutput: false,
    audioOutput: false,
    search: false,
    tools: true,
    reasoning,
    thinkingFormat: reasoning ? (id.startsWith('anthropic/') ? 'claude' : 'openai') : null,
    thinkingCanDisable: true,
    thinkingRange: null,
    thinkingEffortSupported: false,
    contextWindow,
    maxOutput,
  };
}

function modelObject(entry: ModelEntry): Record<string, unknown> {
  return { id: entry.id, object: 'model', owned_by: ownerOf(entry) };
}

/** Chat models carry their capabilities and limits; combos are listed bare, as 9router does. */
function chatModelObject(entry: ModelEntry): Record<string, unknown> {
  if (ownerOf(entry) === 'combo') return modelObject(entry);
  const capabilities = chatCapabilities(entry.id);
  return {
    ...modelObject(entry),
    capabilities,
    context_length: capabilities.contextWindow,
    max_completion_tokens: capabilities.maxOutput,
  };
}

function webModelObject(entry: WebModelEntry): Record<string, unknown> {
  return { id: entry.id, object: 'model', kind: entry.kind, owned_by: providerOf(entry.id) };
}

/** The gateway lists combos before plain models. */
function combosFirst(list: ModelEntry[]): ModelEntry[] {
  const isCombo = (entry: ModelEntry) => ownerOf(entry) === 'combo';
  return [...list.filter(isCombo), ...list.filter((entry) => !isCombo(entry))];
}

function listReply(data: Record<string, unknown>[]): Reply {
  return jsonReply({ object: 'list', data });
}

export function listChatModels(context: RouteContext): Reply {
  const list = context.state.modelList('chat');
  if (!list) return errorReply(404, { message: 'Not found' });
  return listReply(combosFirst(list).map(chatModelObject));
}

export function listModelsOfKind(context: RouteContext): Reply {
  const kind = context.params.kind ?? '';
  if (kind === 'web') {
    const web = context.state.getWebModels();
    if (!web) return errorReply(404, { message: 'Not found' });
    return listReply(web.map(webModelObject));
  }
  if (!isListKind(kind) || kind === 'chat') {
    return errorReply(404, {
      message: `The model '${kind}' does not exist or you do not have access to it.`,
      code: 'model_not_found',
    });
  }
  const list = context.state.modelList(kind);
  if (!list) return errorReply(404, { message: 'Not found' });
  return listReply(list.map(modelObject));
}

/**
 * What /v1/models/info adds to {id, name, kind, owned_by} per kind, as 9router's catalogue has it:
 * `params` only where the catalogue names some, `endpoint` null for video (no single route).
 */
interface KindInfo {
  kind: string;
  endpoint: string | null;
  params?: string[];
  extra?: Record<string, unknown>;
}

const INFO_BY_LIST: Record<ModelListKind, KindInfo> = {
  chat: { kind: 'llm', endpoint: '/v1/chat/completions' },
  tts: { kind: 'tts', endpoint: '/v1/audio/speech' },
  stt: {
    kind: 'stt',
    endpoint: '/v1/audio/transcriptions',
    params: ['language', 'response_format', 'temperature', 'prompt'],
  },
  image: {
    kind: 'image',
    endpoint: '/v1/images/generations',
    params: ['n', 'size', 'quality', 'response_format'],
  },
  embedding: { kind: 'embedding', endpoint: '/v1/embeddings' },
  'image-to-text': { kind: 'imageToText', endpoint: '/v1/chat/completions' },
};

const WEB_INFO: Record<WebModelEntry['kind'], KindInfo> = {
  webSearch: {
    kind: 'webSearch',
    endpoint: '/v1/search',
    params: ['query', 'max_results', 'country', 'language', 'time_range', 'domain_filter', 'search_type'],
    extra: { searchTypes: ['web', 'news'], maxResults: 20 },
  },
  webFetch: { kind: 'webFetch', endpoint: '/v1/fetch', params: ['url', 'format', 'max_characters'] },
};

const VIDEO_INFO: KindInfo = {
  kind: 'video',
  endpoint: null,
  params: ['duration', 'aspect_ratio', 'resolution'],
};

function findModel(state: ServiceState, id: string): { owner: string; info: KindInfo } | null {
  for (const kind of LIST_KINDS) {
    const entry = state.modelList(kind)?.find((candidate) => candidate.id === id);
    // Combos have no catalogue entry: 9router answers 404 for them.
    if (entry && ownerOf(entry) !== 'combo') return { owner: ownerOf(entry), info: INFO_BY_LIST[kind] };
  }
  const web = state.getWebModels()?.find((candidate) => candidate.id === id);
  if (web) return { owner: providerOf(web.id), info: WEB_INFO[web.kind] };
  if (id === VIDEO_MODEL) return { owner: 'xai', info: VIDEO_INFO };
  return null;
}

export function modelInfo(context: RouteContext): Reply {
  const id = context.query.id;
  if (!id) {
    return errorReply(400, {
      message: 'Missing required query param: id (e.g. ?id=openai/dall-e-3)',
      code: null,
    });
  }
  const found = findModel(context.state, id);
  if (!found) return errorReply(404, { message: `Model not found: ${id}`, type: 'not_found', code: null });
  const { info } = found;
  return jsonReply({
    id,
    name: id.split('/').slice(1).join('/') || id,
    kind: info.kind,
    owned_by: found.owner,
    endpoint: info.endpoint,
    ...(info.params ? { params: info.params } : {}),
    ...info.extra,
  });
}
