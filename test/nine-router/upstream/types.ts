import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

/** One request that reached a fake upstream provider, as the tests read it from the journal. */
export interface JournalEntry {
  seq: number;
  /** The host 9router meant to reach (`api.tavily.com`), or `local` for the direct listener. */
  host: string;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON when it is JSON, else as text (cut at 64 KiB); multipart fields by name. */
  body: unknown;
  bytes: number;
  /** What the fake answered. */
  status: number;
}

export interface UpstreamRequest {
  host: string;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** The body as JSON, when it is JSON. */
  json: Record<string, unknown> | undefined;
  /** Every text the request carries (path, query and body), where fault markers are looked for. */
  text: string;
}

/** Answers a request and returns true, or returns false when the request is not its own. */
export type Route = (
  req: UpstreamRequest,
  res: ServerResponse,
  ctx: UpstreamContext,
) => Promise<boolean> | boolean;

export interface UpstreamContext {
  /** `http://127.0.0.1:<port>`: where the fake serves files (finished videos) directly. */
  localUrl: string;
}
