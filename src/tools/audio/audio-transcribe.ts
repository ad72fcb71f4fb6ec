import { basename, extname } from 'node:path';
import { z } from 'zod';
import { modelIdSchema } from '../../config/model-ids.js';
import { formatBytes } from '../../files/files.js';
import { saveText as saveOutputText } from '../../files/output-files.js';
import { savedFileMime } from '../../files/saved-files.js';
import { type TranscriptFormat, transcribe } from '../../gateway/endpoints/audio.js';
import { isHttpUrl } from '../../lib/urls.js';
import { UserError } from '../../lib/user-error.js';
import { type BillableCall, billed, type Send } from '../billing.js';
import { ANNOTATIONS, defineTool, type ToolContext } from '../define.js';
import { pageOf, pagingInput, pagingOutput } from '../paging.js';
import { nextStep, success } from '../results.js';
import { audioFailure, chooseTranscriptionModel, type ModelChoice } from './audio-models.js';
import { type AudioSource, audioSource, MAX_BASE64_BYTES } from './audio-sources.js';
import { byteProgress, countingStream } from './byte-progress.js';
import {
  type CachedTranscript,
  cachedTranscript,
  keepTranscript,
  TranscriptCache,
} from './transcript-cache.js';
import { SAVED_EXTENSION, transcriptMarkdown, transcriptNext } from './transcript-text.js';

const FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'] as const;

const inputSchema = {
  file_path: z.string().min(1).max(4096).optional().describe('Local file under the input roots'),
  url: z
    .string()
    .trim()
    .max(4096)
    .refine(isHttpUrl, 'url must be an absolute http:// or https:// URL')
    .optional()
    .describe('http(s) URL of the audio'),
  data_base64: z
    .string()
    .max(
      Math.ceil(MAX_BASE64_BYTES / 3) * 4 + 200,
      'data_base64 must hold at most 20 MiB of audio; pass file_path instead',
    )
    .optional()
    .describe('Base64 or data: URL, ≤ 20 MiB'),
  model: modelIdSchema({ field: 'model', example: 'groq/whisper-large-v3', max: 200 })
    .optional()
    .describe('e.g. groq/whisper-large-v3'),
  language: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'language must be an ISO-639-1 code such as en or de')
    .optional()
    .describe('ISO-639-1, e.g. en'),
  prompt: z
    .string()
    .max(2000, 'prompt must be at most 2000 characters')
    .optional()
    .describe('Names or jargon to guide spelling'),
  response_format: z
    .enum(FORMATS)
    .default('json')
    .describe('srt, vtt, verbose_json are also saved as a file'),
  ...pagingInput,
};

const outputSchema = {
  text: z.string(),
  model: z.string(),
  format: z.enum(FORMATS),
  file_path: z.string().nullable(),
  ...pagingOutput,
  next: nextStep,
};

