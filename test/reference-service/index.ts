// The reference service: a faithful local implementation of shared/service-contract.md on
// loopback, with fault injection and counters, for unit and end-to-end tests.
import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultQueue } from './faults.js';
import { handleRequest, type ServiceCore } from './pipeline.js';
import { ServiceState } from './state.js';
import {
  type RecordedRequest,
  type ReferenceService,
  type ReferenceServiceOptions,
  ROUTE_NAMES,
  type RouteName,
} from './types.js';

export { synthesizeAudio } from './routes-speech.js';
export type {
  Fault,
  ModelAnswer,
  ModelEntry,
  ModelListKind,
  ModelQuestion,
  RecordedFile,
  RecordedRequest,
  ReferenceService,
  ReferenceServiceOptions,
  ResponseStreamCounts,
  RouteName,
  VideoJob,
  VideoJobTiming,
  WebModelEntry,
} from './types.js';
export { ROUTE_NAMES } from './types.js';
export { CLIP, CLIP_SECONDS, videoFileBytes, videoFileSha256 } from './video-files.js';

export const DEFAULT_API_KEY = 'ref-test-key';

function zeroCounters(): Record<RouteName, number> {
  return Object.fromEntries(ROUTE_NAMES.map((name) => [name, 0])) as Record<RouteName, number>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startReferenceService(
  options: ReferenceServiceOptions = {},
): Promise<ReferenceService> {
  const host = options.host ?? '127.0.0.1';
  const apiKey = options.apiKey ?? DEFAULT_API_KEY;
  const closing = new AbortController();
  // Every open request listens for close(); many concurrent requests are normal, not a leak.
  setMaxListeners(0, closing.signal);
  const core: ServiceCore = {
    state: new ServiceState(options.webModels ?? true),
    faults: new FaultQueue(),
    counters: zeroCounters(),
    abandoned: zeroCounters(),
    requests: [] as RecordedRequest[],
    apiKey,
    closing: closing.signal,
  };
  const server = createServer((req, res) => {
    void handleRequest(core, req, res);
  });
  // A malformed request line or header must not take the service down.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  const address = await listen(server, options.port ?? 0, host);
  const url = `http://${urlHost(host)}:${address.port}`;
  core.state.url = url;

  const resetCounters = () => {
    // In place: tests may hold on to `counters` and `requests`.
    for (const name of ROUTE_NAMES) {
      core.counters[name] = 0;
      core.abandoned[name] = 0;
    }
    core.requests.length = 0;
    core.state.responseStreams.completed = 0;
    core.state.responseStreams.cut = 0;
  };
  let closed: Promise<void> | null = null;
  return {
    url,
    apiKey,
    counters: core.counters,
    abandoned: core.abandoned,
    requests: core.requests,
    videoJobs: core.state.videoJobs,
    responseStreams: core.state.responseStreams,
    inject: (route, fault) => core.faults.inject(route, fault),
    clearFaults: () => core.faults.clear(),
    resetCounters,
    reset: () => {
      core.faults.clear();
      resetCounters();
      core.state.restoreDefaults();
    },
    setWebModels: (list) => core.state.setWebModels(list),
    setModelList: (kind, list) => core.state.setModelList(kind, list),
    setVideoTiming: (timing) => core.state.setVideoTiming(timing),
    setModelAnswer: (answer) => {
      core.state.modelAnswer = answer;
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        // Hanging and streaming requests would otherwise keep close() waiting forever.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
