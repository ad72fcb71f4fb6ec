// The rows of the fault matrix: how to call each tool so that only its main service route is
// exercised (models configured explicitly, arguments unique per call so no cache answers instead).
import { SUBMIT_TIMEOUT_FACTOR } from '../../../src/gateway/endpoints/videos.js';
import { type ReferenceService, type RouteName, synthesizeAudio } from '../../reference-service/index.js';

export type Call = (
  tool: string,
  args: Record<string, unknown>,
) => Promise<{
  isError: boolean;
  text: string;
  structured: unknown /** The whole result as JSON. */;
  raw: string;
}>;

export interface ToolCase {
  /** Row name in the report. */
  label: string;
  tool: string;
  /** Where the faults are injected. */
  route: RouteName;
  env: Record<string, string>;
  /** Billed and not replayable (video submits, uploads): exactly one request per call, whatever happens. */
  sendOnce?: boolean;
  /** This route's timeout as a multiple of GATEWAY_TIMEOUT_MS (audio gets longer). */
  timeoutFactor?: number;
  /** Faults the contract defines as a normal answer on this route (e.g. 404 on a list = no list). */
  notInScope?: readonly string[];
  /** A route that must not be called at all while the fault is on (nothing billable after a failed lookup). */
  untouched?: RouteName;
  /** In-process servers: forget cached model lists before each call (the fault must reach the service). */
  freshCatalog?: boolean;
  /** Runs once before the faults, with the service healthy; returns values the arguments need. */
  prepare?(service: ReferenceService, call: Call): Promise<Record<string, string>>;
  /** Arguments of the n-th call: unique, so page, transcript and model caches never answer instead. */
  args(n: number, prepared: Record<string, string>): Record<string, unknown>;
}

export const CHAT = 'openai/gpt-4o-mini';
export const AUDIO = synthesizeAudio('matrix', 'mp3').toString('base64');
export const WEB = { GATEWAY_SEARCH_MODEL: 'tavily', GATEWAY_FETCH_MODEL: 'jina-reader' };

/** A running job to ask about: it never finishes, so every status read reaches the service. */
async function runningJob(service: ReferenceService, call: Call): Promise<Record<string, string>> {
  service.setVideoTiming({ pollsUntilDone: 1_000_000 });
  const started = await call('video_generate', { prompt: 'a job to follow', wait_seconds: 0 });
  return { jobId: (started.structured as { job_id: string }).job_id };
}

/** A finished job, so video_edit must read its status (a free poll) before submitting. */
export async function finishedJob(service: ReferenceService, call: Call): Promise<Record<string, string>> {
  service.setVideoTiming({ pollsUntilDone: 1 });
  const started = await call('video_generate', { prompt: 'a job to edit', wait_seconds: 0 });
  const jobId = (started.structured as { job_id: string }).job_id;
  await call('video_status', { job_id: jobId, wait_seconds: 0 });
  return { jobId };
}

const submit = (label: string, route: RouteName, extra: Record<string, unknown>): ToolCase => ({
  label,
  tool: label,
  route,
  env: {},
  sendOnce: true,
  timeoutFactor: SUBMIT_TIMEOUT_FACTOR,
  args: (n) => ({ prompt: `matrix video ${n}`, wait_seconds: 0, ...extra }),
});

const STARTING_VIDEO = { video: 'https://videos.example.com/start.mp4' };

/** Every tool, faults on its main route. */
export const TOOL_CASES: readonly ToolCase[] = [
  {
    label: 'web_search',
    tool: 'web_search',
    route: 'search',
    env: WEB,
    args: (n) => ({ query: `fault matrix ${n}` }),
  },
  {
    label: 'web_fetch',
    tool: 'web_fetch',
    route: 'fetch',
    env: WEB,
    args: (n) => ({ url: `https://example.com/matrix/${n}` }),
  },
  {
    label: 'web_fetch + prompt',
    tool: 'web_fetch',
    route: 'responses',
    env: { ...WEB, GATEWAY_SUMMARY_MODEL: CHAT },
    args: (n) => ({ url: `https://example.com/prompt/${n}`, prompt: 'What is on this page?' }),
  },
  submit('video_generate', 'videos.generations', {}),
  submit('video_edit', 'videos.edits', STARTING_VIDEO),
  submit('video_extend', 'videos.extensions', { ...STARTING_VIDEO, duration: 4 }),
  {
    label: 'video_status',
    tool: 'video_status',
    route: 'videos.poll',
    env: {},
    prepare: runningJob,
    args: (_n, { jobId }) => ({ job_id: jobId, wait_seconds: 0 }),
  },
  {
    label: 'audio_speech',
    tool: 'audio_speech',
    route: 'speech',
    env: { GATEWAY_SPEECH_MODEL: 'openai/tts-1/alloy' },
    timeoutFactor: 2,
    args: (n) => ({ text: `Fault matrix call ${n}.` }),
  },
  {
    label: 'audio_transcribe',
    tool: 'audio_transcribe',
    route: 'transcriptions',
    env: { GATEWAY_TRANSCRIBE_MODEL: 'groq/whisper-large-v3' },
    sendOnce: true,
    timeoutFactor: 5,
    args: (n) => ({ data_base64: AUDIO, prompt: `call ${n}` }),
  },
  {
    label: 'list_models',
    tool: 'list_models',
    route: 'models',
    env: {},
    // A 404 on a model list means "this gateway has no such list": a normal answer, not an error.
    notInScope: ['404'],
    freshCatalog: true,
    args: () => ({ capability: 'chat' }),
  },
  {
    label: 'ask_model',
    tool: 'ask_model',
    route: 'responses',
    env: { GATEWAY_CHAT_MODEL: CHAT },
    args: (n) => ({ prompt: `Say hello, call ${n}.` }),
  },
];
