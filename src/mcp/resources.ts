import { dirname, join } from 'node:path';
import type {
  InputRequiredResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceRequest,
  ReadResourceResult,
  Resource,
  ResourceLink,
} from '@modelcontextprotocol/server';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { readSavedFile, SavedFileError } from '../files/read-saved-file.js';
import {
  SAVED_FILE_URI_TEMPLATE,
  savedFileLink,
  savedFileMime,
  savedFileName,
} from '../files/saved-files.js';
import { isViewUri, readView, viewResources } from '../views/view-resources.js';
import { type RequestExtra, RpcError } from './server.js';

/**
 * Resource not found: -32602 with the URI as its data, as MCP 2025-11-25 and later say it (the
 * SDK sends the older -32002 as -32602 too).
 */
const RESOURCE_NOT_FOUND = ProtocolErrorCode.InvalidParams;
/** The newest files a connection lists; older ones stay readable by URI. */
const MAX_LISTED = 500;

interface SavedFile extends Resource {
  path: string;
}

/**
 * The files one connection's tool calls saved: what resources/list shows it. A file is listed
 * only to the connection that made it; it can be read by URI from the client's output directory.
 */
export class SavedFiles {
  private readonly byUri = new Map<string, SavedFile>();

  /** Remembers a saved file and gives the resource_link for the tool's result. */
  add(path: string, mimeType: string, description: string, size: number | undefined): ResourceLink {
    const link = savedFileLink(path, mimeType, description);
    this.byUri.delete(link.uri);
    this.byUri.set(link.uri, {
      uri: link.uri,
      name: link.name,
      mimeType,
      description,
      ...(size !== undefined ? { size } : {}),
      path,
    });
    if (this.byUri.size > MAX_LISTED) this.byUri.delete(this.byUri.keys().next().value as string);
    return link;
  }

  get(uri: string): SavedFile | undefined {
    return this.byUri.get(uri);
  }

  /** Newest first, without the server-side path. */
  list(): Resource[] {
    return [...this.byUri.values()].reverse().map(({ path: _path, ...resource }) => resource);
  }
}

/** Whether this connection's client shows views. */
export interface ViewAccess {
  shown(extra: RequestExtra): boolean;
}

/**
 * resources/list, resources/templates/list and resources/read, for create-server.ts to attach: a
 * client reads the files its tool calls saved through the protocol, wherever it runs. Nothing
 * outside the output directory is ever read, and in it only files named as the tools name theirs
 * (see saved-files.ts). A file not among `files` is looked for in `outputDirFor`'s directory.
 * A client that shows views also finds them here (views/view-resources.ts); no other client does.
 */
export function resourceHandlers(
  files: SavedFiles,
  outputDirFor: (extra: RequestExtra, uri: string) => Promise<string | InputRequiredResult>,
  views: ViewAccess,
) {
  return {
    list: (_request: unknown, extra: RequestExtra): ListResourcesResult => ({
      resources: views.shown(extra) ? [...viewResources(), ...files.list()] : files.list(),
    }),
    templates: (): ListResourceTemplatesResult => ({
      resourceTemplates: [
        {
          uriTemplate: SAVED_FILE_URI_TEMPLATE,
          name: 'saved-file',
          title: 'A file a tool saved',
          description:
            'A file in the output directory (speech, a downloaded video, a transcript), by its file name.',
        },
      ],
    }),
    read: async (
      request: ReadResourceRequest,
      extra: RequestExtra,
    ): Promise<ReadResourceResult | InputRequiredResult> => {
      const { uri } = request.params;
      if (isViewUri(uri) && views.shown(extra)) return readView(uri);
      const name = savedFileName(uri);
      if (name === null) {
        throw notFound(
          `Resource not found: ${uri} (this server's resources are ${SAVED_FILE_URI_TEMPLATE})`,
          uri,
        );
      }
      // A file this connection saved is read where it was saved (the workspace may have moved since).
      const known = files.get(uri);
      const dir = known ? dirname(known.path) : await outputDirFor(extra, uri);
      if (typeof dir !== 'string') return dir;
      const path = known?.path ?? join(dir, name);
      try {
        return { contents: [await readSavedFile(path, dir, uri, known?.mimeType ?? savedFileMime(name))] };
      } catch (error) {
        if (!(error instanceof SavedFileError)) throw error;
        throw error.kind === 'not-found'
          ? notFound(error.message, uri)
          : new RpcError(ProtocolErrorCode.InvalidParams, error.message, { uri });
      }
    },
  };
}

function notFound(message: string, uri: string): RpcError {
  return new RpcError(RESOURCE_NOT_FOUND, message, { uri });
}
