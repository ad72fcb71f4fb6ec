// The service's mutable state: model lists (which tests can replace), video jobs and their timing,
// and the Responses model's answer when it is not the echo.
import type {
  ModelAnswer,
  ModelEntry,
  ModelListKind,
  ResponseStreamCounts,
  VideoJob,
  VideoJobTiming,
  WebModelEntry,
} from './types.js';

export const DEFAULT_MODEL_LISTS: Readonly<Record<ModelListKind, readonly ModelEntry[]>> = {
  chat: [
    { id: 'combo-fast', owned_by: 'combo' },
    { id: 'openai/gpt-4o-mini' },
    { id: 'anthropic/claude-sonnet-4' },
  ],
  // As 9router lists speech: provider/model, no voice.
  tts: [
    { id: 'openai/tts-1' },
    { id: 'openai/tts-1-hd' },
    { id: 'openai/gpt-4o-mini-tts' },
    { id: 'selfhosted-tts/kokoro' },
  ],
  stt: [{ id: 'groq/whisper-large-v3' }, { id: 'openai/whisper-1' }, { id: 'deepgram/nova-3' }],
  image: [{ id: 'openai/gpt-image-1' }, { id: 'openai/dall-e-3' }],
  embedding: [{ id: 'openai/text-embedding-3-small' }],
  'image-to-text': [{ id: 'openai/gpt-4o-mini' }],
};

export const DEFAULT_WEB_MODELS: readonly WebModelEntry[] = [
  { id: 'tavily/search', kind: 'webSearch' },
  { id: 'jina-reader/fetch', kind: 'webFetch' },
];

export const VIDEO_MODEL = 'xai/grok-imagine-video';

/** The upstream accounts a multi-account gateway spreads video jobs over. */
const CONNECTION_IDS = ['1', '2', '3'] as const;

export function providerOf(modelId: string): string {
  return modelId.split('/')[0] ?? modelId;
}

export function ownerOf(entry: ModelEntry): string {
  return entry.owned_by ?? providerOf(entry.id);
}

/** Lifecycle settings fixed when a job is submitted, so later setVideoTiming calls leave it alone. */
export interface VideoJobPlan {
  timing: VideoJobTiming;
  duration: number;
}

export class ServiceState {
  url = '';
  private readonly modelLists = new Map<ModelListKind, ModelEntry[] | null>();
  private webModels: WebModelEntry[] | null;
  private videoTiming: VideoJobTiming = { pollsUntilDone: 2 };
  /** null: the echo model. */
  modelAnswer: ModelAnswer | null = null;
  readonly videoJobs = new Map<string, VideoJob>();
  readonly videoPlans = new Map<string, VideoJobPlan>();
  /** Responses SSE streams: open now, sent to the end, or cut short by the client going away. */
  readonly responseStreams: ResponseStreamCounts = { open: 0, completed: 0, cut: 0 };
  private submitted = 0;

  constructor(private readonly listWebModels: boolean) {
    this.webModels = this.defaultWebModels();
  }

  /** Model lists, web models and video timing as the service started with them. */
  restoreDefaults(): void {
    this.modelLists.clear();
    this.webModels = this.defaultWebModels();
    this.videoTiming = { pollsUntilDone: 2 };
    this.modelAnswer = null;
  }

  private defaultWebModels(): WebModelEntry[] {
    return this.listWebModels ? DEFAULT_WEB_MODELS.map((entry) => ({ ...entry })) : [];
  }

  /** The list a route answers with; null means that list answers 404. */
  modelList(kind: ModelListKind): ModelEntry[] | null {
    if (!this.modelLists.has(kind)) return DEFAULT_MODEL_LISTS[kind].map((entry) => ({ ...entry }));
    return this.modelLists.get(kind) ?? null;
  }

  /** The models a capability check uses: a list hidden from discovery still exists for the routes. */
  effectiveModelList(kind: ModelListKind): ModelEntry[] {
    return this.modelList(kind) ?? DEFAULT_MODEL_LISTS[kind].map((entry) => ({ ...entry }));
  }

  setModelList(kind: ModelListKind, list: ModelEntry[] | null): void {
    this.modelLists.set(kind, list ? list.map((entry) => ({ ...entry })) : null);
  }

  getWebModels(): WebModelEntry[] | null {
    return this.webModels;
  }

  setWebModels(list: WebModelEntry[] | null): void {
    this.webModels = list ? list.map((entry) => ({ ...entry })) : null;
  }

  setVideoTiming(timing: Partial<VideoJobTiming>): void {
    this.videoTiming = { ...this.videoTiming, ...timing };
  }

  currentVideoTiming(): VideoJobTiming {
    return { ...this.videoTiming };
  }

  nextConnectionId(): string {
    const id = CONNECTION_IDS[this.submitted % CONNECTION_IDS.length] ?? '1';
    this.submitted += 1;
    return id;
  }
}
