// One request's way through the service: match the route, count it, read the body, record it,
// then either the injected fault or the normal answer (auth first, then the route's handler).
// Faults come before auth on purpose, so counters and faults behave the same on every route.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type FaultQueue, replacementReply, truncatedJsonReply } from './faults.js';
import { errorReply, type Reply, RequestError, sendReply, sleep } from './http-util.js';
import { readRequestBody, recordedBody } from './request-body.js';
import { matchRoute, type RouteContext, type RouteHandler } from './router.js';
import { fetchPage } from './routes-fetch.js';
import { listChatModels, listModelsOfKind, modelInfo } from './routes-models.js';
import { createResponse } from './routes-responses.js';
import { search } from './routes-search.js';
import { listVoices, speech } from './routes-speech.js';
import { transcribe } from './routes-transcriptions.js';
import { pollVideo, redirectToVideoFile, submitVideo } from './routes-videos.js';
import type { ServiceState } from './state.js';
import type { Fault, RecordedRequest, RouteName } from './types.js';
import { videoFileReply } from './video-files.js';

const MAX_RECORDED_REQUESTS = 1000;
/** Responses the service itself cut off (reset faults): not the client giving up. */
const endedByService = new WeakSet<ServerResponse>();

export interface ServiceCore {
  state: ServiceState;
  faults: FaultQueue;
  counters: Record<RouteName, number>;
  /** Requests the client gave up on (closed the connection) before the answer was complete. */
  abandoned: Record<RouteName, number>;
  requests: RecordedRequest[];
  apiKey: string;
  /** Aborted by close(), so pending delays and streams stop at once. */
  closing: AbortSignal;
}

const HANDLERS: Record<RouteName, RouteHandler> = {
  search,
  fetch: fetchPage,
  'videos.generations': submitVideo('generations'),
  'videos.edits': submitVideo('edits'),
  'videos.extensions': submitVideo('extensions'),
  'videos.poll': pollVideo,
  speech,
  transcriptions: transcribe,
  voices: listVoices,
  responses: createResponse,
  models: listChatModels,
  'models.kind': listModelsOfKind,
  'models.info': modelInfo,
  health: () => ({ kind: 'json', status: 200, body: { ok: true } }),
  'files.video': (context) => videoFileReply(context.query),
  'files.redirect': redirectToVideoFile,
};

/**
 * Routes anyone may call without a key: the health check, video files (CDN URLs) and, as in
 * 9router, the model lists (a wrong key is not even looked at there).
 */
const PUBLIC_ROUTES = new Set<RouteName>([
  'health',
  'files.video',
  'files.redirect',
  'models',
  'models.kind',
  'models.info',
]);

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * 9router's answer to a missing or wrong key; neither message ever contains the key. (Its
 * middleware's string form, `{"error":"API key required for remote API access"}`, only reaches
 * remote callers: tests ask for it with an `errorAsString` fault.)
 */
function authFailure(headers: Record<string, string | undefined>, apiKey: string): Reply | null {
  const authorization = headers.authorization?.trim() ?? '';
  const headerKey = headers['x-api-key']?.trim() ?? '';
  // The token after "Bearer", or whatever credentials another scheme carried.
  const credentials = authorization.replace(/^Bearer\b/i, '').trim();
  if (credentials === apiKey || headerKey === apiKey) return null;
  const missing = credentials === '' && headerKey === '';
  return errorReply(401, {
    message: missing ? 'Missing API key' : 'Invalid API key',
    type: 'authentication_error',
    code: 'invalid_api_key',
  });
}

async function normalReply(core: ServiceCore, context: RouteContext): Promise<Reply> {
  if (!PUBLIC_ROUTES.has(context.route)) {
    const failure = authFailure(context.headers, core.apiKey);
    if (failure) return failure;
  }
  try {
    return await HANDLERS[context.route](context);
  } catch (error) {
    if (error instanceof RequestError)
      return errorReply(error.status, { ...error.shape, message: error.message });
    throw error;
  }
}

async function respondWithFault(
  req: IncomingMessage,
  res: ServerResponse,
  fault: Fault,
  normal: () => Promise<Reply>,
  signal: AbortSignal,
): Promise<void> {
  if (fault.delayMs && !(await sleep(fault.delayMs, signal))) return;
  if (fault.reset) {
    // An RST, not a polite FIN: the client sees a connection reset with no response at all.
    endedByService.add(res);
    req.socket.resetAndDestroy();
    return;
  }
  // Leave the request open; close() or the client's own timeout ends it.
  if (fault.hang) return;
  const options = {
    signal,
    extraHeaders: fault.headers,
    slowBodyMs: fault.slowBodyMs,
    headOnly: req.method === 'HEAD',
  };
  const replacement = replacementReply(fault);
  if (replacement) return sendReply(res, replacement, options);
  const reply = await normal();
  if (fault.truncatedJson) return sendReply(res, truncatedJsonReply(reply, fault.status ?? 200), options);
  return sendReply(res, reply, options);
}

function record(core: ServiceCore, entry: RecordedRequest): void {
  core.requests.push(entry);
  if (core.requests.length > MAX_RECORDED_REQUESTS)
    core.requests.splice(0, core.requests.length - MAX_RECORDED_REQUESTS);
}

async function route(core: ServiceCore, req: IncomingMessage, res: ServerResponse, signal: AbortSignal) {
  const url = new URL(req.url ?? '/', 'http://reference.invalid');
  const method = req.method ?? 'GET';
  const query = Object.fromEntries(url.searchParams);
  const match = matchRoute(method, url.pathname);
  if (match.kind !== 'route') {
    req.resume();
    const reply =
      match.kind === 'not-found'
        ? errorReply(404, { message: `Not found: ${method} ${url.pathname}` })
        : errorReply(405, { message: `Method not allowed: ${method} ${url.pathname}` });
    return sendReply(res, reply, { signal });
  }
  core.counters[match.route] += 1;
  const routeName = match.route;
  res.once('close', () => {
    if (!res.writableFinished && !endedByService.has(res) && !core.closing.aborted)
      core.abandoned[routeName] += 1;
  });
  // The fault is claimed on arrival, so concurrent requests take queued faults in arrival order.
  const fault = core.faults.take(match.route);
  const body = await readRequestBody(req, match.route === 'transcriptions');
  const headers = flattenHeaders(req.headers);
  record(core, {
    route: match.route,
    method,
    path: url.pathname,
    query,
    headers,
    body: recordedBody(body),
    receivedAt: Date.now(),
  });
  const context: RouteContext = {
    route: match.route,
    params: match.params,
    query,
    headers,
    body,
    state: core.state,
    signal,
  };
  const normal = () => normalReply(core, context);
  if (fault) return respondWithFault(req, res, fault, normal, signal);
  return sendReply(res, await normal(), { signal, headOnly: method === 'HEAD' });
}

export async function handleRequest(
  core: ServiceCore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const requestAbort = new AbortController();
  const abort = () => requestAbort.abort();
  res.once('close', abort);
  core.closing.addEventListener('abort', abort, { once: true });
  res.once('close', () => core.closing.removeEventListener('abort', abort));
  try {
    await route(core, req, res, requestAbort.signal);
  } catch (error) {
    // The service never crashes on a request: an unexpected error becomes a 500 (or a dropped stream).
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const message = error instanceof Error ? error.message : 'Internal error';
    await sendReply(res, errorReply(500, { message }), { signal: requestAbort.signal }).catch(() =>
      res.destroy(),
    );
  }
}
