/**
 * The one table of media types: for each type its registered MIME type and the other names
 * senders give it, its kind, the extension a saved file of it gets, and the extensions that name
 * it on input. Speech and video files are named from it, an upload's file name and type come
 * from it, a saved file is served with the type it gives, and the byte sniffers (audio-sources.ts,
 * files.ts) can answer only with a type it holds (MimeOf).
 *
 * It lives with the files because it names files. The gateway client does not read it: it hands
 * on what the service declared (a Content-Type, a format), and the tool that saves the bytes names
 * them here.
 */

export type MediaKind = 'audio' | 'video' | 'image' | 'text';

export interface MediaType {
  /** The registered name: what results and resources say. */
  readonly mime: string;
  readonly kind: MediaKind;
  /** The extension a saved file of this type gets. */
  readonly extension: string;
  /** The extensions that name this type on input, the saved one first. */
  readonly extensions: readonly string[];
  /** Other names senders use for it (9router labels mp3 `audio/mp3`). */
  readonly aliases?: readonly string[];
}

/**
 * Where two types share an extension, the one saved with it wins, then the first listed: `.mp4`
 * and `.webm` alone name videos (audio/mp4 is saved as `.m4a`), `.mpeg` an MPEG program stream.
 */
export const MEDIA_TYPES = [
  { mime: 'video/mp4', kind: 'video', extension: 'mp4', extensions: ['mp4'] },
  { mime: 'video/webm', kind: 'video', extension: 'webm', extensions: ['webm'] },
  { mime: 'video/quicktime', kind: 'video', extension: 'mov', extensions: ['mov'] },
  { mime: 'video/x-matroska', kind: 'video', extension: 'mkv', extensions: ['mkv'] },
  { mime: 'video/x-msvideo', kind: 'video', extension: 'avi', extensions: ['avi'] },
  { mime: 'video/mpeg', kind: 'video', extension: 'mpg', extensions: ['mpg', 'mpeg'] },
  { mime: 'video/mp2t', kind: 'video', extension: 'ts', extensions: ['ts'] },
  {
    mime: 'audio/mpeg',
    kind: 'audio',
    extension: 'mp3',
    extensions: ['mp3', 'mpga', 'mpeg'],
    aliases: ['audio/mp3', 'audio/mpeg3'],
  },
  {
    mime: 'audio/wav',
    kind: 'audio',
    extension: 'wav',
    extensions: ['wav'],
    aliases: ['audio/x-wav', 'audio/wave', 'audio/vnd.wave'],
  },
  // Ogg carries Vorbis or Opus, so a file is .ogg unless opus is what was asked for (savedExtension).
  // `audio/opus` names Opus packets on the wire; as a file they are Ogg.
  {
    mime: 'audio/ogg',
    kind: 'audio',
    extension: 'ogg',
    extensions: ['ogg', 'oga', 'opus'],
    aliases: ['audio/opus'],
  },
  { mime: 'audio/flac', kind: 'audio', extension: 'flac', extensions: ['flac'], aliases: ['audio/x-flac'] },
  { mime: 'audio/mp4', kind: 'audio', extension: 'm4a', extensions: ['m4a', 'mp4'] },
  { mime: 'audio/aac', kind: 'audio', extension: 'aac', extensions: ['aac'], aliases: ['audio/x-aac'] },
  { mime: 'audio/webm', kind: 'audio', extension: 'webm', extensions: ['webm'] },
  { mime: 'audio/pcm', kind: 'audio', extension: 'pcm', extensions: ['pcm'], aliases: ['audio/l16'] },
  {
    mime: 'audio/aiff',
    kind: 'audio',
    extension: 'aiff',
    extensions: ['aiff', 'aif'],
    aliases: ['audio/x-aiff'],
  },
  { mime: 'audio/x-caf', kind: 'audio', extension: 'caf', extensions: ['caf'] },
  { mime: 'audio/amr', kind: 'audio', extension: 'amr', extensions: ['amr'] },
  { mime: 'audio/x-ms-wma', kind: 'audio', extension: 'wma', extensions: ['wma'] },
  { mime: 'image/png', kind: 'image', extension: 'png', extensions: ['png'] },
  { mime: 'image/jpeg', kind: 'image', extension: 'jpg', extensions: ['jpg', 'jpeg'] },
  { mime: 'image/gif', kind: 'image', extension: 'gif', extensions: ['gif'] },
  { mime: 'image/webp', kind: 'image', extension: 'webp', extensions: ['webp'] },
  // Transcripts: read as text in resources/read.
  { mime: 'text/plain', kind: 'text', extension: 'txt', extensions: ['txt'] },
  { mime: 'application/json', kind: 'text', extension: 'json', extensions: ['json'] },
  { mime: 'application/x-subrip', kind: 'text', extension: 'srt', extensions: ['srt'] },
  { mime: 'text/vtt', kind: 'text', extension: 'vtt', extensions: ['vtt'] },
] as const satisfies readonly MediaType[];

/** A MIME type the table holds, of the given kind: what a sniffer may answer. */
export type MimeOf<K extends MediaKind> = Extract<(typeof MEDIA_TYPES)[number], { kind: K }>['mime'];

const TYPES: readonly MediaType[] = MEDIA_TYPES;

const BY_NAME = new Map<string, MediaType>(
  TYPES.flatMap((type) => [type.mime, ...(type.aliases ?? [])].map((name) => [name, type] as const)),
);

/** The type a MIME name stands for, registered name or alias (case and parameters ignored). */
export function mediaType(contentType: string | null | undefined): MediaType | undefined {
  return BY_NAME.get(mimeEssence(contentType));
}

/** A Content-Type without its parameters, lowercase: `Audio/Ogg; codecs=opus` is `audio/ogg`. */
export function mimeEssence(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The type an extension (with or without its dot) names, among `kind` when given: a type saved
 * with that extension first, then one that takes it on input.
 */
export function mediaTypeFor(extension: string, kind?: MediaKind): MediaType | undefined {
  const ext = extension.replace(/^\./, '').toLowerCase();
  const types = kind ? mediaTypesOf(kind) : TYPES;
  return types.find((type) => type.extension === ext) ?? types.find((type) => type.extensions.includes(ext));
}

/**
 * The extension a file of `type` is saved with: `preferred` (the format asked for) when it names
 * this type too, so Ogg asked for as opus is `.opus`; the type's own extension otherwise.
 */
export function savedExtension(type: MediaType, preferred?: string): string {
  return preferred !== undefined && type.extensions.includes(preferred) ? preferred : type.extension;
}

/** The types of one kind, in the table's order. */
export function mediaTypesOf(kind: MediaKind): readonly MediaType[] {
  return TYPES.filter((type) => type.kind === kind);
}
