import { rm } from 'node:fs/promises';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { modelIdSchema } from '../../config/model-ids.js';
import { formatBytes } from '../../files/files.js';
import { prepareOutputDir, saveStream } from '../../files/output-files.js';
import { notAudio, type SpeechFormat, speechAudio } from '../../gateway/endpoints/audio.js';
import { excerpt, formatCount } from '../../lib/text.js';
import { UserError } from '../../lib/user-error.js';
import { ALLOW_DUPLICATE, type BillableCall, billed, type Send } from '../billing.js';
import { ANNOTATIONS, defineTool, type ToolContext } from '../define.js';
import { nextStep, success } from '../results.js';
import { audioFailure, chooseSpeechModel, type SpeechChoice } from './audio-models.js';
import { earlierSpeech, type SpeechFile } from './speech-again.js';
import { declaredAudio, deliveredAudio, peekHead } from './speech-format.js';
import type { SpeechId } from './speech-ids.js';

export const MAX_SPEECH_TEXT = 4096;
/**
 * Audio up to this size can also come back inline (return_audio); bigger stays a file only. As
 * base64, with the rest of the result, it stays within the result budget (RESULT_BUDGET).
 */
export const MAX_INLINE_AUDIO_BYTES = 512 * 1024;
/** Four thousand characters of speech are minutes of audio; anything past this is not speech. */
const MAX_SPEECH_FILE_BYTES = 200 * 1024 * 1024;
const FORMATS = ['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'] as const;

const inputSchema = {
  text: z
    .string()
    .refine((t) => t.trim().length > 0, 'text must not be empty')
    .refine(
      (t) => t.length <= MAX_SPEECH_TEXT,
      `text must be at most ${MAX_SPEECH_TEXT} characters; split longer text into several calls`,
    )
    .describe(`At most ${formatCount(MAX_SPEECH_TEXT)} characters`),
  model: modelIdSchema({ field: 'model', example: 'openai/tts-1 or openai/tts-1/alloy', max: 200 })
    .optional()
    .describe('provider/model (+ `voice`), provider/model/voice, or openai/<voice> (default model)'),
  voice: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9._:@+-]{1,100}$/,
      'voice must be a voice name such as alloy or en-US-AriaNeural (no /)',
    )
    .optional()
    .describe('e.g. alloy'),
  // Some providers send mp3 whatever is asked; the result then says so.
  format: z.enum(FORMATS).default('mp3'),
  return_audio: z
    .boolean()
    .default(false)
    .describe(`Also inline the audio (≤ ${formatBytes(MAX_INLINE_AUDIO_BYTES)})`),
  allow_duplicate: ALLOW_DUPLICATE,
};

const outputSchema = {
  file_path: z.string(),
  mime_type: z.string(),
  bytes: z.number().int(),
  /** The id sent: provider/model/voice, or provider/model when the provider chose the voice. */
  model: z.string(),
  /** null: the provider's own default voice. */
  voice: z.string().nullable(),
  /** What was delivered (the file's extension), and what was asked for. */
  format: z.string(),
  requested_format: z.string(),
  next: nextStep,
};

export const audioSpeech = defineTool({
  name: 'audio_speech',
  usesFiles: true,
  group: 'audio',
  title: 'Text to speech',
  action: 'Speech',
  description:
    'Turn text into speech, saved under the output directory; returns the file path. Billed per call: ' +
    'call once per text. Models: list_models speech.',
  inputSchema,
  outputSchema,
  annotations: ANNOTATIONS.create,
  confirm: {
    kind: 'speech',
    async call(args, ctx) {
      const choice = await chooseSpeechModel(args.model, args.voice, ctx);
      if (!choice.ok) return undefined;
      return {
        call: speechCall(args, choice.id),
        action: 'Turn text into speech',
        details: [
          ['Text', excerpt(args.text)],
          ['Format', args.format],
        ],
      };
    },
  },
  async run(args, ctx) {
    let choice: SpeechChoice | undefined;
    try {
      choice = await chooseSpeechModel(args.model, args.voice, ctx);
      if (!choice.ok) throw new UserError(choice.message);
      const chosen = choice;
      const call = speechCall(args, chosen.id);
      const made = (saved: SpeechFile, note = '') => resultOf(saved, chosen, args, note, ctx);
      const makeSpeech = async (send: Send) =>
        made(await synthesize(chosen, args.text, args.format, args.return_audio, ctx, send));
      return await billed(ctx, call, makeSpeech, async (earlier) => {
        // The same speech made earlier: its file, while it is there; else it is made again.
        const again = await earlierSpeech(earlier, args.return_audio ? MAX_INLINE_AUDIO_BYTES : null, ctx);
        if (again) return made(again, again.note);
        return billed(ctx, { ...call, allowDuplicate: true }, makeSpeech);
      });
    } catch (error) {
      // Adds what only this call knows (it was cancelled; its model went unchecked), else rethrows.
      return audioFailure('Speech', error, ctx, choice);
    }
  },
});

