import type { CancelSignal } from '../cancel.js';
import type { ServiceClient } from './client.js';
import { asObject, asString } from './normalize.js';

export type PageFormat = 'markdown' | 'text' | 'html';

export interface FetchRequest {
  model: string;
  url: string;
  format?: PageFormat;
  /** Plain truncation from the start; 0 or absent = the whole page. */
  max_characters?: number;
}

export interface FetchedPage {
  provider: string;
  url: string;
  title: string | null;
  format: PageFormat;
  text: string;
}

export async function fetchPage(
  client: ServiceClient,
  req: FetchRequest,
  signal?: CancelSignal,
): Promise<FetchedPage> {
  const { data } = await client.json<unknown>({
    method: 'POST',
    path: '/v1/web/fetch',
    json: req,
    signal,
    retry: 'safe',
  });
  const body = asObject(data);
  const content = body.content;
  // Tolerate `content` as an object {format, text, length} or as a bare string.
  const text = typeof content === 'string' ? content : (asString(asObject(content).text) ?? '');
  const format = asString(asObject(content).format);
  return {
    provider: asString(body.provider) ?? req.model,
    url: asString(body.url) ?? req.url,
    title: asString(body.title)?.trim() || null,
    format:
      format === 'text' || format === 'html' || format === 'markdown' ? format : (req.format ?? 'markdown'),
    text,
  };
}
