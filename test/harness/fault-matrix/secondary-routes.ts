// Secondary rows of the fault matrix: faults on a request made before the main call (a model
// list for a default, the status of a starting job) or after it (downloading a finished file).
import type { ReferenceService } from '../../reference-service/index.js';
import { AUDIO, type Call, finishedJob, type ToolCase, WEB } from './tools.js';

/** Tools whose main call needs a lookup first: faults on the lookup, nothing configured. */
export const DISCOVERY_CASES: readonly ToolCase[] = [
  {
    label: 'web_search ← /v1/models/web',
    tool: 'web_search',
    route: 'models.kind',
    env: {},
    untouched: 'search',
    freshCatalog: true,
    args: (n) => ({ query: `discovery ${n}` }),
  },
  {
    label: 'web_fetch ← /v1/models/web',
    tool: 'web_fetch',
    route: 'models.kind',
    env: {},
    untouched: 'fetch',
    freshCatalog: true,
    args: (n) => ({ url: `https://example.com/discovery/${n}` }),
  },
  {
    label: 'web_fetch + prompt ← /v1/models',
    tool: 'web_fetch',
    route: 'models',
    env: WEB,
    untouched: 'responses',
    freshCatalog: true,
    args: (n) => ({ url: `https://example.com/discovery-prompt/${n}`, prompt: 'Anything?' }),
  },
  {
    label: 'ask_model ← /v1/models',
    tool: 'ask_model',
    route: 'models',
    env: {},
    untouched: 'responses',
    freshCatalog: true,
    args: (n) => ({ prompt: `discovery ${n}` }),
  },
  {
    label: 'audio_speech ← /v1/models/tts',
    tool: 'audio_speech',
    route: 'models.kind',
    env: {},
    untouched: 'speech',
    freshCatalog: true,
    args: (n) => ({ text: `discovery ${n}` }),
  },
  {
    label: 'audio_transcribe ← /v1/models/stt',
    tool: 'audio_transcribe',
    route: 'models.kind',
    env: {},
    untouched: 'transcriptions',
    freshCatalog: true,
    args: (n) => ({ data_base64: AUDIO, prompt: `discovery ${n}` }),
  },
  {
    label: 'video_edit ← job status',
    tool: 'video_edit',
    route: 'videos.poll',
    env: {},
    untouched: 'videos.edits',
    prepare: finishedJob,
    args: (n, { jobId }) => ({ prompt: `discovery ${n}`, video: jobId, wait_seconds: 0 }),
  },
];

/** A finished job whose video video_status downloads, and an audio URL on the gateway's own file route. */
async function downloadable(service: ReferenceService, call: Call): Promise<Record<string, string>> {
  return {
    ...(await finishedJob(service, call)),
    audioUrl: `${service.url}/files/video/talk.mp4?bytes=4096`,
  };
}

/** Tools that download a file as part of their work: faults on the file route. */
export const DOWNLOAD_CASES: readonly ToolCase[] = [
  {
    label: 'video_status download → video file',
    tool: 'video_status',
    route: 'files.video',
    env: {},
    prepare: downloadable,
    args: (_n, { jobId }) => ({ job_id: jobId, wait_seconds: 0, download: true }),
  },
  {
    label: 'audio_transcribe url → audio file',
    tool: 'audio_transcribe',
    route: 'files.video',
    env: { GATEWAY_TRANSCRIBE_MODEL: 'groq/whisper-large-v3' },
    untouched: 'transcriptions',
    prepare: downloadable,
    args: (n, { audioUrl }) => ({ url: audioUrl, prompt: `download ${n}` }),
  },
];
