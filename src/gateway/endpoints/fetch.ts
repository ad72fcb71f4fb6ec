import type { ServiceClient } from '../client.js';
import { asObject, asString } from '../normalize.js';

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
  /** The address the gateway says it read, when not the one asked for (after a redirect); else null. */
  final_url: string | null;
  title: string | null;
  format: PageFormat;
  text: string;
}

export async function fetchPage(
  client: ServiceClient,
  req: FetchRequest,
  signal?: AbortSignal,
): Promise<FetchedPage> {
  const { data } = await client.json<unknown>({
    method: 'POST',
    path: '/v1/web/fetch',
    json: req,
    signal,
    // A search or fetch is billed by its provider: sent again only when it surely was not taken.
    retry: 'billed',
  });
  const body = asObject(data);
  const content = body.content;
  // Tolerate `content` as an object {format, text, length} or as a bare string.
  const raw = typeof content === 'string' ? content : (asString(asObject(content).text) ?? '');
  const text = withoutReaderHeader(raw);
  const format = asString(asObject(content).format);
  const reported = asString(body.url)?.trim() || null;
  return {
    provider: asString(body.provider) ?? req.model,
    url: reported ?? req.url,
    final_url: reported && reported !== req.url ? reported : null,
    title: asString(body.title)?.trim() || null,
    format:
      format === 'text' || format === 'html' || format === 'markdown' ? format : (req.format ?? 'markdown'),
    text,
  };
}

/**
 * Jina's reader answers plain text that opens with header lines (`Title: ...`, `URL Source: ...`,
 * sometimes `Published Time: ...`, then `Markdown Content:`) and the gateway passes them on as
 * page text. The title and URL are fields of their own, so the header only repeats them.
 */
const READER_HEADER =
  /^(?:Title: [^\n]*\n\n)?URL Source: [^\n]*\n\n(?:[A-Z][A-Za-z ]{0,30}: [^\n]*\n\n)*Markdown Content:\n/;

function withoutReaderHeader(text: string): string {
  return text.startsWith('Title: ') || text.startsWith('URL Source: ')
    ? text.replace(READER_HEADER, '')
    : text;
}
