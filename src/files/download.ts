// Downloads a URL given by the agent into a private temporary directory, streamed and
// size-limited. The gateway key never goes along (the URL came from the agent, so it could point
// at any route), and hosts other than the gateway are reached only on public addresses, on
// every redirect hop (see gateway/url-guard.ts).

import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { guardedBody } from '../gateway/body-errors.js';
import { type ServiceClient, UNRESOLVED_CODES } from '../gateway/client.js';
import { ServiceError } from '../gateway/errors.js';
import { UserError } from '../lib/user-error.js';
import { byteLimiter } from './byte-limit.js';
import { removeOnExit } from './exit-cleanup.js';
import { formatBytes } from './files.js';

export interface TempDownload {
  path: string;
  size: number;
  /** The URL after redirects. */
  finalUrl: string;
  /** Removes the temporary directory (always call it). */
  cleanup(): Promise<void>;
}

export async function downloadToTemp(
  url: string,
  client: ServiceClient,
  maxBytes: number,
  signal: AbortSignal,
  onBytes?: (bytes: number) => void,
): Promise<TempDownload> {
  // client.download follows redirects itself, checking every hop's destination.
  const res = await client.download(url, signal, { sendKey: false }).catch((error: unknown) => {
    throw downloadError(url, error);
  });
  const finalUrl = res.url ?? url;
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    void res.body.dump().catch(() => undefined);
    throw new UserError(tooBig(url, formatBytes(declared), maxBytes));
  }
  const dir = await mkdtemp(join(tmpdir(), 'gateway-tools-audio-'));
  const forget = removeOnExit(dir);
  const cleanup = async () => {
    forget();
    await rm(dir, { recursive: true, force: true });
  };
  const path = join(dir, 'download');
  const limiter = byteLimiter(
    maxBytes,
    () => new UserError(tooBig(url, `over ${formatBytes(maxBytes)}`, maxBytes)),
    onBytes,
  );
  try {
    const body = guardedBody(res.body, 'the file', client.timeoutMs, (t) => client.scrub(t), signal);
    await pipeline(body, limiter, createWriteStream(path), { signal });
  } catch (error) {
    await cleanup();
    throw error instanceof UserError || signal.aborted ? error : downloadError(finalUrl, error);
  }
  if (limiter.bytes === 0) {
    await cleanup();
    throw new UserError(`${url} answered with an empty body: there is no audio to transcribe.`);
  }
  return { path, size: limiter.bytes, finalUrl, cleanup };
}

function tooBig(url: string, size: string, maxBytes: number): string {
  return (
    `${url} is ${size}; the upload limit is ${formatBytes(maxBytes)}. ` +
    'Use a shorter recording or raise GATEWAY_MAX_UPLOAD_MB.'
  );
}

/** A message about the host at the URL, not "the service" (the client's wording for the gateway). */
function downloadError(url: string, error: unknown): Error {
  if (!(error instanceof ServiceError)) return error instanceof Error ? error : new Error(String(error));
  if (error.kind === 'aborted') return error;
  if (error.kind === 'blocked') return new UserError(`Could not download ${url}: ${error.describe()}`);
  // The connection's code is named, except a name that does not resolve at a host other than the
  // gateway: for that one the sentence says only "the connection failed".
  const elsewhereUnresolved = error.host !== undefined && UNRESOLVED_CODES.has(error.code ?? '');
  const code = elsewhereUnresolved ? undefined : error.code;
  const why =
    error.kind === 'http'
      ? `the host answered HTTP ${error.status}`
      : error.kind === 'timeout'
        ? 'the host did not answer in time'
        : error.kind === 'malformed'
          ? // A redirect to file:, data:, nowhere, or too many hops: the connection itself was fine.
            error.message.replace(/^The download of \S+ /, 'it ')
          : `the connection failed${code ? ` (${code})` : ''}`;
  return new UserError(
    `Could not download ${url}: ${why}. Check that the URL is reachable without a login, or save the file under the input roots and pass file_path.`,
  );
}