export const audioTranscribe = defineTool({
  name: 'audio_transcribe',
  usesFiles: true,
  group: 'audio',
  title: 'Transcribe audio',
  action: 'Transcription',
  description:
    'Transcribe speech (billed per call) from exactly one of file_path, url or data_base64. Long ' +
    'transcripts come in parts (start_index=N) and are saved as a file. Models: list_models transcription.',
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.create,
  confirm: {
    kind: 'transcription',
    async call(args, ctx) {
      // What cannot be read here is said by run(), which refuses before sending anything.
      const planned = await planOf(args, ctx).catch(() => undefined);
      if (!planned?.choice.ok || planned.cached) return undefined;
      return {
        call: transcriptionCall(planned.choice.model, planned.source.name, planned.key),
        action: 'Transcribe audio',
        details: [
          ['Audio', args.url ?? planned.source.name],
          ['Language', args.language],
          ['Format', args.response_format],
        ],
      };
    },
  },
  async run(args, ctx) {
    let choice: ModelChoice | undefined;
    try {
      const { source, key, cached, ...planned } = await planOf(args, ctx);
      choice = planned.choice;
      if (!choice.ok) throw new UserError(choice.message);
      if (!cached && !ctx.approval.allows('transcription')) {
        // Cached when the user would have been asked (so not asked), gone since.
        throw new UserError(
          'Not sent, and nothing billed: the user was not asked to approve this transcription (its transcript was cached a moment ago); call again to be asked.',
        );
      }
      const call = transcriptionCall(choice.model, source.name, key);
      const transcript =
        cached ?? (await billed(ctx, call, (send) => transcribeSource(source, call.model, args, ctx, send)));
      if (!cached) await keepTranscript(ctx.runtime, key, transcript);
      if (args.start_index > 0 && args.start_index >= transcript.text.length) {
        throw new UserError(
          `start_index ${args.start_index} is past the end of the transcript (total_length ${transcript.text.length}). ` +
            'Use start_index=0 or a smaller offset.',
        );
      }
      const { content, ...page } = pageOf(transcript.text, args.start_index, args.max_length);
      // A transcript too long for one answer is also kept whole as a file, once.
      if (page.truncated && !transcript.filePath) {
        transcript.filePath = await saveText(transcript.text, transcript.sourceName, 'txt', ctx);
        await keepTranscript(ctx.runtime, key, transcript);
      }
      const shown = {
        text: content,
        model: transcript.model,
        format: transcript.format,
        file_path: transcript.filePath,
        ...page,
      };
      const next = transcriptNext(shown, args.response_format);
      const structured = next ? { ...shown, next } : shown;
      const text = transcriptMarkdown(shown, next, cached !== undefined);
      const link = transcript.filePath
        ? [ctx.savedFile(transcript.filePath, savedFileMime(transcript.filePath), 'The saved transcript')]
        : [];
      return success(text, structured, link);
    } catch (error) {
      // Adds what only this call knows (it was cancelled; its model went unchecked), else rethrows.
      return audioFailure('Transcription', error, ctx, choice);
    }
  },
});

async function transcribeSource(
  source: AudioSource,
  model: string,
  args: { language?: string | undefined; prompt?: string | undefined; response_format: TranscriptFormat },
  ctx: ToolContext,
  send: Send,
): Promise<CachedTranscript> {
  // Progress only grows: download bytes, then upload bytes on top.
  const report = byteProgress(ctx);
  let downloaded = 0;
  const opened = await source.open((bytes) => {
    downloaded = bytes;
    report(bytes, undefined, `Downloading ${source.name}: ${formatBytes(bytes)}`);
  });
  try {
    const total = downloaded + opened.size;
    const request = () =>
      transcribe(
        ctx.runtime.service.client,
        {
          model,
          file: {
            filename: opened.filename,
            contentType: opened.contentType,
            size: opened.size,
            stream: () =>
              countingStream(opened.stream(), report, downloaded, total, `Uploading ${source.name}`),
          },
          language: args.language,
          prompt: args.prompt,
          response_format: args.response_format,
        },
        ctx.signal,
      );
    const result = await send(request, (answer) => ({ amount: answer.seconds ?? undefined }));
    const extension = SAVED_EXTENSION[result.format];
    const filePath = extension ? await saveText(result.raw, source.name, extension, ctx) : null;
    return { text: result.text, model, format: result.format, filePath, sourceName: source.name };
  } finally {
    await opened.cleanup();
  }
}

async function saveText(
  text: string,
  sourceName: string,
  extension: string,
  ctx: ToolContext,
): Promise<string> {
  // The stem's own extension must go first: `talk.mp3-transcript` would lose its suffix instead.
  const stem = `${basename(sourceName, extname(sourceName))}-transcript`;
  const { outputDir, workDir } = await ctx.workspace();
  return saveOutputText(text, { outputDir, workDir, stem, extension });
}

/** The audio, the model, and the transcript already made of them with these options, if any. */
async function planOf(args: z.output<z.ZodObject<typeof inputSchema>>, ctx: ToolContext) {
  const source = await audioSource(args, ctx);
  const choice = await chooseTranscriptionModel(args.model, ctx);
  const key = TranscriptCache.key([
    source.key,
    choice.ok ? choice.model : '',
    args.language,
    args.prompt,
    args.response_format,
  ]);
  return { source, choice, key, cached: choice.ok ? await cachedTranscript(ctx.runtime, key) : undefined };
}

/** The billed call of a transcription: `audio` is the key of its source and its options. */
function transcriptionCall(model: string, name: string, audio: string) {
  return {
    kind: 'transcription',
    tool: 'audio_transcribe',
    model,
    text: name,
    inputs: { audio },
  } satisfies BillableCall;
}
