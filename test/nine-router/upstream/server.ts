// The fake upstream providers behind the real gateway. One node:http server answers both the
// requests the TLS proxy hands it (9router's calls to api.tavily.com, api.x.ai, api.openai.com,
// ...; the Host header says which) and requests on its own loopback port (OpenAI-compatible
// provider nodes, self-hosted speech and transcription, finished video files, and the control
// routes the tests use: the journal of what reached an upstream).
//
// Faults are asked for in the request itself, so tests running at once never disturb each other:
// `fault-<status>` in a query, URL, prompt or text makes the provider answer that status,
// `retry-after-<s>` adds a Retry-After header to it, `delay-<ms>` waits before answering.
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { faultsOf } from './faults.js';
import { fetchRoutes } from './fetch.js';
import { readMultipart } from './multipart.js';
import { openAiRoutes } from './openai.js';
import { searchRoutes } from './search.js';
import type { JournalEntry, Route, UpstreamContext, UpstreamRequest } from './types.js';
import { videoRoutes } from './video.js';

const JOURNAL_LIMIT = 5000;
const BODY_KEPT = 64 * 1024;

export interface Upstream {
  server: Server;
  url: string;
  journal: JournalEntry[];
  close(): Promise<void>;
}

const routes: Route[] = [...searchRoutes, ...fetchRoutes, ...videoRoutes, ...openAiRoutes];

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(raw: Buffer, type: string | undefined): Record<string, unknown> | undefined {
  if (!raw.length || (!/json/i.test(type ?? '') && raw[0] !== 0x7b)) return undefined;
  try {
    const value = JSON.parse(raw.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function journalBody(req: UpstreamRequest): unknown {
  if (req.json) return req.json;
  const fields = readMultipart(req.raw, req.headers['content-type']);
  if (fields) return fields;
  return req.raw.subarray(0, BODY_KEPT).toString('utf8');
}

function control(req: UpstreamRequest, res: ServerResponse, journal: JournalEntry[]): boolean {
  if (req.host !== 'local' || !req.path.startsWith('/__')) return false;
  if (req.path === '/__journal') {
    const since = Number(req.query.get('since') ?? 0);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(journal.filter((e) => e.seq > since)));
    return true;
  }
  if (req.path === '/__seq') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ seq: journal.at(-1)?.seq ?? 0 }));
    return true;
  }
  res.writeHead(404).end();
  return true;
}

export async function startUpstream(): Promise<Upstream> {
  const journal: JournalEntry[] = [];
  let seq = 0;
  const ctx: UpstreamContext = { localUrl: '' };

  const server = createServer(async (incoming, res) => {
    const url = new URL(incoming.url ?? '/', 'http://upstream');
    const hostHeader = (incoming.headers.host ?? '').replace(/:\d+$/, '');
    const host = hostHeader === '127.0.0.1' || hostHeader === 'localhost' ? 'local' : hostHeader;
    const raw = await readBody(incoming);
    const req: UpstreamRequest = {
      host,
      method: incoming.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: incoming.headers,
      raw,
      json: parseJson(raw, incoming.headers['content-type']),
      // The provider's key is read too: an account whose key carries a marker (fault-401) is one
      // the fake provider refuses, whatever is asked of it.
      text: `${decodeURIComponent(url.pathname)} ${decodeURIComponent(url.search)} ${raw.subarray(0, BODY_KEPT).toString('latin1')} ${keyOf(incoming.headers)}`,
    };
    if (control(req, res, journal)) return;
    const entry: JournalEntry = {
      seq: ++seq,
      host,
      method: req.method,
      path: req.path,
      query: Object.fromEntries(url.searchParams),
      headers: incoming.headers,
      body: journalBody(req),
      bytes: raw.length,
      status: 0,
    };
    if (!req.path.startsWith('/files/')) {
      journal.push(entry);
      if (journal.length > JOURNAL_LIMIT) journal.splice(0, journal.length - JOURNAL_LIMIT);
    }
    res.on('finish', () => {
      entry.status = res.statusCode;
    });
    const faults = faultsOf(req.text);
    if (faults.unreachable) {
      incoming.socket.destroy();
      return;
    }
    if (faults.delayMs) await new Promise((r) => setTimeout(r, faults.delayMs));
    try {
      for (const route of routes) if (await route(req, res, ctx)) return;
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: `fake upstream: no route for ${host} ${req.method} ${req.path}` },
        }),
      );
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake upstream failed: ${(error as Error).message}` } }));
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  ctx.localUrl = `http://127.0.0.1:${port}`;
  return {
    server,
    url: ctx.localUrl,
    journal,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider key a request carries in its headers (Authorization, x-api-key, x-subscription-token…). */
function keyOf(headers: IncomingHttpHeaders): string {
  return ['authorization', 'x-api-key', 'x-subscription-token', 'api-key']
    .map((name) => String(headers[name] ?? ''))
    .join(' ');
}
