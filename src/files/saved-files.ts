// How a saved file is named to clients: one resource URI per file, the same on every transport,
// which `resources/read` answers with the file's bytes. A `file://` link would name a path on the
// server's disk, which a client on another machine cannot open; this one goes through the
// protocol, wherever the client is. The URI holds the file's name only: a file is looked up in the
// output directory of the client that asks, never anywhere else.

import { basename, extname } from 'node:path';
import type { ResourceLink } from '@modelcontextprotocol/server';
import { mediaType, mediaTypeFor } from './media-types.js';

const PREFIX = 'gateway-tools://output/';

/** For resources/templates/list: any saved file, by its name. */
export const SAVED_FILE_URI_TEMPLATE = `${PREFIX}{name}`;

/**
 * The names the output directory's files get (output-files.ts, publish): a stem, a timestamp,
 * a counter on collision, an extension. Nothing else in the directory is ever served.
 */
const SAVED_NAME = /^[a-z0-9-]{1,48}-\d{8}-\d{6}(?:-\d{1,3})?\.[a-z0-9]{1,8}$/;

export function savedFileUri(path: string): string {
  return `${PREFIX}${encodeURIComponent(basename(path))}`;
}

/** The file name a saved-file URI stands for, or null when the URI is not one. */
export function savedFileName(uri: string): string | null {
  if (!uri.startsWith(PREFIX)) return null;
  let name: string;
  try {
    name = decodeURIComponent(uri.slice(PREFIX.length));
  } catch {
    return null;
  }
  return SAVED_NAME.test(name) ? name : null;
}

/** The resource_link content item a tool result carries for a file it saved. */
export function savedFileLink(path: string, mimeType: string, description: string): ResourceLink {
  return { type: 'resource_link', uri: savedFileUri(path), name: basename(path), mimeType, description };
}

/** A saved file's type by its extension (the tools chose the extension by the type). */
export function savedFileMime(name: string): string {
  return mediaTypeFor(extname(name))?.mime ?? 'application/octet-stream';
}

/** Read as text in resources/read (the rest are sent as base64 blobs). */
export function isTextMime(mimeType: string): boolean {
  return mimeType.startsWith('text/') || mediaType(mimeType)?.kind === 'text';
}
