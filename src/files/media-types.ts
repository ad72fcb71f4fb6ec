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
}

/**
 * Each kind's types: the MIME type, then the extensions that name it on input, the one a saved
 * file gets first. Where two types share an extension, the one saved with it wins, then the first
 * listed: `.mp4` and `.webm` alone name videos (audio/mp4 is saved as `.m4a`), `.mpeg` an MPEG
 * program stream.
 */
const EXTENSIONS = {
  video: {
    'video/mp4': ['mp4'],
    'video/webm': ['webm'],
    'video/quicktime': ['mov'],
    'video/x-matroska': ['mkv'],
    'video/x-msvideo': ['avi'],
    'video/mpeg': ['mpg', 'mpeg'],
    'video/mp2t': ['ts'],
  },
  audio: {
    'audio/mpeg': ['mp3', 'mpga', 'mpeg'],
    'audio/wav': ['wav'],
    // Ogg carries Vorbis or Opus, so a file is .ogg unless opus is what was asked for (savedExtension).
    'audio/ogg': ['ogg', 'oga', 'opus'],
    'audio/flac': ['flac'],
    'audio/mp4': ['m4a', 'mp4'],
    'audio/aac': ['aac'],
    'audio/webm': ['webm'],
    'audio/pcm': ['pcm'],
    'audio/aiff': ['aiff', 'aif'],
    'audio/x-caf': ['caf'],
    'audio/amr': ['amr'],
    'audio/x-ms-wma': ['wma'],
  },
  image: {
    'image/png': ['png'],
    'image/jpeg': ['jpg', 'jpeg'],
    'image/gif': ['gif'],
    'image/webp': ['webp'],
  },
  // Transcripts: read as text in resources/read.
  text: {
    'text/plain': ['txt'],
    'application/json': ['json'],
    'application/x-subrip': ['srt'],
    'text/vtt': ['vtt'],
  },
} as const satisfies Record<MediaKind, Record<string, readonly [string, ...string[]]>>;

/** Other names senders give a type (9router labels mp3 `audio/mp3`), and the type each means. */
const ALIASES: Readonly<Record<string, MimeOf<'audio'>>> = {
  'audio/mp3': 'audio/mpeg',
  'audio/mpeg3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  // `audio/opus` names Opus packets on the wire; as a file they are Ogg.
  'audio/opus': 'audio/ogg',
  'audio/x-flac': 'audio/flac',
  'audio/x-aac': 'audio/aac',
  'audio/l16': 'audio/pcm',
  'audio/x-aiff': 'audio/aiff',
};

/** A MIME type the table holds, of the given kind: what a sniffer may answer. */
export type MimeOf<K extends MediaKind> = { [P in K]: keyof (typeof EXTENSIONS)[P] }[K];

/** Every type, kind by kind in the table's order. */
export const MEDIA_TYPES: readonly MediaType[] = Object.entries(EXTENSIONS).flatMap(([kind, types]) =>
  Object.entries(types).map(([mime, extensions]) => ({
    mime,
    kind: kind as MediaKind,
    extension: extensions[0],
    extensions,
  })),
);

const BY_NAME = new Map<string, MediaType>(MEDIA_TYPES.map((type) => [type.mime, type]));
for (const [alias, mime] of Object.entries(ALIASES)) BY_NAME.set(alias, BY_NAME.get(mime)!);

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
  const types = kind ? mediaTypesOf(kind) : MEDIA_TYPES;
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
  return MEDIA_TYPES.filter((type) => type.kind === kind);
}
