// Model discovery: GET /v1/models, /v1/models/{kind}, /v1/models/info?id=.

import { errorReply, jsonReply, type Reply } from './http-util.js';
import type { RouteContext } from './router.js';
import { ownerOf, providerOf, type ServiceState, VIDEO_MODEL } from './state.js';
import type { ModelEntry, ModelListKind, WebModelEntry } from './types.js';

const LIST_KINDS: readonly ModelListKind[] = ['chat', 'tts', 'stt', 'image', 'embedding', 'image-to-text'];

function isListKind(kind: string): kind is ModelListKind {
  return (LIST_KINDS as readonly string[]).includes(kind);
}

function modelObject(entry: ModelEntry): Record<string, unknown> {
  return { id: entry.id, object: 'model', owned_by: ownerOf(entry) };
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
  return listReply(combosFirst(list).map(modelObject));
}

export function listModelsOfKind(context: RouteContext): Reply {
  const kind = context.params.kind ?? '';
  if (kind === 'web') {
    const web = context.state.getWebModels();
    if (!web) return errorReply(404, { message: 'Not found' });
    return listReply(web.map(webModelObject));
  }
  if (!isListKind(kind) || kind === 'chat')
    return errorReply(404, { message: `Unknown model kind: ${kind}` });
  const list = context.state.modelList(kind);
  if (!list) return errorReply(404, { message: 'Not found' });
  return listReply(list.map(modelObject));
}

interface KindInfo {
  kind: string;
  endpoint: string;
  params: string[];
}

const INFO_BY_LIST: Record<ModelListKind, KindInfo> = {
  chat: {
    kind: 'llm',
    endpoint: '/v1/responses',
    params: ['input', 'instructions', 'max_output_tokens', 'temperature', 'stream'],
  },
  tts: { kind: 'tts', endpoint: '/v1/audio/speech', params: ['input', 'language', 'style'] },
  stt: {
    kind: 'stt',
    endpoint: '/v1/audio/transcriptions',
    params: ['file', 'language', 'prompt', 'response_format', 'temperature'],
  },
  image: { kind: 'image', endpoint: '/v1/images/generations', params: ['prompt', 'size', 'n'] },
  embedding: { kind: 'embedding', endpoint: '/v1/embeddings', params: ['input'] },
  'image-to-text': { kind: 'imageToText', endpoint: '/v1/chat/completions', params: ['messages'] },
};

const WEB_INFO: Record<WebModelEntry['kind'], KindInfo> = {
  webSearch: {
    kind: 'webSearch',
    endpoint: '/v1/search',
    params: ['query', 'max_results', 'search_type', 'time_range', 'domain_filter', 'country', 'language'],
  },
  webFetch: { kind: 'webFetch', endpoint: '/v1/web/fetch', params: ['url', 'format', 'max_characters'] },
};

const VIDEO_INFO: KindInfo = {
  kind: 'video',
  endpoint: '/v1/videos/generations',
  params: ['prompt', 'duration', 'aspect_ratio', 'resolution', 'image'],
};

function findModel(state: ServiceState, id: string): { owner: string; info: KindInfo } | null {
  for (const kind of LIST_KINDS) {
    const entry = state.modelList(kind)?.find((candidate) => candidate.id === id);
    if (entry) return { owner: ownerOf(entry), info: INFO_BY_LIST[kind] };
  }
  const web = state.getWebModels()?.find((candidate) => candidate.id === id);
  if (web) return { owner: providerOf(web.id), info: WEB_INFO[web.kind] };
  if (id === VIDEO_MODEL) return { owner: 'xai', info: VIDEO_INFO };
  return null;
}

export function modelInfo(context: RouteContext): Reply {
  const id = context.query.id;
  if (!id) return errorReply(400, { message: 'id is required' });
  const found = findModel(context.state, id);
  if (!found) return errorReply(404, { message: `Model not found: ${id}` });
  const name = id.split('/').slice(1).join('/') || id;
  return jsonReply({
    id,
    name,
    kind: found.info.kind,
    owned_by: found.owner,
    endpoint: found.info.endpoint,
    params: found.info.params,
  });
}
