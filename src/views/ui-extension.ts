// The MCP Apps extension (`io.modelcontextprotocol/ui`) as this server speaks it: which clients
// get views, which tool shows which view, and the `_meta` that says so. A client that does not
// declare the extension, with the HTML profile, sees none of it: its tools/list, results and
// resources are the same bytes as without views. The names are the extension's own (the package
// @modelcontextprotocol/ext-apps exports them; test/views checks they still match), written here
// so that start-up does not load the package's server helpers.

import type { ClientCapabilities } from '@modelcontextprotocol/server';

export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The MIME type of a view: HTML in the MCP Apps profile. */
export const VIEW_MIME = 'text/html;profile=mcp-app';
/** The flat key older hosts read a tool's view from, beside `_meta.ui.resourceUri`. */
export const LEGACY_VIEW_KEY = 'ui/resourceUri';

export interface ViewEntry {
  uri: string;
  name: string;
  title: string;
  description: string;
  /** The tools whose results the view shows: the model's, which the view does not call. */
  tools: readonly string[];
}

export const VIDEO_VIEW: ViewEntry = {
  uri: 'ui://gateway-tools/video.html',
  name: 'video-view',
  title: 'Video job',
  description: 'A video job: its prompt, model and progress while it runs, then a player and a Save button.',
  tools: ['video_generate', 'video_edit', 'video_extend', 'video_status'],
};

export const AUDIO_VIEW: ViewEntry = {
  uri: 'ui://gateway-tools/audio.html',
  name: 'audio-view',
  title: 'Speech',
  description: 'A player for generated speech, with its text, model, voice and file name.',
  tools: ['audio_speech'],
};

export const VIEWS: readonly ViewEntry[] = [VIDEO_VIEW, AUDIO_VIEW];

/** True when the client declares the extension with the HTML profile (capabilities.extensions). */
export function showsViews(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  const ui = extensions?.[UI_EXTENSION] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(VIEW_MIME);
}

/** The view a tool (by its base name) shows its results in, if any. */
export function viewOf(toolName: string): ViewEntry | undefined {
  return VIEWS.find((view) => view.tools.includes(toolName));
}

/**
 * A tool's `_meta` for a client with views: the view's URI under both keys hosts read, and
 * visibility to the model alone: a host refuses the call from a view (the billed ones above all).
 */
export function viewToolMeta(view: ViewEntry): Record<string, unknown> {
  return { ui: { resourceUri: view.uri, visibility: ['model'] }, [LEGACY_VIEW_KEY]: view.uri };
}

/**
 * A tool only a view calls (visibility `app`): listed to a client that shows views, hidden by it
 * from the model, so a view's checks on a job stay out of the model's context. It runs a tool of
 * the server's own, free, under another name.
 */
export interface AppTool {
  name: string;
  /** The tool it runs (a base name). */
  runs: string;
  title: string;
  description: string;
  view: ViewEntry;
}

export const APP_TOOLS: readonly AppTool[] = [
  {
    name: 'video_follow',
    runs: 'video_status',
    title: 'Follow a video job (for the video view)',
    description:
      'What the video view calls to follow the job it shows and to save its file: video_status, for the view alone. It is free and starts nothing.',
    view: VIDEO_VIEW,
  },
];

/** An app tool's `_meta`: its view, and visibility to the view alone. */
export function appToolMeta(tool: AppTool): Record<string, unknown> {
  return { ui: { resourceUri: tool.view.uri, visibility: ['app'] } };
}
