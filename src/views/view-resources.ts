// The views as resources: listed by resources/list and served by resources/read, for a client
// that shows views only (create-server.ts asks). The HTML is loaded on the first read, never at
// start-up: a server that is only started and listed does not parse it.

import type { ReadResourceResult, Resource } from '@modelcontextprotocol/server';
import { VIEW_MIME, VIEWS, type ViewEntry } from './ui-extension.js';

/** The resources/list entries of the views. */
export function viewResources(): Resource[] {
  return VIEWS.map((view) => ({
    uri: view.uri,
    name: view.name,
    title: view.title,
    description: view.description,
    mimeType: VIEW_MIME,
  }));
}

export function isViewUri(uri: string): boolean {
  return VIEWS.some((view) => view.uri === uri);
}

/**
 * A view's resources/read answer. A view plays only files read through the host (resources/read),
 * so its content policy names no origin: it fetches nothing.
 */
export async function readView(uri: string): Promise<ReadResourceResult> {
  const view = VIEWS.find((entry) => entry.uri === uri) as ViewEntry;
  const { viewHtml } = await import('./view-html.js');
  return {
    contents: [
      {
        uri: view.uri,
        mimeType: VIEW_MIME,
        text: await viewHtml(view.name),
        _meta: { ui: { prefersBorder: true } },
      },
    ],
  };
}
