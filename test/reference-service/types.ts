// Public types of the reference service: a local, faithful implementation of the backing service's
// HTTP contract (shared/service-contract.md) with fault injection and counters for tests.

export type RouteName =
  | 'search'
  | 'fetch'
  | 'videos.generations'
  | 'videos.edits'
  | 'videos.extensions'
  | 'videos.poll'
  | 'speech'
  | 'transcriptions'
  | 'voices'
  | 'responses'
  | 'models'
  | 'models.kind'
  | 'models.info'
  | 'health'
  | 'files.video'
  | 'files.redirect';

export const ROUTE_NAMES: readonly RouteName[] = [
  'search',
  'fetch',
  'videos.generations',
  'videos.edits',
  'videos.extensions',
  'videos.poll',
  'speech',
  'transcriptions',
  'voices',
  'responses',
  'models',
  'models.kind',
  'models.info',
  'health',
  'files.video',
  'files.redirect',
];

export interface Fault {
  /** Respond with this status (body: contract error JSON unless body/html given). */
  status?: number;
  /** Error message for the JSON error body (default derived from status). */
  message?: string;
  /** Body is {"error":"<message>"} (string form) instead of an object. */
  errorAsString?: boolean;
  /** error.code is a number. */
  numericCode?: boolean;
  /** Extra response headers, e.g. {'retry-after': '1'}. */
  headers?: Record<string, string>;
  /** Raw body sent verbatim (with the given status, default 200). */
  body?: string;
  /** Send an HTML error page (as a proxy would) with content-type text/html. */
  html?: boolean;
  /** Send a JSON body cut in half (content-type application/json), status 200 unless status set. */
  truncatedJson?: boolean;
  /** Wait before responding (then do the normal/fault response). */
  delayMs?: number;
  /** Never respond (until the client closes the socket or the service closes). */
  hang?: boolean;
  /** Destroy the socket without any response (connection reset). */
  reset?: boolean;
  /** Send headers + first bytes, then the rest of the normal body after this delay. */
  slowBodyMs?: number;
  /** How many matching requests this fault applies to (default 1; Infinity allowed). */
  times?: number;
}

export interface RecordedFile {
  name: string;
  type: string;
  size: number;
  sha256: string;
}

export interface RecordedRequest {
  route: RouteName;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** Parsed JSON; for multipart {fields, file}; otherwise the raw string (or undefined without a body). */
  body: unknown;
  receivedAt: number;
}

export interface VideoJobTiming {
  pollsUntilDone: number;
  failWith?: { code: string; message: string };
  status?: 'expired' | 'cancelled';
  /** Size of the finished video file; adds `?bytes=N` to the done `video.url` (default: a real 2 s clip). */
  videoBytes?: number;
  /** false: running polls carry no `progress` field (some gateways never report one). Default true. */
  reportProgress?: boolean;
  /**
   * An origin (e.g. another reference service's url): the done `video.url` becomes a
   * `/files/redirect/` URL on this service that answers 302 to `/files/video/` on that origin.
   */
  redirectVideoTo?: string;
}

export type ModelListKind = 'chat' | 'tts' | 'stt' | 'image' | 'embedding' | 'image-to-text';

export interface ModelEntry {
  id: string;
  owned_by?: string;
}

export interface WebModelEntry {
  id: string;
  kind: 'webSearch' | 'webFetch';
}

/** What a Responses request asked, for a model answer set with setModelAnswer. */
export interface ModelQuestion {
  model: string;
  /** The text of the input (a string, or the last user message). */
  input: string;
  instructions: string | undefined;
}

/** The text the model answers with, in place of the echo. */
export type ModelAnswer = (question: ModelQuestion) => string;

export interface ResponseStreamCounts {
  open: number;
  completed: number;
  cut: number;
}

export interface VideoJob {
  id: string;
  connectionId: string;
  idempotencyKey?: string;
  polls: number;
  body: unknown;
}

export interface ReferenceServiceOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (random free port). */
  port?: number;
  /** Default 'ref-test-key'; requests must carry Authorization: Bearer <key> or x-api-key. */
  apiKey?: string;
  /** Default true: /v1/models/web lists tavily/search and jina-reader/fetch; false: an empty list. */
  webModels?: boolean;
}

export interface ReferenceService {
  /** e.g. http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  apiKey: string;
  /** Requests that reached each route, including faulted and unauthorized ones. */
  counters: Record<RouteName, number>;
  /** Requests the client closed before their answer was complete (a cancelled poll, a timeout). */
  abandoned: Record<RouteName, number>;
  /** Every routed request, in order (the last 1000). */
  requests: RecordedRequest[];
  /** Queue a fault for the next request(s) of that route (faults queue in order). */
  inject(route: RouteName, fault: Fault): void;
  clearFaults(): void;
  /** Zero counters and clear recorded requests. */
  resetCounters(): void;
  /** Everything back as started: no faults, zero counters, default model lists and video timing. */
  reset(): void;
  /** null => /v1/models/web answers 404. */
  setWebModels(list: WebModelEntry[] | null): void;
  /** null => that list answers 404. */
  setModelList(kind: ModelListKind, list: ModelEntry[] | null): void;
  /** Applies to jobs submitted after the call. */
  setVideoTiming(timing: Partial<VideoJobTiming>): void;
  /**
   * The text the Responses model answers with instead of the echo (`[instructions] Echo: <input>`,
   * which tests read what was sent back from); null for the echo again. Every check of the
   * request, the answer's forms and the input markers stay as they are.
   */
  setModelAnswer(answer: ModelAnswer | null): void;
  videoJobs: Map<string, VideoJob>;
  /** Responses SSE streams open now, sent to the end, and cut short (the client went away). */
  responseStreams: ResponseStreamCounts;
  /** Closes the server and destroys open sockets (hanging requests) so tests end promptly. */
  close(): Promise<void>;
}
