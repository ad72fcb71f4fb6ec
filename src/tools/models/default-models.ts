// Which models serve which capability, and the default for each: the setting first, then what
// the service lists. Shared by the tools (ask_model, web_fetch prompts, audio, list_models) and
// by `doctor`, so the report shows exactly the models the tools would use.

import type { Config } from '../../config/config.js';
import { FIXED_DEFAULT_MODELS } from '../../config/model-ids.js';
import { SETTINGS } from '../../config/settings.js';
import {
  bareProviderId,
  type ModelEntry,
  type ModelListKind,
  modelListPath,
} from '../../gateway/endpoints/models.js';
import type { Service } from '../../gateway/index.js';

export type Capability = 'chat' | 'search' | 'fetch' | 'speech' | 'transcription' | 'video';
export const CAPABILITIES: readonly Capability[] = [
  'chat',
  'search',
  'fetch',
  'speech',
  'transcription',
  'video',
];

/** A capability, or `summary`: the small chat model that answers web_fetch prompts. */
export type ModelRole = Capability | 'summary';

/** The setting that overrides each role's default, as the settings table names it. */
const SETTING_KEY = {
  chat: 'chatModel',
  summary: 'summaryModel',
  search: 'searchModel',
  fetch: 'fetchModel',
  speech: 'speechModel',
  transcription: 'transcribeModel',
  video: 'videoModel',
} as const satisfies Record<ModelRole, keyof Config>;

/** The variable of the setting that overrides each default: GATEWAY_CHAT_MODEL, ... */
export const MODEL_SETTING = Object.fromEntries(
  Object.entries(SETTING_KEY).map(([role, key]) => [role, SETTINGS.find((s) => s.key === key)!.env]),
) as Record<ModelRole, string>;

/** Where each capability's list comes from; null for video, which the service does not list. */
export function listPath(capability: Capability): string | null {
  return capability === 'video' ? null : modelListPath(LIST_KIND[capability]);
}

const LIST_KIND: Record<Exclude<Capability, 'video'>, ModelListKind> = {
  chat: 'chat',
  search: 'web',
  fetch: 'web',
  speech: 'tts',
  transcription: 'stt',
};

export interface CapabilityModel {
  /** As the tools take it: search and fetch ids are bare provider ids (`tavily`, not `tavily/search`). */
  id: string;
  capability: Capability;
  owned_by: string | null;
}

export interface ModelDeps {
  config: Config;
  service: Service;
}

/**
 * The models of one capability, or null when the service has no such list (404). Other errors
 * (401, unreachable) are thrown as ServiceErrors.
 */
export async function modelsFor(
  capability: Capability,
  deps: ModelDeps,
  signal?: AbortSignal,
): Promise<CapabilityModel[] | null> {
  if (capability === 'video') {
    const ids = [...new Set([deps.config.videoModel, FIXED_DEFAULT_MODELS.video])];
    return ids.map((id) => ({ id, capability, owned_by: providerOf(id) }));
  }
  const list = await deps.service.catalog.list(LIST_KIND[capability], signal);
  if (!list) return null;
  if (capability !== 'search' && capability !== 'fetch') {
    return list.map((m) => ({ id: m.id, capability, owned_by: m.owned_by }));
  }
  const seen = new Set<string>();
  return list.filter(isWeb(capability)).flatMap((m) => {
    const id = bareProviderId(m.id, capability);
    if (seen.has(id)) return [];
    seen.add(id);
    return [{ id, capability, owned_by: m.owned_by ?? id }];
  });
}

export interface ModelChoice {
  role: ModelRole;
  /** The model id to use, or null when there is none. */
  id: string | null;
  /** `setting`: from the variable in MODEL_SETTING (or the chat setting for summary);
   *  `discovered`: from the service's list; `built-in`: the fixed video default. */
  source: 'setting' | 'discovered' | 'built-in' | 'none';
  /** The setting that supplied it, when source is `setting`. */
  setting: string | null;
  /** How many models the service lists for the role's capability; null when it has no list. */
  listed: number | null;
}

/** The default model for a role: the setting first, then the first suitable model listed. */
export async function defaultModel(
  role: ModelRole,
  deps: ModelDeps,
  signal?: AbortSignal,
): Promise<ModelChoice> {
  const { config } = deps;
  const configured = configuredModel(role, config);
  if (role === 'video') {
    const builtIn = config.videoModel === FIXED_DEFAULT_MODELS.video;
    return {
      role,
      id: config.videoModel,
      source: builtIn ? 'built-in' : 'setting',
      setting: builtIn ? null : MODEL_SETTING.video,
      listed: null,
    };
  }
  const capability: Capability = role === 'summary' ? 'chat' : role;
  if (configured) {
    // The list is still worth counting for the report, but never required for a set model.
    return { role, id: configured.id, source: 'setting', setting: configured.setting, listed: null };
  }
  const models = await modelsFor(capability, deps, signal);
  const id = models ? pick(role, models) : null;
  return { role, id, source: id ? 'discovered' : 'none', setting: null, listed: models?.length ?? null };
}

/** The model a setting names for the role, without asking the service; null when none is set. */
export function configuredModel(role: ModelRole, config: Config): { id: string; setting: string } | null {
  const value = settingFor(role, config);
  if (value) return { id: value, setting: MODEL_SETTING[role] };
  // A web_fetch prompt falls back to the chat model the user chose before guessing a small one.
  if (role === 'summary' && config.chatModel) return { id: config.chatModel, setting: MODEL_SETTING.chat };
  return null;
}

function settingFor(role: ModelRole, config: Config): string | undefined {
  const value = config[SETTING_KEY[role]];
  return value && (role === 'search' || role === 'fetch') ? bareProviderId(value, role) : value;
}

/** Names that mark a small, cheap model: right for answering a question about one page. */
const SMALL_MODEL = /\b(mini|nano|haiku|flash|lite|small)\b/i;

/**
 * Chat: the first plain model. Combos come first in the gateway's list, but a combo is a
 * fallback chain whose model (and price) varies per call, so it is the choice only when the
 * gateway lists nothing else. Summary: the first small-looking plain model, else the chat pick.
 */
function pick(role: ModelRole, models: readonly CapabilityModel[]): string | null {
  const plain = models.filter((m) => m.owned_by !== 'combo');
  if (role === 'summary') {
    const small = plain.find((m) => SMALL_MODEL.test(m.id));
    if (small) return small.id;
  }
  if (role === 'chat' || role === 'summary') return plain[0]?.id ?? models[0]?.id ?? null;
  return models[0]?.id ?? null;
}

function isWeb(kind: 'search' | 'fetch') {
  const wanted = kind === 'search' ? 'webSearch' : 'webFetch';
  return (m: ModelEntry) => m.kind === wanted || (m.kind === null && m.id.endsWith(`/${kind}`));
}

function providerOf(id: string): string | null {
  return id.includes('/') ? (id.split('/')[0] ?? null) : null;
}