/** The billed call for the speech of `args.text` with the speech model chosen. */
function speechCall(args: z.output<z.ZodObject<typeof inputSchema>>, model: string) {
  return {
    kind: 'speech',
    tool: 'audio_speech',
    model,
    text: args.text,
    options: { format: args.format },
    expected: args.text.length,
    allowDuplicate: args.allow_duplicate,
  } satisfies BillableCall;
}

/** The result for a speech file, made now or (with `note` saying so) by an identical earlier call. */
function resultOf(
  saved: SpeechFile,
  choice: SpeechId & { notes: readonly string[] },
  args: { format: string; return_audio: boolean },
  note: string,
  ctx: ToolContext,
): CallToolResult {
  const structured = {
    file_path: saved.path,
    mime_type: saved.mimeType,
    bytes: saved.bytes,
    model: choice.id,
    voice: choice.voice,
    format: saved.extension,
    requested_format: args.format,
  };
  const lines = [
    `Saved speech to ${saved.path} (${saved.mimeType}, ${formatBytes(saved.bytes)}, model ${choice.id}).`,
    ...choice.notes,
  ];
  if (saved.extension !== args.format) {
    lines.push(
      `Asked for ${args.format}, but the gateway sent ${saved.extension}: saved as .${saved.extension}; ` +
        `no ${args.format} was delivered.`,
    );
  }
  const extra: CallToolResult['content'] = [
    ctx.savedFile(saved.path, saved.mimeType, `Speech by ${choice.id}`, saved.bytes),
  ];
  let inline = '';
  if (args.return_audio && saved.inline) {
    extra.push({ type: 'audio', data: saved.inline.toString('base64'), mimeType: saved.mimeType });
    inline = 'The audio is also attached inline.';
  } else if (args.return_audio) {
    inline =
      `Not attached inline: ${formatBytes(saved.bytes)} is over the ${formatBytes(MAX_INLINE_AUDIO_BYTES)} ` +
      'inline limit; use the file.';
  }
  if (inline) lines.push(inline);
  const next = [note, inline].filter(Boolean).join(' ');
  if (note) lines.push(note);
  return success(lines.join(' '), next ? { ...structured, next } : structured, extra);
}

/**
 * Sends the text and streams the audio into a new file in the output directory, named after what
 * the first bytes show was delivered. With `keepInline`, audio up to the inline limit is also kept
 * in memory as it streams: the file is never read back by name, so nothing swapped in under that
 * name can end up in the result.
 */
async function synthesize(
  choice: SpeechId,
  text: string,
  format: SpeechFormat,
  keepInline: boolean,
  ctx: ToolContext,
  send: Send,
): Promise<SpeechFile> {
  const { outputDir, workDir } = await ctx.workspace();
  // Speech is billed when the gateway answers: a directory that cannot take the file is found
  // before the request is sent, not after.
  await prepareOutputDir(outputDir, workDir);
  // The request and the saving of its answer are one send: the file is what the ledger keeps.
  return send(
    () => speak(choice, text, format, keepInline, ctx, { outputDir, workDir }),
    (saved) => ({ amount: text.length, file: saved.path }),
  );
}

async function speak(
  choice: SpeechId,
  text: string,
  format: SpeechFormat,
  keepInline: boolean,
  ctx: ToolContext,
  { outputDir, workDir }: { outputDir: string; workDir: string | undefined },
): Promise<SpeechFile> {
  const { client } = ctx.runtime.service;
  const audio = await speechAudio(client, { model: choice.id, input: text }, format, ctx.signal);
  const { head, body } = await peekHead(audio.body);
  const delivered = deliveredAudio(head, declaredAudio(audio, format), format);
  const target = {
    outputDir,
    workDir,
    stem: `speech-${fileStem(choice)}`,
    extension: delivered.extension,
  };
  const kept: Buffer[] = [];
  let keptBytes = 0;
  async function* tee(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    for await (const chunk of source) {
      keptBytes += chunk.length;
      if (keepInline && keptBytes <= MAX_INLINE_AUDIO_BYTES) kept.push(Buffer.from(chunk));
      yield chunk;
    }
  }
  const saved = await saveStream(tee(body), target, MAX_SPEECH_FILE_BYTES, ctx.signal).catch((error) => {
    throw error instanceof UserError && !ctx.signal.aborted
      ? new UserError(
          `The gateway produced the speech (it is billed), but it was not saved: ${error.message}`,
        )
      : error;
  });
  if (saved.bytes === 0) {
    await rm(saved.path, { force: true });
    throw notAudio('an empty body');
  }
  const inline = keepInline && saved.bytes <= MAX_INLINE_AUDIO_BYTES ? Buffer.concat(kept) : null;
  return { ...saved, ...delivered, inline };
}

/** The voice, else the model, for the file name (dots would read as an extension and be cut). */
function fileStem(choice: SpeechId): string {
  return (choice.voice ?? choice.model.slice(choice.model.lastIndexOf('/') + 1)).replace(/\./g, '-');
}
