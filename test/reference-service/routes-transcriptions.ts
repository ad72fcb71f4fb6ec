// POST /v1/audio/transcriptions: multipart/form-data only; the upload was already streamed
// through the parser (counted and hashed, never held) before this handler runs.
import { jsonReply, type Reply, RequestError } from './http-util.js';
import type { RouteContext } from './router.js';
import { providerOf, type ServiceState } from './state.js';
import { audioDurationSeconds, segmentsOf, toSrt, toVtt, transcriptText } from './transcript-formats.js';

const STT_PROVIDERS = new Set(['groq', 'openai', 'deepgram']);
/** Providers that are not OpenAI-compatible answer {"text"} whatever format was asked for. */
const JSON_ONLY_PROVIDERS = new Set(['deepgram']);
const RESPONSE_FORMATS = new Set(['json', 'text', 'verbose_json', 'srt', 'vtt']);

function isTranscriptionModel(state: ServiceState, model: string): boolean {
  return state.effectiveModelList('stt').some((entry) => entry.id === model);
}

function textReply(text: string, contentType: string): Reply {
  return { kind: 'raw', status: 200, contentType, body: text };
}

export function transcribe(context: RouteContext): Reply {
  const { body } = context;
  if (body.kind !== 'multipart' || !body.result.ok)
    throw new RequestError(400, 'Invalid multipart form data');
  const { fields, file } = body.result;
  if (!file) throw new RequestError(400, 'file is required');
  const model = fields.model?.trim();
  if (!model) throw new RequestError(400, 'model is required');
  const provider = providerOf(model);
  if (!STT_PROVIDERS.has(provider))
    throw new RequestError(400, `Provider '${provider}' does not support STT`);
  // Capability is only checked per provider; a wrong model fails upstream.
  if (!isTranscriptionModel(context.state, model)) {
    throw new RequestError(502, `[${provider}] upstream error: model does not support transcription`);
  }
  const format = fields.response_format?.trim() || 'json';
  if (!RESPONSE_FORMATS.has(format)) throw new RequestError(400, `Invalid response_format: ${format}`);

  const language = fields.language?.trim() || undefined;
  const text = transcriptText(file, { language, prompt: fields.prompt?.trim() || undefined });
  if (format === 'json' || JSON_ONLY_PROVIDERS.has(provider)) return jsonReply({ text });
  if (format === 'text') return textReply(text, 'text/plain; charset=utf-8');
  const duration = audioDurationSeconds(file.size);
  const segments = segmentsOf(text, duration);
  if (format === 'srt') return textReply(toSrt(segments), 'text/plain; charset=utf-8');
  if (format === 'vtt') return textReply(toVtt(segments), 'text/vtt; charset=utf-8');
  return jsonReply({ task: 'transcribe', language: language ?? 'en', duration, text, segments });
}
